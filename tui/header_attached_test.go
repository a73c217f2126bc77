package tui

import (
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// TestHeaderSaysAttached: over a server the header says so first, so it
// survives a narrow terminal: a socket under $HOME starts with ~, and an
// address too long for the room left is shortened in the middle, down to
// "attached" alone, never dropped.
func TestHeaderSaysAttached(t *testing.T) {
	info := engine.ModelInfo{Name: "demo-r1", Family: "r1", Context: 2048, VerifyWidths: []int{4}, Runtime: "reference",
		Server: "unix:/run/orchard.sock"}
	for _, w := range []int{80, 120} {
		h := header{st: newStyles(true, true), info: info}
		h.SetSize(w, 1)
		if v := xansi.Strip(h.View()); !strings.Contains(v, "attached to unix:/run/orchard.sock") {
			t.Errorf("width %d: %q", w, v)
		}
	}
	h := header{st: newStyles(true, true), info: engine.ModelInfo{Name: "demo-r1"}}
	h.SetSize(80, 1)
	if strings.Contains(h.View(), "attached") {
		t.Error("a local engine's header says attached")
	}

	long := engine.ModelInfo{Name: "gemma-4-e2b-it-coreml-speculative", Family: "stateful3", Context: 4096, Runtime: "coreml",
		Server: "unix:/Users/alice/Library/Application Support/orchard/run/orchard.sock"}
	for _, c := range []struct {
		width int
		home  string
		want  string
	}{
		{200, "/Users/alice", "attached to unix:~/Library/Application Support/orchard/run/orchard.sock · stateful3 · ctx 4,096 · no speculation · argmax · coreml "},
		{100, "/Users/alice", "attached to unix:~/Library/Appli…hard/run/orchard.sock "},
		{100, "", "attached to unix:/Users/alice/Li…hard/run/orchard.sock "},
		{80, "/Users/alice", "attached to unix:~/Lib…rchard.sock "},
		{64, "/Users/alice", "attached "},
	} {
		h := header{st: newStyles(true, true), info: safeInfo(long), home: c.home}
		h.SetSize(c.width, 1)
		v := xansi.Strip(h.View())
		if !strings.HasSuffix(v, c.want) || xansi.StringWidth(v) != c.width || !strings.Contains(v, long.Name) {
			t.Errorf("width %d, HOME %q:\n%q\nwant it to end in %q", c.width, c.home, v, c.want)
		}
	}
}
