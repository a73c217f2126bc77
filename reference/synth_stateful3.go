package reference

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/orchard-llm/orchard/f16"
	"github.com/orchard-llm/orchard/sidecars"
)

// S3Subfolder is where the published stateful repository keeps its bundle.
const S3Subfolder = "gemma4_e2b_stateful_chunks"

// stateful3 writes the stateful 3-chunk layout (stateful-3chunk doc §0):
// model_config.json, chunk_{1,2,3} with infer and prefill_b8, int8 tables
// with fp16 scales, the .npy RoPE tables and hf_model/. The token_id
// variant sits in a subfolder as published; the logits variant (cardbud)
// at the top.
func (s *synth) stateful3(logits bool) error {
	g := &s.g
	if !logits {
		s.dir = filepath.Join(s.o.Out, S3Subfolder)
	}
	fs := g.FirstShared()
	b1, b2 := fs/2, fs+(g.Layers-fs)/2
	if s.o.Preset == "e2b" {
		b1, b2 = 8, 25 // as published
	}
	if g.StoreLayer(Sliding) < b1 || g.StoreLayer(Full) < b1 {
		return fmt.Errorf("preset puts a KV producer in chunk_1")
	}
	bounds := [][2]int{{0, b1}, {b1, b2}, {b2, g.Layers}}
	def, T := s.o.Form.S3Default, s.o.Form.S3Batch
	if def == "" {
		def = "infer"
	}
	if T == 0 {
		T = 8
	}
	fns := map[string]Function{def: {Role: RoleRows, N: 1}}
	if T > 0 {
		fns[fmt.Sprintf("prefill_b%d", T)] = Function{Role: RoleRows, N: T}
	}
	kinds := []string{KindS3Chunk1, KindS3Chunk2, KindS3Chunk3}
	models := [][]string{
		{"per_layer_model_projection.weight", "per_layer_projection_norm.weight"},
		nil,
		{"embed_tokens.weight", "norm.weight"},
	}
	for i, b := range bounds {
		t := Twin{Kind: kinds[i], Layers: b, Functions: fns, DefaultFunction: def, Logits: logits && i == 2, LogitsF32: logits && i == 2 && s.o.Form.LogitsF32}
		if err := s.twin(fmt.Sprintf("chunk_%d.mlmodelc", i+1), t, models[i]); err != nil {
			return err
		}
	}
	LP := g.Layers * g.PLEDim
	if err := s.int8Table("embed_tokens_q8.bin", "embed_tokens_scales.bin", s.w.Embed, g.Hidden, sidecars.ScaleF16); err != nil {
		return err
	}
	if err := s.int8Table("embed_tokens_per_layer_q8.bin", "embed_tokens_per_layer_scales.bin", s.ple, LP, sidecars.ScaleF16); err != nil {
		return err
	}
	if !s.o.NoWeights { // optional and unused by the engine; 27 MB at E2B size
		proj := make([]uint16, len(s.w.PLModelProj))
		for i, v := range s.w.PLModelProj {
			proj[i] = f16.FromF32(v)
		}
		if err := sidecars.WriteF16(filepath.Join(s.dir, "per_layer_projection.bin"), proj); err != nil {
			return err
		}
	}
	norm := make([]byte, 4*g.PLEDim)
	for i, v := range s.w.PLProjNorm {
		b := math.Float32bits(v)
		norm[4*i], norm[4*i+1], norm[4*i+2], norm[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	if err := writeFile(filepath.Join(s.dir, "per_layer_norm_weight.bin"), norm); err != nil {
		return err
	}
	// The repository's tables: every pair rotates on full layers too (G4).
	rows := 2 * g.Context
	for _, t := range []struct {
		name  string
		theta float64
		d     int
	}{{"sliding", g.ThetaSliding, g.HeadDim}, {"full", g.ThetaFull, g.GlobalHeadDim}} {
		cos, sin := sidecars.RopeTableF32(invFreq(t.theta, t.d, 1), rows)
		if err := sidecars.WriteNPY(filepath.Join(s.dir, "cos_"+t.name+".npy"), rows, t.d, cos); err != nil {
			return err
		}
		if err := sidecars.WriteNPY(filepath.Join(s.dir, "sin_"+t.name+".npy"), rows, t.d, sin); err != nil {
			return err
		}
	}
	cfg := map[string]any{
		"model_name": fmt.Sprintf("synthetic-%s-%s-seed%d", s.o.Family, s.o.Preset, s.o.Seed), "architecture": "gemma4",
		"hidden_size": g.Hidden, "num_hidden_layers": g.Layers, "context_length": g.Context,
		"sliding_window": g.SlidingWindow, "vocab_size": g.Vocab, "bos_token_id": 2, "eos_token_id": 1,
		"per_layer_dim": g.PLEDim, "embed_scale": math.Sqrt(float64(g.Hidden)),
		"per_layer_model_projection_scale": 1 / math.Sqrt(float64(g.Hidden)),
		"per_layer_input_scale":            1 / math.Sqrt2, "per_layer_embed_scale": math.Sqrt(float64(g.PLEDim)),
		"layer_types": g.LayerTypes, "num_kv_shared_layers": g.KVShared,
		"num_attention_heads": g.Heads, "num_key_value_heads": g.KVHeads, "head_dim": g.HeadDim,
		"global_head_dim": g.GlobalHeadDim, "rms_norm_eps": g.Eps, "final_logit_softcapping": g.Softcap,
		"quantization": "none", "compute_units": "CPU_AND_NE", "chunk_bounds": bounds,
	}
	if err := writeJSON(filepath.Join(s.dir, "model_config.json"), cfg); err != nil {
		return err
	}
	return s.common(filepath.Join(s.dir, "hf_model"))
}
