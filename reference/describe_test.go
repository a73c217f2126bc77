package reference

import (
	"fmt"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
)

// The stateful 3-chunk state and tensor shapes of the reference docs'
// table (stateful-3chunk doc §3), for E2B and E4B geometry.
func TestStateful3ShapesE2BE4B(t *testing.T) {
	fns := map[string]Function{"infer": {Role: RoleRows, N: 1}, "prefill_b8": {Role: RoleRows, N: 8}}
	type want map[string][]int
	cases := []struct {
		name   string
		g      Geometry
		kind   string
		layers [2]int
		fn     string
		inputs want
		states want
		outs   want
	}{
		{"E2B chunk_1", E2B(), KindS3Chunk1, [2]int{0, 8}, "infer",
			want{"hidden_states": {1, 1, 1536}, "causal_mask_full": {1, 1, 1, 2048}, "causal_mask_sliding": {1, 1, 1, 512},
				"per_layer_raw": {1, 1, 8960}, "cos_s": {1, 1, 1, 256}, "cos_f": {1, 1, 1, 512}, "current_pos": {1}, "ring_pos": {1}},
			want{"kv_cache_sliding": {14, 1, 512, 512}, "kv_cache_full": {2, 1, 2048, 512}},
			want{"hidden_states_out": {1, 1, 1536}, "per_layer_combined_out": {1, 1, 8960}}},
		{"E2B chunk_2 prefill_b8", E2B(), KindS3Chunk2, [2]int{8, 25}, "prefill_b8",
			want{"hidden_states": {1, 8, 1536}, "per_layer_combined": {1, 8, 8960}, "causal_mask_full": {1, 1, 8, 2048}},
			want{"kv_cache_sliding": {10, 1, 512, 512}, "kv_cache_full": {4, 1, 2048, 512}},
			want{"kv13_k": {1, 1, 512, 256}, "kv13_v": {1, 1, 512, 256}, "kv14_k": {1, 1, 2048, 512}, "kv14_v": {1, 1, 2048, 512}}},
		{"E2B chunk_3", E2B(), KindS3Chunk3, [2]int{25, 35}, "infer",
			want{"kv13_k": {1, 1, 512, 256}, "kv14_v": {1, 1, 2048, 512}},
			want{},
			want{"token_id": {1}, "token_logit": {1}, "hidden_normed": {1, 1, 1536}}},
		{"E4B chunk_1", E4B(), KindS3Chunk1, [2]int{0, 12}, "infer",
			want{"hidden_states": {1, 1, 2560}, "per_layer_raw": {1, 1, 10752}},
			want{"kv_cache_sliding": {20, 2, 512, 512}, "kv_cache_full": {4, 2, 2048, 512}}, want{}},
		{"E4B chunk_2", E4B(), KindS3Chunk2, [2]int{12, 33}, "infer",
			want{},
			want{"kv_cache_sliding": {20, 2, 512, 512}, "kv_cache_full": {4, 2, 2048, 512}}, want{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tw := &Twin{Kind: c.kind, Layers: c.layers, Geometry: c.g, Functions: fns}
			d, err := Describe(tw, c.fn)
			if err != nil {
				t.Fatal(err)
			}
			check := func(kind string, got map[string]coreml.TensorSpec, w want) {
				for name, shape := range w {
					s, ok := got[name]
					if !ok {
						t.Errorf("%s %s missing", kind, name)
						continue
					}
					if fmt.Sprint(s.Shape) != fmt.Sprint(shape) {
						t.Errorf("%s %s: shape %v, want %v", kind, name, s.Shape, shape)
					}
				}
			}
			check("input", d.Inputs, c.inputs)
			check("state", d.States, c.states)
			check("output", d.Outputs, c.outs)
			if c.kind != KindS3Chunk3 && len(d.States) != 2 {
				t.Errorf("%d states, want kv_cache_sliding and kv_cache_full", len(d.States))
			}
			if d.Inputs["current_pos"].DType != coreml.Int32 && c.kind != KindS3Chunk3 {
				t.Errorf("current_pos dtype %v, want int32", d.Inputs["current_pos"].DType)
			}
		})
	}
	// E2B total state: 24 MiB (§3.4).
	total := 0
	for _, c := range []struct {
		kind   string
		layers [2]int
	}{{KindS3Chunk1, [2]int{0, 8}}, {KindS3Chunk2, [2]int{8, 25}}} {
		d, _ := Describe(&Twin{Kind: c.kind, Layers: c.layers, Geometry: E2B(), Functions: fns}, "infer")
		for _, s := range d.States {
			total += coreml.NumElements(s.Shape) * 2
		}
	}
	if total != 25165824 {
		t.Errorf("E2B state bytes %d, want 25165824", total)
	}
}

