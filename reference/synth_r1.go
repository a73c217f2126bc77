package reference

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/orchard-llm/orchard/sidecars"
)

// r1 writes a coreml-corellm-r1 bundle (okayuji doc §1.2): manifest.json,
// convert_config.json, int8 sidecars with f32 scales (√H and √P applied at
// run time), three multifunction chunks, lmhead and lmhead_v4.
func (s *synth) r1() error {
	g := &s.g
	fs := g.FirstShared()
	bounds := [][2]int{{0, fs / 2}, {fs / 2, fs}, {fs, g.Layers}}
	plain, widths := 32, []int{32, 16, 8}
	if s.o.Preset != "tiny" {
		plain, widths = 512, []int{512, 64, 16}
	}
	var chunks []string
	fns := map[string]Function{"decode": {Role: RoleDecode}, "prefill4": {Role: RoleOffset, N: 4}}
	prefillFns := map[string]string{}
	for _, n := range widths {
		name := fmt.Sprintf("prefill%d", n)
		prefillFns[strconv.Itoa(n)] = name
		role := RoleOffset
		if n == plain {
			role = RolePlain
		}
		fns[name] = Function{Role: role, N: n}
	}
	if n := s.o.Form.R1ExtraWidth; n > 1 {
		fns[fmt.Sprintf("prefill%d", n)] = Function{Role: RoleOffset, N: n}
	}
	for _, b := range bounds {
		name := fmt.Sprintf("chunk_%d_%d_pal6", b[0], b[1])
		chunks = append(chunks, name)
		t := Twin{Kind: KindR1Chunk, Layers: b, Functions: fns, DefaultFunction: "decode"}
		if err := s.twin(name+".mlmodelc", t, []string{"per_layer_model_projection.weight", "per_layer_projection_norm.weight"}); err != nil {
			return err
		}
	}
	for _, h := range []struct {
		name string
		n    int
	}{{"lmhead", 1}, {"lmhead_v4", 4}} {
		t := Twin{Kind: KindR1Head, Functions: map[string]Function{"main": {Role: RoleRows, N: h.n}}, DefaultFunction: "main"}
		if err := s.twin(h.name+".mlmodelc", t, []string{"embed_tokens.weight", "norm.weight"}); err != nil {
			return err
		}
	}
	LP := g.Layers * g.PLEDim
	if err := s.int8Table("embed_int8.bin", "embed_scale_f32.bin", s.w.Embed, g.Hidden, sidecars.ScaleF32); err != nil {
		return err
	}
	if err := s.int8Table("ple_int8.bin", "ple_scale_f32.bin", s.ple, LP, sidecars.ScaleF32); err != nil {
		return err
	}
	sliding, full := Sliding, Full
	cfg := map[string]any{
		"num_layers": g.Layers, "hidden": g.Hidden, "ple_dim": g.PLEDim, "first_shared": fs,
		"store_layers": map[string]int{sliding: g.StoreLayer(sliding), full: g.StoreLayer(full)},
		"chunk_bounds": bounds, "eos_token_ids": []int{1, 106},
		"hostio": map[string]any{
			"CTX": g.Context, "HD": g.HeadDim, "GHD": g.GlobalHeadDim, "SLIDING": g.SlidingWindow, "NEG": -65504.0,
			"layer_types": g.LayerTypes,
			"inv_slide":   invFreq(g.ThetaSliding, g.HeadDim, 1),
			"inv_full":    invFreq(g.ThetaFull, g.GlobalHeadDim, g.PartialFull),
		},
		"corellm": map[string]any{
			"chunks": chunks, "lmhead": "lmhead", "decode_function": "decode",
			"prefill": s.r1Prefill(widths, prefillFns, plain),
			"verify": map[string]any{"widths": []int{4}, "functions": map[string]string{"4": "prefill4"},
				"lmhead_batched": map[string]string{"4": "lmhead_v4"}},
			"sidecars": map[string]any{
				"default_stage": "int8",
				"int8": map[string]any{
					"embed": map[string]any{"file": "embed_int8.bin", "shape": []int{g.Vocab, g.Hidden}, "scale": "embed_scale_f32.bin", "runtime_scale_sqrt": g.Hidden},
					"ple":   map[string]any{"file": "ple_int8.bin", "shape": []int{g.Vocab, LP}, "scale": "ple_scale_f32.bin", "runtime_scale_sqrt": g.PLEDim},
				},
			},
		},
		"orchard_synthetic": map[string]any{"preset": s.o.Preset, "seed": s.o.Seed},
	}
	if err := writeJSON(filepath.Join(s.dir, "convert_config.json"), cfg); err != nil {
		return err
	}
	prefix, suffix := "<|turn>user\n", "<turn|>\n<|turn>model\n"
	manifest := map[string]any{
		"name": fmt.Sprintf("synthetic-r1-%s-seed%d", s.o.Preset, s.o.Seed), "architecture": "gemma4",
		"contextLength": g.Context, "format": "coreml-corellm-r1", "modelRelativePath": ".",
		"tokenizerRelativePath": "tokenizer.json", "promptPrefix": prefix, "promptSuffix": suffix,
		"sidecarStage": "int8", "computeUnits": "all", "eos": []int{1, 106},
	}
	if err := writeJSON(filepath.Join(s.dir, "manifest.json"), manifest); err != nil {
		return err
	}
	if err := s.encoders(true); err != nil {
		return err
	}
	return s.common(s.dir)
}

// r1Prefill is corellm.prefill in the bundle's form: without the function
// names (R1UnnamedWidths), or listing a width no chunk has (R1MissingWidth).
func (s *synth) r1Prefill(widths []int, fns map[string]string, plain int) map[string]any {
	p := map[string]any{"N": widths, "functions": fns, "plain_N": plain}
	if n := s.o.Form.R1MissingWidth; n > 0 {
		p["N"] = append(append([]int{}, widths...), n)
	}
	if s.o.Form.R1UnnamedWidths {
		delete(p, "functions")
	}
	return p
}
