//go:build !(darwin && cgo)

package media

import "testing"

// TestDefaultOptionsElsewhere: without macOS and cgo there is no system
// decoder, and DefaultOptions is the zero Options.
func TestDefaultOptionsElsewhere(t *testing.T) {
	if o := DefaultOptions(); o != (Options{}) {
		t.Errorf("DefaultOptions() = %+v, want the zero Options", o)
	}
}
