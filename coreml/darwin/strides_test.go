package darwin

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
)

func TestContiguousStrides(t *testing.T) {
	for _, tt := range []struct{ shape, want []int }{
		{[]int{2, 3, 4}, []int{12, 4, 1}},
		{[]int{1, 1, 262144}, []int{262144, 262144, 1}},
		{[]int{5}, []int{1}},
		{[]int{}, []int{}},
	} {
		if got := contiguousStrides(tt.shape); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("contiguousStrides(%v) = %v, want %v", tt.shape, got, tt.want)
		}
	}
}

func TestEffectiveStrides(t *testing.T) {
	for _, tt := range []struct {
		name     string
		shape    []int
		strides  []int
		bufElems int
		want     []int
		wantErr  bool
	}{
		{"contiguous", []int{2, 3}, []int{3, 1}, 6, []int{3, 1}, false},
		{"padded rows", []int{2, 3}, []int{32, 1}, 35, []int{32, 1}, false},
		{"zero strides from the Neural Engine", []int{1, 1, 4}, []int{0, 0, 0}, 4, []int{4, 4, 1}, false},
		{"zero stride on a length-1 dimension is fine", []int{1, 4}, []int{0, 1}, 4, []int{0, 1}, false},
		{"zero strides, unknown buffer", []int{2, 2}, []int{0, 0}, -1, []int{2, 1}, false},
		{"zero strides, buffer too small", []int{2, 2}, []int{0, 0}, 3, nil, true},
		{"wrong rank", []int{2, 2}, []int{1}, 4, []int{2, 1}, false},
		{"negative", []int{2, 2}, []int{-2, 1}, 4, nil, true},
	} {
		got, err := effectiveStrides(tt.shape, tt.strides, tt.bufElems)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: effectiveStrides(%v, %v, %d) = %v, %v; want %v, error %v", tt.name, tt.shape, tt.strides, tt.bufElems, got, err, tt.want, tt.wantErr)
		}
	}
}

// f16s and f32s build little-endian buffers.
func f16s(v ...float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], f16.FromF32(x))
	}
	return b
}

func f32s(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func i32s(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func TestGatherStrided(t *testing.T) {
	const pad = -9 // elements a strided reader must skip
	for _, tt := range []struct {
		name    string
		src     []byte
		srcRaw  int
		shape   []int
		strides []int
		dt      coreml.DType
		want    []byte
	}{
		{"contiguous fp16", f16s(1, 2, 3, 4, 5, 6), mlFloat16, []int{2, 3}, []int{3, 1}, coreml.Float16, f16s(1, 2, 3, 4, 5, 6)},
		{"rows padded to 4", f16s(1, 2, 3, pad, 4, 5, 6, pad), mlFloat16, []int{2, 3}, []int{4, 1}, coreml.Float16, f16s(1, 2, 3, 4, 5, 6)},
		{"transposed", f32s(1, 4, 2, 5, 3, 6), mlFloat32, []int{2, 3}, []int{1, 2}, coreml.Float32, f32s(1, 2, 3, 4, 5, 6)},
		{"rank 3 with padding", f16s(1, 2, pad, 3, 4, pad, pad, pad, 5, 6, pad, 7, 8, pad, pad, pad), mlFloat16,
			[]int{2, 2, 2}, []int{8, 3, 1}, coreml.Float16, f16s(1, 2, 3, 4, 5, 6, 7, 8)},
		{"int32 token_id", i32s(42, pad), mlInt32, []int{1}, []int{1}, coreml.Int32, i32s(42)},
		{"fp32 output read as fp16", f32s(0.5, pad, 1.5, pad), mlFloat32, []int{1, 2}, []int{4, 2}, coreml.Float16, f16s(0.5, 1.5)},
		{"fp16 output read as fp32", f16s(0.25, -2), mlFloat16, []int{2}, []int{1}, coreml.Float32, f32s(0.25, -2)},
		{"scalar", i32s(7), mlInt32, []int{}, []int{}, coreml.Int32, i32s(7)},
	} {
		dst := make([]byte, len(tt.want))
		if err := gatherStrided(dst, tt.dt, tt.src, tt.srcRaw, tt.shape, tt.strides); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.Equal(dst, tt.want) {
			t.Errorf("%s: got % x, want % x", tt.name, dst, tt.want)
		}
	}
}

func TestGatherStridedErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		dst     []byte
		dt      coreml.DType
		src     []byte
		srcRaw  int
		shape   []int
		strides []int
	}{
		{"source too short", make([]byte, 12), coreml.Float16, f16s(1, 2, 3, 4, 5), mlFloat16, []int{2, 3}, []int{3, 1}},
		{"padded source too short", make([]byte, 12), coreml.Float16, f16s(1, 2, 3, 4, 5, 6), mlFloat16, []int{2, 3}, []int{4, 1}},
		{"destination too short", make([]byte, 10), coreml.Float16, f16s(1, 2, 3, 4, 5, 6), mlFloat16, []int{2, 3}, []int{3, 1}},
		{"int to float", make([]byte, 4), coreml.Float32, i32s(1), mlInt32, []int{1}, []int{1}},
		{"float to int", make([]byte, 4), coreml.Int32, f32s(1), mlFloat32, []int{1}, []int{1}},
		{"unknown source type", make([]byte, 2), coreml.Float16, []byte{1, 2}, 0x20000 | 8, []int{1}, []int{1}},
		{"stride rank", make([]byte, 4), coreml.Float16, f16s(1, 2), mlFloat16, []int{2}, []int{1, 1}},
		{"negative stride", make([]byte, 4), coreml.Float16, f16s(1, 2), mlFloat16, []int{2}, []int{-1}},
	} {
		if err := gatherStrided(tt.dst, tt.dt, tt.src, tt.srcRaw, tt.shape, tt.strides); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestScatterStridedRoundTrip(t *testing.T) {
	// A KV state buffer [2, 3, 4] whose rows Core ML pads to 8 elements.
	shape, strides := []int{2, 3, 4}, []int{24, 8, 1}
	src := make([]float32, coreml.NumElements(shape))
	for i := range src {
		src[i] = float32(i) - 11.5
	}
	in := f16s(src...)
	buf := make([]byte, 2*extent(shape, strides))
	for i := range buf {
		buf[i] = 0xAB // padding must stay untouched
	}
	if err := scatterStrided(buf, mlFloat16, strides, in, coreml.Float16, shape); err != nil {
		t.Fatal(err)
	}
	if buf[2*4] != 0xAB || buf[2*7+1] != 0xAB {
		t.Error("scatter wrote into row padding")
	}
	out := make([]byte, len(in))
	if err := gatherStrided(out, coreml.Float16, buf, mlFloat16, shape, strides); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out, in) {
		t.Errorf("round trip: got % x, want % x", out, in)
	}
}

func BenchmarkGatherLogits(b *testing.B) {
	// cardbud's chunk_3 output: logits [1, 1, 262144] fp16.
	shape := []int{1, 1, 262144}
	src := make([]byte, 2*coreml.NumElements(shape))
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if err := gatherStrided(dst, coreml.Float16, src, mlFloat16, shape, contiguousStrides(shape)); err != nil {
			b.Fatal(err)
		}
	}
}
