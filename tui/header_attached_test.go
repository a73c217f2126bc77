package tui

import (
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// TestHeaderSaysAttached: over a server the header says so first, so it
// survives a narrow terminal.
func TestHeaderSaysAttached(t *testing.T) {
	info := engine.ModelInfo{Name: "demo-r1", Family: "r1", Context: 2048, VerifyWidths: []int{4}, Runtime: "reference",
		Attached: "unix:/run/orchard.sock"}
	for _, w := range []int{80, 120} {
		h := header{st: newStyles(true, true), info: info}
		h.SetSize(w)
		if v := xansi.Strip(h.View()); !strings.Contains(v, "attached to unix:/run/orchard.sock") {
			t.Errorf("width %d: %q", w, v)
		}
	}
	h := header{st: newStyles(true, true), info: engine.ModelInfo{Name: "demo-r1"}}
	h.SetSize(80)
	if strings.Contains(h.View(), "attached") {
		t.Error("a local engine's header says attached")
	}
}
