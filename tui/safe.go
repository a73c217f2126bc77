package tui

import (
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/termsafe"
)

// Text from files — a bundle's name, a checkpoint's metadata, a loaded
// conversation — and the model's own replies may carry escape sequences.
// The views pass it through termsafe before styling it, so what the user
// sees is the escape spelled out (\x1b]0;…), never obeyed, while our own
// lipgloss styles and the markdown renderer's output stay intact.

// safeInfo is the model's description with its strings made printable:
// the name also goes into the window title, where a stray BEL would end
// the title sequence early and let the rest through.
func safeInfo(i engine.ModelInfo) engine.ModelInfo {
	i.Name, i.Family, i.ComputeUnits, i.Runtime = termsafe.Line(i.Name), termsafe.Line(i.Family), termsafe.Line(i.ComputeUnits), termsafe.Line(i.Runtime)
	i.Server = termsafe.Line(i.Server)
	notes := make([]string, len(i.Notes))
	for k, n := range i.Notes {
		notes[k] = termsafe.Line(n)
	}
	i.Notes = notes
	return i
}

// safeText is message text for display: newlines and tabs kept, every
// other control character spelled out.
func safeText(s string) string { return termsafe.Text(s) }

// safeLine is a one-line field for display.
func safeLine(s string) string { return termsafe.Line(s) }
