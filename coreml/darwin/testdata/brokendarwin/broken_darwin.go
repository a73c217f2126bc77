//go:build darwin && cgo

// Package brokendarwin is a deliberately broken darwin-only file: the
// cross-platform type check must reject every line marked "want".
package brokendarwin

/*
#include <stdlib.h>

static void *orchard_allocate(size_t n) { return malloc(n); }
*/
import "C"

import (
	"unsafe"

	ml "github.com/progrium/darwinkit/macos/coreml"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

func load(path string) ml.Model {
	var m ml.Model
	objc.WithAutoreleasePool(func() {
		cfg := ml.NewModelConfiguration()
		cfg.SetComputeUnit(ml.ComputeUnitsAll) // want: misspelled method
		cfg.SetComputeUnits("all")             // want: wrong argument type
		var e foundation.Error
		m = ml.Model_ModelWithContentsOfURLConfigurationError(foundation.URL_FileURLWithPath(path), cfg, unsafe.Pointer(&e))
		objc.Call[objc.Void](cfg, objc.Sel("setFunctionName:"), "decode", "extra")                    // want: selector arity
		objc.Call[objc.Void](m, objc.Sel("newStat"))                                                  // want: unknown selector
		objc.Call[objc.Void](m, objc.Sel("getBytesWithHandler:"), func(p unsafe.Pointer, n int32) {}) // want: NSInteger is int
	})
	p := C.orchard_alocate(16) // want: not in the preamble
	C.free(p)
	return m
}
