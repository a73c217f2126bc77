package coreml

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	for _, tt := range []struct {
		err  *Error
		want string
	}{
		{
			&Error{Op: "load", Path: "/m/chunk_1.mlmodelc", Function: "prefill_b8", Err: ErrFunctionUnavailable,
				Domain: "com.apple.CoreML", Code: 0, Description: "Failed to build the model execution plan"},
			`coreml: load /m/chunk_1.mlmodelc (function "prefill_b8"): model function unavailable on this system: Failed to build the model execution plan [com.apple.CoreML error 0 generic]`,
		},
		{
			&Error{Op: "predict", Path: "/m/chunk_3.mlmodelc", Domain: "com.apple.CoreML", Code: 1, Description: "Input token_id has the wrong shape"},
			`coreml: predict /m/chunk_3.mlmodelc: Input token_id has the wrong shape [com.apple.CoreML error 1 featureType]`,
		},
		{
			&Error{Op: "compile", Path: "/m/lmhead.mlpackage", Domain: "NSCocoaErrorDomain", Code: 260, Description: "The file doesn't exist."},
			`coreml: compile /m/lmhead.mlpackage: The file doesn't exist. [NSCocoaErrorDomain error 260]`,
		},
		{
			&Error{Op: "predict", Path: "/m/c.mlmodelc", Domain: "com.apple.CoreML", Code: 11},
			`coreml: predict /m/c.mlmodelc: no description [com.apple.CoreML error 11 predictionCancelled]`,
		},
		{
			&Error{Op: "new state", Path: "/m/c.mlmodelc", Function: "infer", Err: errors.New("model has no state")},
			`coreml: new state /m/c.mlmodelc (function "infer"): model has no state`,
		},
		{
			&Error{Domain: "com.apple.CoreML", Code: 7, Description: "Shape mismatch"},
			`Shape mismatch [com.apple.CoreML error 7 parameters]`,
		},
		{
			&Error{Op: "predict", Path: "/m/c.mlmodelc", Err: fmt.Errorf("input x: %w", &Error{Domain: "NSCocoaErrorDomain", Code: 4, Description: "Bad pointer"})},
			`coreml: predict /m/c.mlmodelc: input x: Bad pointer [NSCocoaErrorDomain error 4]`,
		},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestErrorUnwrap(t *testing.T) {
	err := fmt.Errorf("engine: prefill widths: %w", &Error{Op: "load", Path: "p", Function: "prefill_b16", Err: ErrFunctionUnavailable})
	if !errors.Is(err, ErrFunctionUnavailable) {
		t.Error("ErrFunctionUnavailable not found through *Error")
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Function != "prefill_b16" {
		t.Errorf("errors.As = %+v", ce)
	}
	if errors.Is(&Error{Op: "load", Err: os.ErrNotExist}, ErrFunctionUnavailable) {
		t.Error("a missing file is not a missing function")
	}
}
