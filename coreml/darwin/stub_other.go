//go:build !darwin || !cgo

package darwin

import (
	"fmt"
	"runtime"

	"github.com/orchard-llm/orchard/coreml"
)

// coreMLBuilt reports whether this build has the Core ML backend.
const coreMLBuilt = false

// NewCoreML returns the Core ML backend. It fails on systems other than
// macOS, and on macOS in binaries built without cgo.
func NewCoreML() (coreml.Runtime, error) {
	if runtime.GOOS == "darwin" {
		return nil, fmt.Errorf("coreml: this binary was built with CGO_ENABLED=0: %w", coreml.ErrUnavailable)
	}
	return nil, fmt.Errorf("coreml: %w", coreml.ErrUnavailable)
}

// compileToTemp has no Core ML compiler to call here.
func compileToTemp(src string) (string, error) {
	return "", &coreml.Error{Op: "compile", Path: src, Err: coreml.ErrUnavailable}
}
