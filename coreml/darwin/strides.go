package darwin

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
)

// Strides here are in elements, as MLMultiArray reports them: element
// (i0, i1, …) sits at offset Σ i_k·strides[k].

// contiguousStrides returns the C-order strides of shape.
func contiguousStrides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

// effectiveStrides returns the strides to read an array of shape that Core
// ML describes with strides, from a buffer of bufElems elements (-1 when the
// size is unknown). Outputs of the Neural Engine have been seen reporting
// zero strides for dimensions longer than one, which would alias every
// element to the first; such strides, or a stride list of the wrong rank,
// are replaced by C-order strides when the buffer is large enough for them.
func effectiveStrides(shape, strides []int, bufElems int) ([]int, error) {
	bogus := len(strides) != len(shape)
	for i := 0; !bogus && i < len(shape); i++ {
		if strides[i] < 0 {
			return nil, fmt.Errorf("negative stride in %v for shape %v", strides, shape)
		}
		bogus = strides[i] == 0 && shape[i] > 1
	}
	if !bogus {
		return strides, nil
	}
	if n := coreml.NumElements(shape); bufElems >= 0 && bufElems < n {
		return nil, fmt.Errorf("unusable strides %v for shape %v in a buffer of %d elements", strides, shape, bufElems)
	}
	return contiguousStrides(shape), nil
}

// extent is the number of elements a strided array of shape spans.
func extent(shape, strides []int) int {
	n := 1
	for i, d := range shape {
		if d == 0 {
			return 0
		}
		n += (d - 1) * strides[i]
	}
	return n
}

// gatherStrided copies the strided array src (MLMultiArrayDataType srcRaw)
// into the contiguous dst of dtype dt, converting between float widths.
func gatherStrided(dst []byte, dt coreml.DType, src []byte, srcRaw int, shape, strides []int) error {
	dstRaw, err := multiArrayDataType(dt)
	if err != nil {
		return err
	}
	return copyStrided(dst, dstRaw, contiguousStrides(shape), src, srcRaw, strides, shape)
}

// scatterStrided copies the contiguous src of dtype dt into the strided
// array dst (MLMultiArrayDataType dstRaw), converting between float widths.
func scatterStrided(dst []byte, dstRaw int, strides []int, src []byte, dt coreml.DType, shape []int) error {
	srcRaw, err := multiArrayDataType(dt)
	if err != nil {
		return err
	}
	return copyStrided(dst, dstRaw, strides, src, srcRaw, contiguousStrides(shape), shape)
}

// copyStrided copies every element of shape from src to dst, each laid out
// by its own strides and element type.
func copyStrided(dst []byte, dstRaw int, dstStrides []int, src []byte, srcRaw int, srcStrides []int, shape []int) error {
	dsz, ssz := rawSize(dstRaw), rawSize(srcRaw)
	if dsz == 0 || ssz == 0 {
		return fmt.Errorf("copy from %s to %s: unsupported element type", rawTypeName(srcRaw), rawTypeName(dstRaw))
	}
	same := dstRaw == srcRaw
	if !same && (dstRaw == mlInt32 || srcRaw == mlInt32) {
		return fmt.Errorf("copy from %s to %s: no conversion between integers and floats", rawTypeName(srcRaw), rawTypeName(dstRaw))
	}
	for _, s := range [][]int{dstStrides, srcStrides} {
		if len(s) != len(shape) {
			return fmt.Errorf("strides %v for shape %v", s, shape)
		}
		if slices.ContainsFunc(s, func(v int) bool { return v < 0 }) {
			return fmt.Errorf("negative stride in %v", s)
		}
	}
	if slices.ContainsFunc(shape, func(d int) bool { return d < 0 }) {
		return fmt.Errorf("negative dimension in shape %v", shape)
	}
	if n := extent(shape, dstStrides); n*dsz > len(dst) {
		return fmt.Errorf("shape %v with strides %v needs %d bytes, destination has %d", shape, dstStrides, n*dsz, len(dst))
	}
	if n := extent(shape, srcStrides); n*ssz > len(src) {
		return fmt.Errorf("shape %v with strides %v needs %d bytes, source has %d", shape, srcStrides, n*ssz, len(src))
	}

	cs := contiguousStrides(shape)
	if same && slices.Equal(dstStrides, cs) && slices.Equal(srcStrides, cs) {
		n := coreml.NumElements(shape) * dsz
		copy(dst[:n], src[:n])
		return nil
	}
	rowLen, ds, ss := 1, 1, 1
	if r := len(shape); r > 0 {
		rowLen, ds, ss = shape[r-1], dstStrides[r-1], srcStrides[r-1]
	}
	eachRow(shape, dstStrides, srcStrides, func(do, so int) {
		switch {
		case same && ds == 1 && ss == 1:
			copy(dst[do*dsz:(do+rowLen)*dsz], src[so*ssz:(so+rowLen)*ssz])
		case same:
			for i := range rowLen {
				d, s := (do+i*ds)*dsz, (so+i*ss)*ssz
				copy(dst[d:d+dsz], src[s:s+ssz])
			}
		default:
			for i := range rowLen {
				putFloat(dst[(do+i*ds)*dsz:], dstRaw, getFloat(src[(so+i*ss)*ssz:], srcRaw))
			}
		}
	})
	return nil
}

// eachRow calls fn with the starting offsets, under strides a and b, of every
// row (run along the innermost dimension) of shape. A scalar is one row.
func eachRow(shape, a, b []int, fn func(offA, offB int)) {
	if slices.Contains(shape, 0) {
		return
	}
	outer := len(shape) - 1
	if outer <= 0 {
		fn(0, 0)
		return
	}
	idx := make([]int, outer)
	offA, offB := 0, 0
	for {
		fn(offA, offB)
		k := outer - 1
		for ; k >= 0; k-- {
			idx[k]++
			offA += a[k]
			offB += b[k]
			if idx[k] < shape[k] {
				break
			}
			offA -= a[k] * shape[k]
			offB -= b[k] * shape[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

func getFloat(b []byte, raw int) float64 {
	switch raw {
	case mlFloat16:
		return float64(f16.ToF32(binary.LittleEndian.Uint16(b)))
	case mlFloat32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case mlFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	panic("coreml: getFloat of " + rawTypeName(raw))
}

func putFloat(b []byte, raw int, v float64) {
	switch raw {
	case mlFloat16:
		binary.LittleEndian.PutUint16(b, f16.FromF32(float32(v)))
	case mlFloat32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	case mlFloat64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	default:
		panic("coreml: putFloat of " + rawTypeName(raw))
	}
}
