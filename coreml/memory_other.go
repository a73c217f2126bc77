//go:build !linux && !(darwin && cgo)

package coreml

import (
	"fmt"
	"runtime"
)

// ReadMemory has no source for the ledger on this system.
func ReadMemory() (Memory, error) {
	if runtime.GOOS == "darwin" {
		return Memory{}, fmt.Errorf("coreml: memory ledger needs cgo on macOS (this binary was built with CGO_ENABLED=0)")
	}
	return Memory{}, fmt.Errorf("coreml: memory ledger not available on %s", runtime.GOOS)
}
