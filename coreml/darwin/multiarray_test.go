package darwin

import (
	"math"
	"reflect"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
)

func TestMultiArrayDataType(t *testing.T) {
	// Raw MLMultiArrayDataType values from MLMultiArray.h.
	for _, tt := range []struct {
		dt  coreml.DType
		raw int
	}{
		{coreml.Float16, 65552},
		{coreml.Float32, 65568},
		{coreml.Int32, 131104},
	} {
		raw, err := multiArrayDataType(tt.dt)
		if err != nil || raw != tt.raw {
			t.Errorf("multiArrayDataType(%s) = %d, %v; want %d", tt.dt, raw, err, tt.raw)
		}
		dt, err := dtypeOf(tt.raw)
		if err != nil || dt != tt.dt {
			t.Errorf("dtypeOf(%d) = %s, %v; want %s", tt.raw, dt, err, tt.dt)
		}
		if rawSize(tt.raw) != tt.dt.Size() {
			t.Errorf("rawSize(%d) = %d, want %d", tt.raw, rawSize(tt.raw), tt.dt.Size())
		}
	}
	if _, err := multiArrayDataType(coreml.DType(0)); err == nil {
		t.Error("multiArrayDataType(0) succeeded")
	}
	for _, raw := range []int{65600, 131080, 0} { // fp64 and int8 never cross the seam
		if _, err := dtypeOf(raw); err == nil {
			t.Errorf("dtypeOf(%d) succeeded", raw)
		}
	}
	if rawSize(65600) != 8 {
		t.Errorf("rawSize(fp64) = %d", rawSize(65600))
	}
}

func TestDimRange(t *testing.T) {
	for _, tt := range []struct {
		loc, length uint64
		want        [2]int
	}{
		{1, 128, [2]int{1, 128}}, // v2's sequence range S = 1…128
		{8, 1, [2]int{8, 8}},
		{4, 0, [2]int{4, 4}},
		{1, math.MaxInt64, [2]int{1, math.MaxInt}},
		{1, math.MaxUint64, [2]int{1, math.MaxInt}},
	} {
		if got := dimRange(tt.loc, tt.length); got != tt.want {
			t.Errorf("dimRange(%d, %d) = %v, want %v", tt.loc, tt.length, got, tt.want)
		}
	}
}

func TestNewTensorSpec(t *testing.T) {
	fixed, err := newTensorSpec(coreml.Float16, []int{1, 1, 1536}, [][2]int{{1, 1}, {1, 1}, {1536, 1536}})
	if err != nil || fixed.Ranges != nil {
		t.Errorf("fixed ranges: %+v, %v; want no Ranges", fixed, err)
	}
	flex, err := newTensorSpec(coreml.Float16, []int{1, 1, 2560}, [][2]int{{1, 1}, {1, 128}, {2560, 2560}})
	if err != nil || flex.Ranges == nil || flex.ShapeString() != "[1 1…128 2560]" {
		t.Errorf("flexible: %+v (%s), %v", flex, flex.ShapeString(), err)
	}
	if _, err := newTensorSpec(coreml.Float16, []int{1, 2}, [][2]int{{1, 1}}); err == nil {
		t.Error("rank mismatch accepted")
	}
	if _, err := newTensorSpec(coreml.Float16, []int{3}, [][2]int{{4, 2}}); err == nil {
		t.Error("empty range accepted")
	}
}

func TestEnvelope(t *testing.T) {
	got, err := envelope([][]int{{1, 1, 64}, {1, 8, 64}, {1, 4, 64}})
	want := [][2]int{{1, 1}, {1, 8}, {64, 64}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("envelope = %v, %v; want %v", got, err, want)
	}
	if _, err := envelope([][]int{{1}, {1, 2}}); err == nil {
		t.Error("mixed ranks accepted")
	}
	if got, _ := envelope(nil); got != nil {
		t.Errorf("envelope(nil) = %v", got)
	}
}

func TestMaxBytes(t *testing.T) {
	for _, tt := range []struct {
		spec  coreml.TensorSpec
		limit int
		want  int
	}{
		{coreml.TensorSpec{DType: coreml.Float16, Shape: []int{1, 1, 1536}}, 1 << 30, 3072},
		{coreml.TensorSpec{DType: coreml.Float16, Shape: []int{1, 1, 2560}, Ranges: [][2]int{{1, 1}, {1, 128}, {2560, 2560}}}, 1 << 30, 128 * 2560 * 2},
		{coreml.TensorSpec{DType: coreml.Float32, Shape: []int{1, 1}, Ranges: [][2]int{{1, 1}, {1, math.MaxInt}}}, 1 << 30, 0},
		{coreml.TensorSpec{DType: coreml.Int32, Shape: []int{1 << 20}}, 1 << 20, 0},
	} {
		if got := maxBytes(tt.spec, tt.limit); got != tt.want {
			t.Errorf("maxBytes(%+v) = %d, want %d", tt.spec, got, tt.want)
		}
	}
}

func TestEqualSpecs(t *testing.T) {
	a := map[string]coreml.TensorSpec{"kv_cache_sliding": {DType: coreml.Float16, Shape: []int{7, 1, 512, 256}}}
	b := cloneSpecs(a)
	if !equalSpecs(a, b) {
		t.Error("a clone differs")
	}
	b["kv_cache_sliding"].Shape[2] = 1024
	if equalSpecs(a, b) {
		t.Error("different shapes compare equal")
	}
	if a["kv_cache_sliding"].Shape[2] != 512 {
		t.Error("cloneSpecs shares shapes")
	}
}