// r1 decode and prefill tensors at E2B geometry (okayuji doc §2.2).
func TestR1ShapesE2B(t *testing.T) {
	g := E2B()
	fns := map[string]Function{"decode": {Role: RoleDecode}, "prefill512": {Role: RolePlain, N: 512},
		"prefill64": {Role: RoleOffset, N: 64}, "prefill4": {Role: RoleOffset, N: 4}}
	own := &Twin{Kind: KindR1Chunk, Layers: [2]int{0, 8}, Geometry: g, Functions: fns}
	shared := &Twin{Kind: KindR1Chunk, Layers: [2]int{15, 35}, Geometry: g, Functions: fns}
	cases := []struct {
		tw    *Twin
		fn    string
		name  string
		shape []int
	}{
		{own, "decode", "hidden_in", []int{1536}},
		{own, "decode", "tokid", []int{35, 256}},
		{own, "decode", "onehot", []int{2048}},
		{own, "decode", "k_0_in", []int{1, 2048, 256}},
		{own, "decode", "k_4_in", []int{1, 2048, 512}},
		{own, "decode", "mask_s", []int{2048}},
		{own, "prefill64", "tokid", []int{64, 35, 256}},
		{own, "prefill64", "onehot", []int{64, 2048}},
		{own, "prefill512", "mask_f", []int{512, 512}},
		{own, "prefill4", "cos_f", []int{4, 512}},
		{shared, "decode", "sks", []int{1, 2048, 256}},
		{shared, "decode", "skf", []int{1, 2048, 512}},
		{shared, "prefill512", "sks", []int{1, 512, 256}},
	}
	for _, c := range cases {
		d, err := Describe(c.tw, c.fn)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Inputs[c.name].Shape; fmt.Sprint(got) != fmt.Sprint(c.shape) {
			t.Errorf("%v %s %s: %v, want %v", c.tw.Layers, c.fn, c.name, got, c.shape)
		}
	}
	d, _ := Describe(own, "prefill64")
	if got := d.Outputs["k_4_out"].Shape; fmt.Sprint(got) != "[1 64 512]" {
		t.Errorf("offset prefill returns only the block's rows: k_4_out %v, want [1 64 512]", got)
	}
	d, _ = Describe(own, "decode")
	if got := d.Outputs["k_4_out"].Shape; fmt.Sprint(got) != "[1 2048 512]" {
		t.Errorf("decode returns the whole cache: k_4_out %v, want [1 2048 512]", got)
	}
	if _, err := Describe(&Twin{Kind: KindR1Chunk, Layers: [2]int{10, 20}, Geometry: g, Functions: fns}, "decode"); err == nil {
		t.Error("a chunk straddling the first shared layer (15) was accepted")
	}
}

// v2 tensors at E4B geometry: S ranges 1…128 and stateful own chunks.
func TestV2ShapesE4B(t *testing.T) {
	g := E4B()
	fns := map[string]Function{"main": {Role: RoleRange}}
	d, err := Describe(&Twin{Kind: KindV2Chunk, Layers: [2]int{12, 24}, Geometry: g, Functions: fns, MaxS: 128}, "main")
	if err != nil {
		t.Fatal(err)
	}
	if s := d.Inputs["tokid"]; fmt.Sprint(s.Shape) != "[1 12 256]" || s.Ranges[0] != [2]int{1, 128} {
		t.Errorf("tokid %v ranges %v, want [S 12 256] with S in 1…128", s.Shape, s.Ranges)
	}
	if s := d.States["k_cache_23"]; fmt.Sprint(s.Shape) != "[2 2048 512]" {
		t.Errorf("k_cache_23 %v", s.Shape)
	}
	if _, ok := d.Outputs["k_22_out"]; !ok {
		t.Error("the chunk holding store layer 22 does not emit k_22_out")
	}
	d, _ = Describe(&Twin{Kind: KindV2Chunk, Layers: [2]int{24, 36}, Geometry: g, Functions: fns, MaxS: 128}, "main")
	if len(d.States) != 0 || d.Inputs["sks"].Shape == nil {
		t.Error("a shared-KV chunk must be stateless and read sks")
	}
}
