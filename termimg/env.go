package termimg

import "strings"

// Env is what the environment says about the terminal.
type Env struct {
	Term          string // TERM
	TermProgram   string // TERM_PROGRAM (tmux overwrites it with "tmux")
	LCTerminal    string // LC_TERMINAL: iTerm2 sets it, and ssh forwards LC_* by default
	KittyWindowID string // KITTY_WINDOW_ID (local only; not forwarded over ssh)
	Tmux          string // TMUX: set inside a tmux session
}

// EnvFrom reads the variables through getenv (os.Getenv, or a map in tests).
func EnvFrom(getenv func(string) string) Env {
	return Env{
		Term:          getenv("TERM"),
		TermProgram:   getenv("TERM_PROGRAM"),
		LCTerminal:    getenv("LC_TERMINAL"),
		KittyWindowID: getenv("KITTY_WINDOW_ID"),
		Tmux:          getenv("TMUX"),
	}
}

// InTmux reports whether sequences for the outer terminal need tmux's
// passthrough wrapper (and its allow-passthrough option).
func (e Env) InTmux() bool {
	return e.Tmux != "" || strings.HasPrefix(e.Term, "tmux") || e.TermProgram == "tmux"
}

// Dumb reports a terminal that must not be sent any query.
func (e Env) Dumb() bool { return e.Term == "" || e.Term == "dumb" }

// ITerm2 reports whether the environment names a terminal that implements
// iTerm2 inline images (no terminal reply confirms this protocol, so
// iTerm2's own LC_TERMINAL, TERM_PROGRAM and XTVERSION are the evidence).
func (e Env) ITerm2() bool {
	return e.LCTerminal == "iTerm2" || e.TermProgram == "iTerm.app" || e.TermProgram == "WezTerm"
}

// KittyLikely reports whether the environment suggests a kitty-protocol
// terminal; a Detector still asks before using it.
func (e Env) KittyLikely() bool {
	return e.KittyWindowID != "" || e.Term == "xterm-kitty" || e.TermProgram == "ghostty" || e.Term == "xterm-ghostty"
}
