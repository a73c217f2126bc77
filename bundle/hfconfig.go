package bundle

import (
	"encoding/json"
	"path/filepath"
)

// hfConfig fills geometry the family configs do not carry (heads, vocab)
// from a Hugging Face config.json when the bundle ships one (root or
// hf_model/), in its text_config or flat form. It never overrides.
func (b *Bundle) hfConfig() {
	for _, rel := range []string{"config.json", filepath.Join("hf_model", "config.json")} {
		data, err := readConfigFile(filepath.Join(b.Dir, rel))
		if err != nil {
			continue
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil {
			continue
		}
		obj := data
		if text, ok := top["text_config"]; ok {
			obj = text
		}
		// Every key is optional here: one of the wrong type is read or
		// noted, never the reason the whole file is ignored.
		var t hfText
		_, notes, err := decodeKeeping(obj, &t)
		if err != nil {
			continue
		}
		for _, n := range notes {
			b.Notes = append(b.Notes, rel+": "+n)
		}
		g := &b.Geometry
		if g.Heads == 0 {
			g.Heads = t.Heads
		}
		if g.Vocab == 0 {
			g.Vocab = t.Vocab
		}
		if g.FirstShared == 0 && t.Layers > 0 && t.KVShared > 0 {
			g.FirstShared = t.Layers - t.KVShared
		}
		if len(g.LayerTypes) == 0 {
			g.LayerTypes = t.LayerTypes
		}
		return
	}
}

type hfText struct {
	Heads      int      `json:"num_attention_heads,omitempty"`
	Vocab      int      `json:"vocab_size,omitempty"`
	Layers     int      `json:"num_hidden_layers,omitempty"`
	KVShared   int      `json:"num_kv_shared_layers,omitempty"`
	LayerTypes []string `json:"layer_types,omitempty"`
}
