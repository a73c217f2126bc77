//go:build darwin && cgo

package darwin

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

// withPool runs fn inside an autorelease pool, so the strings, numbers,
// arrays, blocks and results darwinkit creates for one operation are freed
// when it ends. fn runs as a cgo callback: a panic (darwinkit panics on a nil
// receiver) must not unwind through the Objective-C frames, so it becomes
// an error.
func withPool(fn func() error) (err error) {
	objc.WithAutoreleasePool(func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("objective-c bridge: %v", r)
			}
		}()
		err = fn()
	})
	return err
}

// objcRef owns one retain count of an Objective-C object and gives it up once.
type objcRef struct {
	once sync.Once
	obj  objc.Object
}

func (r *objcRef) release() {
	r.once.Do(func() {
		objc.WithAutoreleasePool(r.obj.Release)
	})
}

// ints reads an NSArray<NSNumber*> without darwinkit's slice conversion,
// which misbehaves on empty arrays in v0.5.0.
func ints(arr objc.Object) []int {
	if arr.IsNil() {
		return nil
	}
	n := objc.Call[int](arr, objc.Sel("count"))
	out := make([]int, n)
	for i := range out {
		out[i] = objc.Call[foundation.Number](arr, objc.Sel("objectAtIndex:"), i).IntegerValue()
	}
	return out
}

// numberInts converts the NSNumbers darwinkit handed to a block.
func numberInts(ns []foundation.Number) []int {
	out := make([]int, len(ns))
	for i, n := range ns {
		out[i] = n.IntegerValue()
	}
	return out
}

// numbers builds an NSArray<NSNumber*> argument; NSInteger-valued, as
// shapes and strides are declared.
func numbers(v []int) []foundation.Number {
	out := make([]foundation.Number, len(v))
	for i, n := range v {
		out[i] = foundation.Number_NumberWithInteger(n)
	}
	return out
}

// nsError turns the NSError of a failed operation into an *Error. sentinel,
// if not nil, classifies the failure (e.g. ErrFunctionUnavailable). Call it
// inside the pool that owns e.
func nsError(op, path, function string, e foundation.Error, sentinel error) *coreml.Error {
	err := &coreml.Error{Op: op, Path: path, Function: function, Err: sentinel}
	if e.IsNil() {
		if err.Err == nil {
			err.Err = errors.New("Core ML failed without an NSError")
		}
		return err
	}
	err.Domain = string(e.Domain())
	err.Code = e.Code()
	err.Description = e.LocalizedDescription()
	if reason := e.LocalizedFailureReason(); reason != "" && !strings.Contains(err.Description, reason) {
		err.Description += " (" + reason + ")"
	}
	return err
}
