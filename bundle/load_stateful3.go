package bundle

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/orchard-llm/orchard/sidecars"
)

// Stateful3 sidecar file names (stateful-3chunk doc §0).
const (
	S3Embed       = "embed_tokens_q8.bin"
	S3EmbedScales = "embed_tokens_scales.bin"
	S3PLE         = "embed_tokens_per_layer_q8.bin"
	S3PLEScales   = "embed_tokens_per_layer_scales.bin"
	S3PLEProj     = "per_layer_projection.bin"
	S3PLENorm     = "per_layer_norm_weight.bin"
	S3CosSliding  = "cos_sliding.npy"
	S3SinSliding  = "sin_sliding.npy"
	S3CosFull     = "cos_full.npy"
	S3SinFull     = "sin_full.npy"
)

// loadS3 parses model_config.json, reads the chunk contracts from their
// metadata where present (they, not the JSON, define ctx, W and the KV
// heads) and checks every sidecar.
func (b *Bundle) loadS3(v *validator) {
	data := v.readConfig("model_config.json")
	if data == nil {
		return
	}
	var c S3Config
	extra, notes, err := decodeKeeping(data, &c)
	if err != nil {
		v.fail("model_config.json: %v", err)
		return
	}
	for _, n := range notes {
		v.note("%s: %s", "model_config.json", n)
	}
	c.Extra = extra
	b.S3 = &c
	g := &b.Geometry
	g.Layers, g.Hidden, g.Context, g.SlidingWindow, g.PLEDim, g.Vocab = c.Layers(), c.Hidden(), c.Context(), c.Window(), c.PLEDim(), c.Vocab()
	g.KVHeads = intOr(c.NumKeyValueHeads, 1)
	g.Heads = intOr(c.NumAttentionHeads, 0)
	g.HeadDim, g.GlobalHeadDim = intOr(c.HeadDim, 256), intOr(c.GlobalHeadDim, 512)
	g.LayerTypes = c.LayerTypes
	if c.NumKVSharedLayers != nil {
		g.FirstShared = g.Layers - *c.NumKVSharedLayers
	}
	g.ChunkBounds = c.ChunkBounds

	// Functions and shapes come from each chunk's metadata.json where it
	// says anything: a hint before loading. The engine loads the default
	// function for T=1 and probes the batched ones (prefill_b16/b8/b4).
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("chunk_%d", i)
		ch := Chunk{Name: name, Path: chunkPath(b.Dir, name)}
		if len(c.ChunkBounds) == 3 {
			ch.Layers = c.ChunkBounds[i-1]
		}
		if v.dir(ch.Path, "chunk") {
			m, err := ReadModelMeta(ch.Path)
			switch {
			case err != nil && !os.IsNotExist(err):
				v.note("%s: metadata.json unreadable (%v); shapes are read when the model loads", name, err)
			case err == nil:
				ch.Functions = m.Functions
				if i == 1 {
					b.s3FromMeta(v, m.Schema(""))
				}
				if i == 3 {
					b.s3Head(v, m.Schema(""))
				}
			}
		}
		b.Chunks = append(b.Chunks, ch)
	}

	V, H, LP := int64(g.Vocab), int64(g.Hidden), int64(g.Layers*g.PLEDim)
	v.file(S3Embed, fmt.Sprintf("embedding int8 [%d×%d]", V, H), V*H)
	v.file(S3EmbedScales, fmt.Sprintf("embedding scales f16 [%d]", V), V*2)
	v.file(S3PLE, fmt.Sprintf("per-layer embedding int8 [%d×%d]", V, LP), V*LP)
	v.file(S3PLEScales, fmt.Sprintf("per-layer embedding scales f16 [%d]", V), V*2)
	if exists(filepath.Join(b.Dir, S3PLEProj)) {
		v.file(S3PLEProj, "per-layer projection fp16 (unused)", LP*H*2)
	}
	if exists(filepath.Join(b.Dir, S3PLENorm)) {
		P := int64(g.PLEDim)
		v.fileAny(S3PLENorm, "per-layer norm weight fp32 or fp16 (unused)", P*4, P*2)
	}
	for _, t := range []struct {
		name string
		cols int
	}{{S3CosSliding, g.HeadDim}, {S3SinSliding, g.HeadDim}, {S3CosFull, g.GlobalHeadDim}, {S3SinFull, g.GlobalHeadDim}} {
		v.npy(t.name, t.cols, g.Context)
	}
	b.EOS = c.EOS()
	b.tokenizer(v, filepath.Join("hf_model", "tokenizer.json"), "tokenizer.json")
	b.hfConfig()
}

