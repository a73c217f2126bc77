package coreml

import (
	"errors"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/f16"
)

// refusingBackend fails every call that offers a backing for one of its
// refused outputs, as Core ML fails a prediction over a backing it cannot
// use; it counts its calls.
type refusingBackend struct {
	refused map[string]bool
	calls   int
}

func (r *refusingBackend) run(p *Plan) error {
	r.calls++
	for _, n := range p.Offered() {
		if r.refused[n] {
			return errors.New("backing refused for " + n)
		}
	}
	return nil
}

// TestBackingsDisableOnlyTheRefusedOutput: a call refused over one
// backing among three runs again without backings, then the outputs are
// offered one at a time: only the refused one is given up for good; the
// other two stay backed. (Before, one refusal ended every backing of the
// model for its life.)
func TestBackingsDisableOnlyTheRefusedOutput(t *testing.T) {
	var mem HeapMemory
	f16 := Float16
	desc := Description{Inputs: map[string]TensorSpec{"a": {DType: f16, Shape: []int{4}}},
		Outputs: map[string]TensorSpec{"k": {DType: f16, Shape: []int{4}}, "v": {DType: f16, Shape: []int{4}}, "h": {DType: f16, Shape: []int{4}}}}
	in := Features{"a": mem.Alloc([]int{4}, f16)}
	be := &refusingBackend{refused: map[string]bool{"v": true}}
	b := &Backings{}
	var p Plan
	plan := func(b *Backings) error { return p.Make(desc, in, nil, &mem, b, nil) }
	for i := range 6 {
		if err := p.Run(b, plan, func() error { return be.run(&p) }); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := b.Declined(); !slices.Equal(got, []string{"v"}) {
		t.Fatalf("declined %v, want [v]", got)
	}
	plan(b)
	want := map[string]Transfer{"k": Reused, "h": Reused, "v": CopyOut}
	for _, s := range p.Out {
		if s.How != want[s.Name] {
			t.Errorf("after learning: %s is %s, want %s", s.Name, s.How, want[s.Name])
		}
	}
	// 6 calls: 1 refused + its retry, 3 probes of which 1 refused + retry.
	if be.calls != 8 {
		t.Errorf("%d backend calls, want 8 (each refusal costs one retry)", be.calls)
	}
}

// TestBackingsSilentDecline: an output Core ML wrote elsewhere is copied
// from then on; the others keep their backings.
func TestBackingsSilentDecline(t *testing.T) {
	b := &Backings{}
	b.Decline("k")
	if b.Offer("k") || !b.Offer("v") {
		t.Fatalf("after declining k: offer k %v, v %v", b.Offer("k"), b.Offer("v"))
	}
	var none *Backings
	if none.Offer("v") || NoBackings().Offer("v") {
		t.Error("a nil or off policy offered a backing")
	}
}

// TestConvert: host tensors reach a model in its declared dtype.
func TestConvert(t *testing.T) {
	src := NewTensor([]int{3}, Float16)
	for i, v := range []float32{-65504, 1.5, 7} {
		src.SetF16(i, f16.FromF32(v))
	}
	f32, i32, back := NewTensor([]int{3}, Float32), NewTensor([]int{3}, Int32), NewTensor([]int{3}, Float16)
	Convert(f32, src)
	Convert(i32, src)
	Convert(back, f32)
	if f32.F32(0) != -65504 || f32.F32(1) != 1.5 || i32.I32(2) != 7 || i32.I32(1) != 2 || !slices.Equal(back.Data, src.Data) {
		t.Errorf("fp32 %v %v, int32 %v %v, round trip %v", f32.F32(0), f32.F32(1), i32.I32(1), i32.I32(2), slices.Equal(back.Data, src.Data))
	}
}
