package coreml

import (
	"slices"
	"strings"
	"testing"
)

type lastBuffers map[string][]byte

func (l lastBuffers) OutputBuffer(name string) []byte { return l[name] }

func TestPlan(t *testing.T) {
	var mem HeapMemory
	f16 := Float16
	desc := Description{
		Inputs: map[string]TensorSpec{"a": {DType: f16, Shape: []int{4}}, "b": {DType: f16, Shape: []int{4}}},
		Outputs: map[string]TensorSpec{
			"fixed": {DType: f16, Shape: []int{4}},
			"flex":  {DType: f16, Shape: []int{1, 4}, Ranges: [][2]int{{1, 8}, {4, 4}}},
			// coremltools writes no shape for an output that depends on a
			// flexible input: it must never get a (rank-0) backing.
			"shapeless": {DType: f16},
		},
	}
	owned := mem.Alloc([]int{4}, f16)
	host := NewTensor([]int{4}, f16)
	kept := NewKept([]int{4}, f16, "handle")
	dst := mem.Alloc([]int{4}, f16)
	prev := mem.Alloc([]int{4}, f16) // the model's own buffer for "fixed"

	for _, tt := range []struct {
		name     string
		in       Features
		o        *Outputs
		backings bool
		declined string
		own      Reuser
		want     map[string]Transfer
		bytes    int // planned copy bytes
		err      string
	}{
		{name: "backend memory in place, host memory copied",
			in: Features{"a": owned, "b": host}, backings: true,
			want: map[string]Transfer{"a": InPlace, "b": CopyIn, "fixed": Reused, "flex": CopyOut, "shapeless": CopyOut}, bytes: 8}, // a flexible output's size is known after the call
		{name: "kept passes through; kept and backed outputs",
			in: Features{"a": kept, "b": owned}, backings: true,
			o:    &Outputs{Into: Features{"fixed": dst}, Keep: map[string]bool{"flex": true}},
			want: map[string]Transfer{"a": PassThrough, "b": InPlace, "fixed": Backed, "flex": Kept}},
		{name: "a shapeless output with a destination is copied there, never backed",
			in: Features{"a": owned, "b": owned}, backings: true,
			o:    &Outputs{Into: Features{"shapeless": mem.Alloc([]int{3, 4}, f16)}},
			want: map[string]Transfer{"fixed": Reused, "shapeless": CopyOut}, bytes: 24},
		{name: "a declined output is copied into its destination, the others stay backed",
			in: Features{"a": owned, "b": owned}, backings: true, declined: "fixed",
			o:    &Outputs{Into: Features{"fixed": dst}},
			want: map[string]Transfer{"fixed": CopyOut}, bytes: 8},
		{name: "no backings: fixed outputs are copied",
			in: Features{"a": owned, "b": owned}, backings: false,
			want: map[string]Transfer{"fixed": CopyOut, "flex": CopyOut}, bytes: 8},
		{name: "an output fed back as an input is copied, not backed",
			in: Features{"a": prev, "b": owned}, backings: true, own: lastBuffers{"fixed": prev.Data},
			want: map[string]Transfer{"fixed": CopyOut}, bytes: 8},
		{name: "destination from Go memory refused",
			in: Features{"a": owned, "b": owned}, o: &Outputs{Into: Features{"fixed": host}}, err: "not allocated by this runtime"},
		{name: "destination that is an input refused",
			in: Features{"a": dst, "b": owned}, o: &Outputs{Into: Features{"fixed": dst}}, err: "also an input"},
		{name: "destination of the wrong shape refused",
			in: Features{"a": owned, "b": owned}, o: &Outputs{Into: Features{"fixed": mem.Alloc([]int{5}, f16)}}, err: "shape"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p Plan
			var b *Backings
			if tt.backings {
				b = &Backings{}
				if tt.declined != "" {
					b.Decline(tt.declined)
				}
			}
			err := p.Make(desc, tt.in, tt.o, &mem, b, tt.own)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			bytes := 0
			for _, s := range append(append([]Step{}, p.In...), p.Out...) {
				bytes += s.Bytes
				if want, ok := tt.want[s.Name]; ok && s.How != want {
					t.Errorf("%s: %s, want %s", s.Name, s.How, want)
				}
				if s.How == Backed || s.How == Reused {
					if !slices.Contains(p.Offered(), s.Name) {
						t.Errorf("%s is %s but not among the offered %v", s.Name, s.How, p.Offered())
					}
				}
			}
			if bytes != tt.bytes {
				t.Errorf("planned copies %d bytes, want %d", bytes, tt.bytes)
			}
		})
	}
}

func TestPlanAllocatesNothing(t *testing.T) {
	var mem HeapMemory
	desc := Description{Inputs: map[string]TensorSpec{"a": {DType: Float16, Shape: []int{4}}},
		Outputs: map[string]TensorSpec{"x": {DType: Float16, Shape: []int{4}}, "y": {DType: Float16, Shape: []int{4}}}}
	in := Features{"a": mem.Alloc([]int{4}, Float16)}
	o := &Outputs{Into: Features{"x": mem.Alloc([]int{4}, Float16)}, Keep: map[string]bool{"y": true}}
	var p Plan
	b := &Backings{}
	p.Make(desc, in, o, &mem, b, nil)
	if n := testing.AllocsPerRun(100, func() { p.Make(desc, in, o, &mem, b, nil) }); n != 0 {
		t.Errorf("%v allocations per plan", n)
	}
}

func TestPrecheckIgnoresUpperBounds(t *testing.T) {
	spec := TensorSpec{DType: Float16, Shape: []int{1, 4}, Ranges: [][2]int{{1, 127}, {4, 4}}}
	t128 := NewTensor([]int{128, 4}, Float16)
	if err := spec.Check("hidden_in", t128); err == nil {
		t.Error("Check accepted 128 rows of a 1…127 range")
	}
	if err := spec.Precheck("hidden_in", t128); err != nil {
		t.Errorf("Precheck refused on the upper bound: %v", err)
	}
	if err := spec.Precheck("hidden_in", NewTensor([]int{0, 4}, Float16)); err == nil {
		t.Error("Precheck accepted 0 rows below the lower bound 1")
	}
	if err := spec.Precheck("hidden_in", NewTensor([]int{2, 5}, Float16)); err == nil {
		t.Error("Precheck accepted a wrong fixed dimension")
	}
	kept := NewKept([]int{2, 4}, Float16, 1)
	if err := spec.Check("hidden_in", kept); err != nil {
		t.Errorf("a kept tensor has no data to check: %v", err)
	}
}
