//go:build darwin && cgo

package darwin

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/orchard-llm/orchard/coreml"
	ml "github.com/progrium/darwinkit/macos/coreml"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

// compileToTemp compiles src with Core ML and returns the .mlmodelc it left
// in a temporary directory. It uses +compileModelAtURL:completionHandler:
// (macOS 13, documented for .mlpackage) and falls back to the synchronous
// +compileModelAtURL:error:.
func compileToTemp(src string) (string, error) {
	var out string
	err := withPool(func() error {
		url := foundation.URL_FileURLWithPath(src)
		async := objc.Sel("compileModelAtURL:completionHandler:")
		if objc.ObjectFrom(ml.ModelClass.Ptr()).RespondsToSelector(async) { // a class method
			done := make(chan error, 1)
			objc.Call[objc.Void](ml.ModelClass, async, url, func(u foundation.URL, e foundation.Error) {
				// Runs once, on a Core ML dispatch queue.
				defer func() {
					if r := recover(); r != nil {
						done <- fmt.Errorf("compile handler: %v", r)
					}
				}()
				if u.IsNil() {
					done <- nsError("compile", src, "", e, nil)
					return
				}
				out = u.Path()
				done <- nil
			})
			return <-done
		}
		var e foundation.Error
		u := objc.Call[foundation.URL](ml.ModelClass, objc.Sel("compileModelAtURL:error:"), url, unsafe.Pointer(&e))
		if u.IsNil() {
			return nsError("compile", src, "", e, nil)
		}
		out = u.Path()
		return nil
	})
	if err != nil {
		return "", asError(err, "compile", src, "")
	}
	if out == "" {
		return "", &coreml.Error{Op: "compile", Path: src, Err: errors.New("Core ML returned no compiled model")}
	}
	return out, nil
}
