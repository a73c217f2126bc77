package reference

import (
	"bytes"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
)

// TestBatchRowsBitExact: a prefill_b8 call on chunk_1 gives, row for row,
// the same bits as eight infer calls, and leaves the same state bytes.
func TestBatchRowsBitExact(t *testing.T) {
	dir := t.TempDir()
	bdir, err := Synthesize(SynthOptions{Family: "stateful3", Preset: "tiny", Seed: 3, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	rt := New()
	path := bdir + "/chunk_1.mlmodelc"
	one, err := rt.Load(path, coreml.LoadOptions{Function: "infer"})
	if err != nil {
		t.Fatal(err)
	}
	eight, err := rt.Load(path, coreml.LoadOptions{Function: "prefill_b8"})
	if err != nil {
		t.Fatal(err)
	}
	d8 := eight.Description()
	in8 := coreml.Features{}
	for name, s := range d8.Inputs {
		in8[name] = coreml.NewTensor(s.Shape, s.DType)
		if s.DType == coreml.Float16 {
			u := in8[name].U16()
			for i := range u {
				u[i] = f16.FromF32(float32((i*7919)%199-99) / 64)
			}
		}
	}
	// Masks must be causal for the rows to be independent: position t sees slots ≤ t.
	T, ctx, W := 8, d8.Inputs["causal_mask_full"].Shape[3], d8.Inputs["causal_mask_sliding"].Shape[3]
	for r := range T {
		for s := range ctx {
			v := uint16(0)
			if s > r {
				v = 0xfbff
			}
			in8["causal_mask_full"].SetF16(r*ctx+s, v)
			if s < W {
				in8["causal_mask_sliding"].SetF16(r*W+s, v)
			}
		}
	}
	st8, _ := eight.NewState()
	out8, err := eight.Predict(in8, st8, nil)
	if err != nil {
		t.Fatal(err)
	}
	st1, _ := one.NewState()
	d1 := one.Description()
	for r := range T {
		in1 := coreml.Features{}
		for name, s := range d1.Inputs {
			t8 := in8[name]
			in1[name] = coreml.NewTensor(s.Shape, s.DType)
			switch name {
			case "current_pos", "ring_pos":
				in1[name].SetI32(0, int32(r))
			default:
				n := len(in1[name].Data)
				copy(in1[name].Data, t8.Data[r*n:(r+1)*n])
			}
		}
		out1, err := one.Predict(in1, st1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"hidden_states_out", "per_layer_combined_out"} {
			n := len(out1[name].Data)
			if !bytes.Equal(out1[name].Data, out8[name].Data[r*n:(r+1)*n]) {
				t.Fatalf("row %d of %s differs between T=1 and T=8", r, name)
			}
		}
	}
	for _, name := range []string{"kv_cache_sliding", "kv_cache_full"} {
		a, _ := st1.Read(name)
		b, _ := st8.Read(name)
		if !bytes.Equal(a.Data, b.Data) {
			t.Fatalf("state %s differs between T=1 and T=8", name)
		}
	}
}

// TestRingWriteRefused: a prefill_b8 write that would wrap the ring fails
// as the graph's slice_update does.
func TestRingWriteRefused(t *testing.T) {
	dir := t.TempDir()
	bdir, err := Synthesize(SynthOptions{Family: "stateful3", Preset: "tiny", Seed: 3, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New().Load(bdir+"/chunk_1.mlmodelc", coreml.LoadOptions{Function: "prefill_b8"})
	if err != nil {
		t.Fatal(err)
	}
	in := coreml.Features{}
	for name, s := range m.Description().Inputs {
		in[name] = coreml.NewTensor(s.Shape, s.DType)
	}
	in["ring_pos"].SetI32(0, 12) // W = 16: 12 + 8 > 16
	in["current_pos"].SetI32(0, 28)
	st, _ := m.NewState()
	if _, err := m.Predict(in, st, nil); err == nil {
		t.Fatal("a wrapping ring write was accepted")
	}
}
