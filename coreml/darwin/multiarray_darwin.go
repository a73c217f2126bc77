//go:build darwin && cgo

package darwin

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/orchard-llm/orchard/coreml"
	ml "github.com/progrium/darwinkit/macos/coreml"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

// wrapArray makes an MLMultiArray over the C-order elements of shape at p,
// which holds n bytes, without copying them (initWithDataPointer:…). The
// shape is validated first (checkWrap): Core ML would raise an uncatchable
// exception on a rank-0 or a shape the memory does not hold. The
// deallocator is NULL, because the memory belongs to an arena, so
// darwinkit's generated wrapper, which always passes a block, is bypassed.
// The array is autoreleased: call inside a pool, and keep p alive until the
// pool drains.
func wrapArray(p unsafe.Pointer, n int, shape []int, dt coreml.DType) (ml.MultiArray, error) {
	raw, err := multiArrayDataType(dt)
	if err != nil {
		return ml.MultiArray{}, err
	}
	strides := contiguousStrides(shape)
	if err := checkWrap(p != nil, n, shape, strides, dt); err != nil {
		return ml.MultiArray{}, err
	}
	var e foundation.Error
	arr := objc.Call[ml.MultiArray](ml.MultiArrayClass.Alloc(),
		objc.Sel("initWithDataPointer:shape:dataType:strides:deallocator:error:"),
		p, numbers(shape), ml.MultiArrayDataType(raw), numbers(strides), nil, unsafe.Pointer(&e))
	if arr.IsNil() {
		return arr, nsError("", "", "", e, nil) // the bare NSError; the caller adds the model
	}
	arr.Autorelease()
	return arr, nil
}

// layout is how an MLMultiArray stores its elements.
type layout struct {
	shape   []int
	strides []int
	raw     int // MLMultiArrayDataType
}

func layoutOf(arr ml.MultiArray) layout {
	return layout{
		shape:   ints(objc.Call[objc.Object](arr, objc.Sel("shape"))),
		strides: ints(objc.Call[objc.Object](arr, objc.Sel("strides"))),
		raw:     int(arr.DataType()),
	}
}

// readArray copies arr, laid out as l, into the contiguous dst of dtype dt,
// honouring its strides and converting float widths. It reads through
// getBytesWithHandler: (macOS 12.3), whose pointer is valid only inside
// the block, and falls back to dataPointer before that.
func readArray(arr ml.MultiArray, l layout, dst []byte, dt coreml.DType) error {
	size := rawSize(l.raw)
	if size == 0 {
		return fmt.Errorf("unsupported MLMultiArray data type %s", rawTypeName(l.raw))
	}
	sel := objc.Sel("getBytesWithHandler:")
	if !arr.RespondsToSelector(sel) {
		p := objc.Call[unsafe.Pointer](arr, objc.Sel("dataPointer"))
		strides, err := effectiveStrides(l.shape, l.strides, -1)
		if err != nil {
			return err
		}
		return gatherStrided(dst, dt, bytesAt(p, extent(l.shape, strides)*size), l.raw, l.shape, strides)
	}
	var err error
	called := false
	objc.Call[objc.Void](arr, sel, func(p unsafe.Pointer, n int) {
		called = true
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("reading multi-array: %v", r)
			}
		}()
		strides, serr := effectiveStrides(l.shape, l.strides, n/size)
		if serr != nil {
			err = serr
			return
		}
		err = gatherStrided(dst, dt, bytesAt(p, n), l.raw, l.shape, strides)
	})
	if !called && err == nil {
		err = errors.New("getBytesWithHandler: did not call its handler")
	}
	return err
}

// writeArray copies the contiguous src of dtype dt into arr, which must have
// the given shape, through getMutableBytesWithHandler: and the strides that
// block hands over (it may switch to a new backing buffer).
func writeArray(arr ml.MultiArray, shape []int, src []byte, dt coreml.DType) error {
	l := layoutOf(arr)
	if !slices.Equal(l.shape, shape) {
		return fmt.Errorf("buffer shape %v, tensor shape %v", l.shape, shape)
	}
	size := rawSize(l.raw)
	if size == 0 {
		return fmt.Errorf("unsupported MLMultiArray data type %s", rawTypeName(l.raw))
	}
	var err error
	called := false
	objc.Call[objc.Void](arr, objc.Sel("getMutableBytesWithHandler:"), func(p unsafe.Pointer, n int, strides []foundation.Number) {
		called = true
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("writing multi-array: %v", r)
			}
		}()
		st, serr := effectiveStrides(shape, numberInts(strides), n/size)
		if serr != nil {
			err = serr
			return
		}
		err = scatterStrided(bytesAt(p, n), l.raw, st, src, dt, shape)
	})
	if !called && err == nil {
		err = errors.New("getMutableBytesWithHandler: did not call its handler")
	}
	return err
}
