package darwin

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/orchard-llm/orchard/coreml"
)

// MLMultiArrayDataType raw values (MLMultiArray.h): a kind bit (0x10000
// float, 0x20000 integer) or'ed with the bit width.
const (
	mlFloat64 = 0x10000 | 64
	mlFloat32 = 0x10000 | 32
	mlFloat16 = 0x10000 | 16 // macOS 12
	mlInt32   = 0x20000 | 32
)

// multiArrayDataType is the MLMultiArrayDataType raw value of d.
func multiArrayDataType(d coreml.DType) (int, error) {
	switch d {
	case coreml.Float16:
		return mlFloat16, nil
	case coreml.Float32:
		return mlFloat32, nil
	case coreml.Int32:
		return mlInt32, nil
	}
	return 0, fmt.Errorf("coreml: %s has no MLMultiArray data type", d)
}

// dtypeOf maps an MLMultiArrayDataType raw value to the seam's dtype.
// Doubles never cross the seam.
func dtypeOf(raw int) (coreml.DType, error) {
	switch raw {
	case mlFloat16:
		return coreml.Float16, nil
	case mlFloat32:
		return coreml.Float32, nil
	case mlInt32:
		return coreml.Int32, nil
	}
	return 0, fmt.Errorf("unsupported MLMultiArray data type %s", rawTypeName(raw))
}

// rawSize is the byte width of an element of MLMultiArrayDataType raw, or 0.
func rawSize(raw int) int {
	switch raw {
	case mlFloat16:
		return 2
	case mlFloat32, mlInt32:
		return 4
	case mlFloat64:
		return 8
	}
	return 0
}

func rawTypeName(raw int) string {
	switch raw {
	case mlFloat16:
		return "fp16"
	case mlFloat32:
		return "fp32"
	case mlFloat64:
		return "fp64"
	case mlInt32:
		return "int32"
	case 0x20000 | 8:
		return "int8"
	}
	return fmt.Sprintf("0x%x", raw)
}

// dimRange converts one NSRange of MLMultiArrayShapeConstraint's
// sizeRangeForDimension into inclusive bounds. NSRange is half-open
// (location ..< location+length); an unbounded dimension has a length near
// NSIntegerMax and gets math.MaxInt as its upper bound.
func dimRange(location, length uint64) [2]int {
	const unbounded = 1 << 40 // no real tensor dimension comes close
	if location >= unbounded {
		return [2]int{math.MaxInt, math.MaxInt}
	}
	lo := int(location)
	if length >= unbounded {
		return [2]int{lo, math.MaxInt}
	}
	if length == 0 {
		return [2]int{lo, lo}
	}
	return [2]int{lo, lo + int(length) - 1}
}

// newTensorSpec builds a TensorSpec from a default shape and optional
// per-dimension ranges, dropping ranges that fix every dimension.
func newTensorSpec(dt coreml.DType, shape []int, ranges [][2]int) (coreml.TensorSpec, error) {
	spec := coreml.TensorSpec{DType: dt, Shape: shape}
	if ranges == nil {
		return spec, nil
	}
	if len(ranges) != len(shape) {
		return spec, fmt.Errorf("%d dimension ranges for shape %v", len(ranges), shape)
	}
	for i, r := range ranges {
		if r[0] > r[1] {
			return spec, fmt.Errorf("dimension %d: range %d…%d is empty", i, r[0], r[1])
		}
		if r[0] != r[1] || r[0] != shape[i] {
			spec.Ranges = ranges
			break
		}
	}
	return spec, nil
}

// envelope returns, per dimension, the smallest and largest size among the
// enumerated shapes of an MLMultiArrayShapeConstraintTypeEnumerated
// constraint. TensorSpec cannot hold the list itself; Core ML rejects a
// shape inside the envelope that is not one of them.
func envelope(shapes [][]int) ([][2]int, error) {
	if len(shapes) == 0 {
		return nil, nil
	}
	rank := len(shapes[0])
	out := make([][2]int, rank)
	for i := range out {
		out[i] = [2]int{math.MaxInt, 0}
	}
	for _, s := range shapes {
		if len(s) != rank {
			return nil, fmt.Errorf("enumerated shapes of ranks %d and %d", rank, len(s))
		}
		for i, d := range s {
			out[i][0] = min(out[i][0], d)
			out[i][1] = max(out[i][1], d)
		}
	}
	return out, nil
}

// maxBytes is the size of the largest tensor spec admits, or 0 when that
// is unbounded, unknown (a shapeless spec) or above limit.
func maxBytes(spec coreml.TensorSpec, limit int) int {
	if spec.Shapeless() {
		return 0
	}
	n := spec.DType.Size()
	for i, d := range spec.Shape {
		if spec.Ranges != nil {
			d = spec.Ranges[i][1]
		}
		if d < 0 || (d > 0 && n > limit/d) {
			return 0
		}
		n *= d
	}
	if n > limit {
		return 0
	}
	return n
}

func cloneSpecs(m map[string]coreml.TensorSpec) map[string]coreml.TensorSpec {
	out := make(map[string]coreml.TensorSpec, len(m))
	for name, s := range m {
		out[name] = coreml.TensorSpec{DType: s.DType, Shape: slices.Clone(s.Shape), Ranges: slices.Clone(s.Ranges), Shapes: slices.Clone(s.Shapes)}
	}
	return out
}

// equalSpecs reports whether a and b declare the same tensors: the
// condition for two functions of one model to share an MLState.
func equalSpecs(a, b map[string]coreml.TensorSpec) bool {
	return maps.EqualFunc(a, b, func(x, y coreml.TensorSpec) bool {
		return x.DType == y.DType && slices.Equal(x.Shape, y.Shape) && slices.Equal(x.Ranges, y.Ranges)
	})
}

// checkWrap validates what an MLMultiArray over memory not its own would
// be built from, before initWithDataPointer sees it: Core ML raises an
// Objective-C exception (which ends the process) or reads past the buffer
// on a rank-0 shape, a dimension below one, strides of another rank, or
// fewer bytes than the shape and strides span. available is the number of
// bytes at the pointer; nil memory is refused too.
func checkWrap(hasMemory bool, available int, shape, strides []int, dt coreml.DType) error {
	size := dt.Size()
	switch {
	case size == 0:
		return fmt.Errorf("cannot wrap a %s array", dt)
	case !hasMemory:
		return fmt.Errorf("cannot wrap a %v %s array over no memory", shape, dt)
	case len(shape) == 0:
		return fmt.Errorf("cannot wrap a rank-0 %s array: the shape is unknown (a shapeless output is copied out, never backed)", dt)
	case len(strides) != len(shape):
		return fmt.Errorf("strides %v do not fit shape %v", strides, shape)
	}
	for i, d := range shape {
		if d < 1 {
			return fmt.Errorf("cannot wrap shape %v: dimension %d is %d", shape, i, d)
		}
	}
	for _, st := range strides {
		if st < 1 {
			return fmt.Errorf("cannot wrap shape %v with strides %v", shape, strides)
		}
	}
	if need := extent(shape, strides) * size; need > available {
		return fmt.Errorf("a %v %s array spans %d bytes, the memory holds %d", shape, dt, need, available)
	}
	return nil
}
