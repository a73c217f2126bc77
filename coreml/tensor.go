package coreml

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/orchard-llm/orchard/f16"
)

// NewTensor allocates a zeroed Go-heap tensor. Backends that need memory
// outside the Go heap use Runtime.Alloc instead.
func NewTensor(shape []int, dt DType) *Tensor {
	return &Tensor{Shape: slices.Clone(shape), DType: dt, Data: make([]byte, NumElements(shape)*dt.Size())}
}

// NumElements is the product of the dimensions.
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Len is the number of elements of t.
func (t *Tensor) Len() int { return NumElements(t.Shape) }

// U16 views an fp16 tensor's bytes as uint16 values without copying. Both
// supported architectures are little-endian; tensor memory from make or
// from a backend's Alloc is at least 2-byte aligned.
func (t *Tensor) U16() []uint16 {
	if len(t.Data) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&t.Data[0])), len(t.Data)/2)
}

// F16 returns element i of an fp16 tensor as raw bits.
func (t *Tensor) F16(i int) uint16 { return binary.LittleEndian.Uint16(t.Data[2*i:]) }

// SetF16 stores raw fp16 bits at element i.
func (t *Tensor) SetF16(i int, h uint16) { binary.LittleEndian.PutUint16(t.Data[2*i:], h) }

// I32 returns element i of an int32 tensor.
func (t *Tensor) I32(i int) int32 { return int32(binary.LittleEndian.Uint32(t.Data[4*i:])) }

// SetI32 stores v at element i of an int32 tensor.
func (t *Tensor) SetI32(i int, v int32) { binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(v)) }

// F32 returns element i of an fp32 tensor.
func (t *Tensor) F32(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
}

// SetF32 stores v at element i of an fp32 tensor.
func (t *Tensor) SetF32(i int, v float32) {
	binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(v))
}

// Float reads element i of any float dtype as float32.
func (t *Tensor) Float(i int) float32 {
	switch t.DType {
	case Float16:
		return f16.ToF32(t.F16(i))
	case Float32:
		return t.F32(i)
	case Int32:
		return float32(t.I32(i))
	}
	return 0
}

// Convert writes src into dst element by element, across dtypes: fp16
// widens to fp32 exactly, floats round to fp16, and a float becomes an
// int32 by rounding (positions and one-hots a host keeps in a float tensor
// round to themselves). Elements past the shorter tensor are left alone.
// It allocates nothing.
func Convert(dst, src *Tensor) {
	if src.DType == Float16 && dst.DType == Float32 {
		for i, h := range src.U16()[:min(src.Len(), dst.Len())] {
			dst.SetF32(i, f16.ToF32(h))
		}
		return
	}
	for i := range min(src.Len(), dst.Len()) {
		v := src.Float(i)
		switch dst.DType {
		case Float16:
			dst.SetF16(i, f16.FromF32(v))
		case Float32:
			dst.SetF32(i, v)
		case Int32:
			dst.SetI32(i, int32(math.Round(float64(v))))
		}
	}
}

// Shapeless reports whether the spec gives no usable shape: Core ML
// declares none (rank 0, or a zero dimension) for an output whose shape
// depends on a flexible input, as coremltools writes the v2 chunks'
// hidden and the heads' token. Its real shape is known only after a call.
func (s TensorSpec) Shapeless() bool {
	if len(s.Shape) == 0 {
		return true
	}
	for _, d := range s.Shape {
		if d <= 0 {
			return true
		}
	}
	return false
}

// checkDestination checks a caller's tensor meant to receive an output:
// the declared shape when there is one, else only the dtype.
func (s TensorSpec) checkDestination(name string, t *Tensor) error {
	if !s.Shapeless() {
		return s.Check(name, t)
	}
	if t.DType != s.DType {
		return fmt.Errorf("tensor %s: dtype %s, want %s", name, t.DType, s.DType)
	}
	if len(t.Data) != t.Len()*t.DType.Size() {
		return fmt.Errorf("tensor %s: %d data bytes for shape %v %s", name, len(t.Data), t.Shape, t.DType)
	}
	return nil
}

// Check reports whether t matches spec (dtype, rank, each dimension within
// its range). name is used in the error.
func (s TensorSpec) Check(name string, t *Tensor) error { return s.check(name, t, true) }

// Precheck is Check without the upper bounds of flexible dimensions: how a
// backend reads a range's upper bound is not certain everywhere (an NSRange
// is location and length), so a driver never refuses a call on it and lets
// the backend's own validation decide.
func (s TensorSpec) Precheck(name string, t *Tensor) error { return s.check(name, t, false) }

func (s TensorSpec) check(name string, t *Tensor, upper bool) error {
	if t == nil {
		return fmt.Errorf("tensor %s: missing (want %s %v)", name, s.DType, s.Shape)
	}
	if t.DType != s.DType {
		return fmt.Errorf("tensor %s: dtype %s, want %s", name, t.DType, s.DType)
	}
	if len(t.Shape) != len(s.Shape) {
		return fmt.Errorf("tensor %s: shape %v, want %v", name, t.Shape, s.Shape)
	}
	for i, d := range t.Shape {
		lo, hi := s.Shape[i], s.Shape[i]
		if s.Ranges != nil {
			lo, hi = s.Ranges[i][0], s.Ranges[i][1]
		}
		if !upper && lo != hi {
			hi = math.MaxInt
		}
		if d < lo || d > hi {
			return fmt.Errorf("tensor %s: shape %v, want %s", name, t.Shape, s.ShapeString())
		}
	}
	if t.kept == nil && len(t.Data) != t.Len()*t.DType.Size() {
		return fmt.Errorf("tensor %s: %d data bytes for shape %v %s", name, len(t.Data), t.Shape, t.DType)
	}
	return nil
}

// ShapeString prints the shape with ranges, e.g. [1…16 2560].
func (s TensorSpec) ShapeString() string {
	if s.Ranges == nil {
		return fmt.Sprint(s.Shape)
	}
	out := "["
	for i, r := range s.Ranges {
		if i > 0 {
			out += " "
		}
		if r[0] == r[1] {
			out += fmt.Sprint(r[0])
		} else {
			out += fmt.Sprintf("%d…%d", r[0], r[1])
		}
	}
	return out + "]"
}

// CheckInputs validates every declared input of d against in, naming the
// first offending tensor. Extra inputs are an error too: the real graphs
// reject undeclared features.
func (d Description) CheckInputs(in Features) error { return d.checkInputs(in, true) }

// PrecheckInputs is CheckInputs with Precheck: what a driver or a backend
// verifies before handing a call to Core ML.
func (d Description) PrecheckInputs(in Features) error { return d.checkInputs(in, false) }

func (d Description) checkInputs(in Features, upper bool) error {
	for name, spec := range d.Inputs {
		if err := spec.check(name, in[name], upper); err != nil {
			return err
		}
	}
	for name := range in {
		if _, ok := d.Inputs[name]; !ok {
			return fmt.Errorf("tensor %s: not an input of this model", name)
		}
	}
	return nil
}