// s3FromMeta reads ctx, W, H, L·P and HKV from chunk_1's declared shapes
// (its default function) and fails when model_config.json disagrees (the
// engine crashed on such a mismatch once; G18). The engine checks the
// loaded model the same way.
func (b *Bundle) s3FromMeta(v *validator, m *FunctionMeta) {
	if m == nil {
		v.note("chunk_1: metadata.json does not describe the default function; shapes are read when the model loads")
		return
	}
	g := &b.Geometry
	check := func(what string, declared int, json *int, field *int) {
		if declared <= 0 {
			return
		}
		if json != nil && *json != declared {
			v.fail("model_config.json %s = %d, but chunk_1 declares %d", what, *json, declared)
		}
		*field = declared
	}
	last := func(name string) int {
		if f, ok := FindFeature(m.Inputs, name); ok && len(f.Shape) > 0 {
			return f.Shape[len(f.Shape)-1]
		}
		return 0
	}
	check("context_length", last("causal_mask_full"), b.S3.ContextLength, &g.Context)
	check("sliding_window", last("causal_mask_sliding"), b.S3.SlidingWindow, &g.SlidingWindow)
	check("hidden_size", last("hidden_states"), b.S3.HiddenSize, &g.Hidden)
	if lp := last("per_layer_raw"); lp > 0 && g.Layers > 0 && lp != g.Layers*g.PLEDim {
		v.fail("model_config.json layers×per_layer_dim = %d, but chunk_1 declares per_layer_raw width %d", g.Layers*g.PLEDim, lp)
	}
	if s, ok := FindFeature(m.States, "kv_cache_sliding"); ok && len(s.Shape) == 4 {
		g.KVHeads = s.Shape[1]
	}
	if d := last("cos_s"); d > 0 {
		g.HeadDim = d
	}
	if d := last("cos_f"); d > 0 {
		g.GlobalHeadDim = d
	}
}

// s3Head reads chunk_3's head kind from its metadata: token_id or logits.
// A file that says neither is noted; the loaded model decides.
func (b *Bundle) s3Head(v *validator, m *FunctionMeta) {
	if m == nil {
		v.note("chunk_3: metadata.json does not describe the default function; token_id or logits is read when the model loads")
		return
	}
	_, tok := FindFeature(m.Outputs, "token_id")
	_, logits := FindFeature(m.Outputs, "logits")
	if !tok && !logits {
		v.note("chunk_3: metadata.json declares neither token_id nor logits (outputs %v); the loaded model decides", names(m.Outputs))
	}
	if logits {
		if f, _ := FindFeature(m.Outputs, "logits"); len(f.Shape) > 0 && f.Shape[len(f.Shape)-1] != b.Geometry.Vocab {
			v.note("chunk_3: metadata.json gives logits width %d, vocab_size is %d; the loaded model decides", f.Shape[len(f.Shape)-1], b.Geometry.Vocab)
		}
	}
}

// npy checks a RoPE table: a valid header, fp16, cols wide and at least
// ctx rows (past the end the published engine silently feeds zeros).
func (v *validator) npy(name string, cols, ctx int) {
	p := filepath.Join(v.b.Dir, name)
	f := File{Path: name, Role: fmt.Sprintf("RoPE table fp16 [≥%d×%d]", ctx, cols)}
	defer func() { v.b.Files = append(v.b.Files, f) }()
	if st, err := os.Stat(p); err == nil {
		f.Size = st.Size()
	}
	t, err := sidecars.OpenNPY(p)
	if err != nil {
		f.Status = "invalid"
		if os.IsNotExist(err) || !exists(p) {
			f.Status = "missing"
		}
		v.fail("%s: %v", name, err)
		return
	}
	defer t.Close()
	f.Status = "ok"
	if t.Shape[1] != cols || t.Shape[0] < ctx {
		f.Status = "wrong shape"
		f.Detail = fmt.Sprintf("shape %v", t.Shape)
		v.fail("%s: shape %v, want at least %d rows of %d", name, t.Shape, ctx, cols)
	}
}

func names(fs []FeatureMeta) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}
