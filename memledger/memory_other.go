//go:build !linux && !(darwin && cgo)

package memledger

import (
	"fmt"
	"runtime"
)

// Read has no source for the ledger on this system.
func Read() (Memory, error) {
	if runtime.GOOS == "darwin" {
		return Memory{}, fmt.Errorf("memory ledger needs cgo on macOS (this binary was built with CGO_ENABLED=0)")
	}
	return Memory{}, fmt.Errorf("memory ledger not available on %s", runtime.GOOS)
}
