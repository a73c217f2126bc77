package coreml

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnavailable is returned by the Core ML backend on systems without Core ML.
var ErrUnavailable = errors.New("Core ML is only available on macOS (Apple silicon); on this system use a synthetic bundle (orchard bundle synth) or --demo")

// ErrFunctionUnavailable marks a model function that does not load on this
// system: a function an iPhone cannot compile, an OS older than macOS 15
// (which introduced function selection), or a name the model lacks. Engines
// treat it as a missing capability (no batched prefill, no verify) rather
// than a failure.
var ErrFunctionUnavailable = errors.New("model function unavailable on this system")

// ErrUnsupportedUnits marks compute units a model cannot run on correctly.
var ErrUnsupportedUnits = errors.New("compute units not supported for this model")

// Error is a failed Core ML operation on one model. When Core ML returned an
// NSError, Domain, Code and Description carry it; Err holds a sentinel such as
// ErrFunctionUnavailable, or a Go-side cause.
type Error struct {
	Op       string // load, predict, new state, read state, write state, compile
	Path     string // the .mlmodelc (or .mlpackage) folder
	Function string // "" for the default function

	Domain      string // NSError domain, e.g. com.apple.CoreML
	Code        int    // NSError code
	Description string // NSError localizedDescription

	Err error
}

// Error formats as "coreml: OP PATH (function F): ERR: DESCRIPTION [DOMAIN
// error CODE NAME]", leaving out what is not set. Without Op and Path it is
// the bare NSError, for wrapping inside another error.
func (e *Error) Error() string {
	var b strings.Builder
	sep := ""
	if e.Op != "" || e.Path != "" {
		b.WriteString("coreml: ")
		b.WriteString(e.Op)
		if e.Path != "" {
			b.WriteString(" ")
			b.WriteString(e.Path)
		}
		if e.Function != "" {
			fmt.Fprintf(&b, " (function %q)", e.Function)
		}
		sep = ": "
	}
	if e.Err != nil {
		b.WriteString(sep)
		b.WriteString(e.Err.Error())
		sep = ": "
	}
	if e.Description != "" || e.Domain != "" {
		b.WriteString(sep)
		desc := e.Description
		if desc == "" {
			desc = "no description"
		}
		b.WriteString(desc)
		fmt.Fprintf(&b, " [%s error %d", e.Domain, e.Code)
		if name := modelErrorName(e.Domain, e.Code); name != "" {
			b.WriteString(" ")
			b.WriteString(name)
		}
		b.WriteString("]")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// mlModelErrorDomain is MLModelErrorDomain's value.
const mlModelErrorDomain = "com.apple.CoreML"

// modelErrorName names the MLModelError codes of Core ML's own domain.
func modelErrorName(domain string, code int) string {
	if domain != mlModelErrorDomain {
		return ""
	}
	switch code {
	case 0:
		return "generic"
	case 1:
		return "featureType"
	case 3:
		return "io"
	case 4:
		return "customLayer"
	case 5:
		return "customModel"
	case 6:
		return "update"
	case 7:
		return "parameters"
	case 8:
		return "modelDecryptionKeyFetch"
	case 9:
		return "modelDecryption"
	case 10:
		return "modelCollection"
	case 11:
		return "predictionCancelled"
	}
	return ""
}
