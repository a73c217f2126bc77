package termimg

import "github.com/charmbracelet/x/ansi"

// Passthrough wraps a sequence so tmux hands it to the outer terminal
// (ESC P tmux; with every ESC doubled, ESC \). It needs tmux's
// allow-passthrough option.
func Passthrough(seq string) string { return ansi.TmuxPassthrough(seq) }
