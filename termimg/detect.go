package termimg

import (
	"fmt"
	"strings"
)

// Detector decides the protocol from the environment and the terminal's
// replies. Use it from one goroutine (a Bubble Tea Update).
//
//	d := termimg.NewDetector(termimg.EnvFrom(os.Getenv))
//	cmd := tea.Raw(d.Query())                       // once, at start
//	// in Update:
//	case uv.PrimaryDeviceAttributesEvent: d.FeedDA1(msg)
//	case uv.KittyGraphicsEvent: d.FeedKitty(msg.Options.ID, string(msg.Payload))
//	case tea.TerminalVersionMsg: d.FeedVersion(msg.Name)
//	// or, with raw bytes: d.Feed(seq)
//	// then, once d.Done(): d.Protocol()
type Detector struct {
	env     Env
	kittyOK bool
	version string
	sixel   bool
	done    bool
}

// NewDetector starts detection for a terminal described by env.
func NewDetector(env Env) *Detector {
	return &Detector{env: env, done: env.Dumb()}
}

// Query is the bytes to write to the terminal: the kitty graphics query
// (through tmux passthrough inside tmux, since only the outer terminal can
// answer it), XTVERSION, then DA1, which every terminal answers last.
// A dumb terminal gets nothing.
func (d *Detector) Query() string {
	if d.env.Dumb() {
		return ""
	}
	k := QueryKitty
	if d.env.InTmux() {
		k = Passthrough(k)
	}
	return k + QueryVersion + QueryDA1
}

// Feed takes one raw reply sequence (see SplitReplies) and reports whether
// it was one the Detector asked for.
func (d *Detector) Feed(seq string) bool {
	if r, ok := ParseKittyReply(seq); ok {
		return d.FeedKitty(r.ID, r.Message)
	}
	if v, ok := ParseVersion(seq); ok {
		d.FeedVersion(v)
		return true
	}
	if attrs, ok := ParseDA1(seq); ok {
		d.FeedDA1(attrs)
		return true
	}
	return false
}

// FeedKitty takes a kitty graphics reply; only the answer to QueryKitty
// counts.
func (d *Detector) FeedKitty(id int, payload string) bool {
	if id != KittyQueryID {
		return false
	}
	d.kittyOK = payload == "OK"
	return true
}

// FeedVersion takes the XTVERSION text.
func (d *Detector) FeedVersion(name string) { d.version = name }

// FeedDA1 takes the primary device attributes, which end detection.
func (d *Detector) FeedDA1(attrs []int) {
	d.sixel = SixelInDA1(attrs)
	d.done = true
}

// Done reports whether every reply that will come has come.
func (d *Detector) Done() bool { return d.done }

// Protocol is the best protocol confirmed so far: kitty if its query was
// answered OK; iTerm2 if the environment or XTVERSION names iTerm2 or
// WezTerm; sixel if DA1 lists it; else None.
func (d *Detector) Protocol() Protocol {
	switch {
	case d.kittyOK:
		return Kitty
	case d.env.ITerm2() || strings.HasPrefix(d.version, "iTerm2") || strings.HasPrefix(d.version, "WezTerm"):
		return ITerm2
	case d.sixel:
		return Sixel
	}
	return None
}

// Tmux reports whether pictures must be wrapped for tmux passthrough:
// kitty and iTerm2 sequences inside tmux are (sixel is drawn by tmux
// itself, which lists it in its own DA1 reply).
func (d *Detector) Tmux() bool {
	p := d.Protocol()
	return d.env.InTmux() && (p == Kitty || p == ITerm2)
}

// Version is the terminal's XTVERSION reply ("kitty(0.35.2)", "ghostty
// 1.1.3"), "" when it sent none.
func (d *Detector) Version() string { return d.version }

// Placeholders reports whether the terminal draws kitty virtual placements
// over Unicode placeholder cells (U=1): kitty from 0.28.0, Ghostty. Other
// kitty-protocol terminals, and older kittys, reject U=1 — and would show
// the placeholder cells as boxes — so support is read from the version,
// never assumed from the graphics query alone.
func (d *Detector) Placeholders() bool {
	if d.Protocol() != Kitty {
		return false
	}
	v := strings.ToLower(d.version)
	switch {
	case strings.HasPrefix(v, "ghostty"):
		return true
	case strings.HasPrefix(v, "kitty("):
		var major, minor int
		if _, err := fmt.Sscanf(v, "kitty(%d.%d", &major, &minor); err != nil {
			return false
		}
		return major > 0 || minor >= 28
	}
	return false
}
