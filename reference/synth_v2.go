package reference

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/orchard-llm/orchard/sidecars"
)

// v2 writes a coreml-stateful-chain-v2 bundle (okayuji doc §1.3):
// convert_config_v2int4_int8.json, int8 sidecars whose scales already hold
// √H and √P (the host applies no multiplier), four chunks of which the
// own-KV ones are stateful, and one lm head for every S.
func (s *synth) v2() error {
	g := &s.g
	maxS := 16
	if s.o.Preset != "tiny" {
		maxS = 128
	}
	q := g.Layers / 4
	bounds := [][2]int{{0, q}, {q, 2 * q}, {2 * q, 3 * q}, {3 * q, g.Layers}}
	if s.o.Preset == "e4b" {
		bounds = [][2]int{{0, 12}, {12, 24}, {24, 36}, {36, 42}} // as published
	}
	var chunks []string
	fns := map[string]Function{"main": {Role: RoleRange}}
	for _, b := range bounds {
		name := fmt.Sprintf("chunk_%d_%d", b[0], b[1])
		chunks = append(chunks, name)
		t := Twin{Kind: KindV2Chunk, Layers: b, Functions: fns, DefaultFunction: "main", MaxS: maxS, StateRank4: s.o.Form.V2StateRank4}
		if err := s.twin(name+".mlmodelc", t, []string{"per_layer_model_projection.weight", "per_layer_projection_norm.weight"}); err != nil {
			return err
		}
	}
	if err := s.twin("lmhead.mlmodelc", Twin{Kind: KindV2Head, Functions: fns, DefaultFunction: "main", MaxS: maxS},
		[]string{"embed_tokens.weight", "norm.weight"}); err != nil {
		return err
	}
	LP := g.Layers * g.PLEDim
	embed := scaled(s.w.Embed, math.Sqrt(float64(g.Hidden)))
	if err := s.int8Table("embed_int8.bin", "embed_scale.bin", embed, g.Hidden, sidecars.ScaleF32); err != nil {
		return err
	}
	if err := s.int8Table("ple_int8.bin", "ple_scale.bin", scaled(s.ple, math.Sqrt(float64(g.PLEDim))), LP, sidecars.ScaleF32); err != nil {
		return err
	}
	cfg := map[string]any{
		"H": g.Hidden, "HD": g.HeadDim, "GHD": g.GlobalHeadDim, "NH": g.Heads, "NKV": g.KVHeads,
		"NLAYERS": g.Layers, "SLIDING": g.SlidingWindow, "SOFTCAP": g.Softcap, "NEG": -65504.0,
		"CTX": g.Context, "PLE": g.PLEDim, "S_range": map[string]int{"lower": 1, "upper": maxS, "default": 1},
		"chunk_bounds": bounds, "layer_types": g.LayerTypes,
		"store_layers": map[string]int{Sliding: g.StoreLayer(Sliding), Full: g.StoreLayer(Full)},
		"chunks":       chunks, "lmhead": "lmhead",
		"hostio": map[string]any{
			"inv_slide": invFreq(g.ThetaSliding, g.HeadDim, 1),
			"inv_full":  invFreq(g.ThetaFull, g.GlobalHeadDim, g.PartialFull),
		},
		"sidecars": map[string]any{
			"embed": map[string]any{"file": "embed_int8.bin", "shape": []int{g.Vocab, g.Hidden}, "dtype": "int8", "scale": "embed_scale.bin"},
			"ple":   map[string]any{"file": "ple_int8.bin", "shape": []int{g.Vocab, LP}, "dtype": "int8", "scale": "ple_scale.bin"},
		},
		"eos_ids":           []int{1, 106},
		"orchard_synthetic": map[string]any{"preset": s.o.Preset, "seed": s.o.Seed},
	}
	if s.o.Form.V2NoStoreLayers {
		delete(cfg, "store_layers")
	}
	if err := writeJSON(filepath.Join(s.dir, "convert_config_v2int4_int8.json"), cfg); err != nil {
		return err
	}
	// As published for E4B: no prompt strings, no computeUnits.
	manifest := map[string]any{
		"name": fmt.Sprintf("synthetic-v2-%s-seed%d", s.o.Preset, s.o.Seed), "architecture": "gemma4",
		"contextLength": g.Context, "format": "coreml-stateful-chain-v2", "modelRelativePath": ".",
		"tokenizerRelativePath": "tokenizer.json",
	}
	if err := writeJSON(filepath.Join(s.dir, "manifest.json"), manifest); err != nil {
		return err
	}
	if err := s.encoders(false); err != nil {
		return err
	}
	return s.common(s.dir)
}
