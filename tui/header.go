package tui

import (
	"fmt"
	"slices"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// header is the model line at the top: which bundle is loaded and what
// it can do.
type header struct {
	st    *Styles
	width int
	info  engine.ModelInfo
	home  string // $HOME: a server's socket under it is shown as ~/…
}

func (h *header) SetSize(w, _ int) { h.width = w }

func (h *header) View() string {
	st := h.st
	left := st.Brand.Render(" orchard ") + st.HeaderName.Render(h.info.Name)
	facts := h.Facts()
	sep := st.HeaderDim.Render(" · ")
	room := h.width - xansi.StringWidth(left) - xansi.StringWidth(sep) - 1
	// Drop facts from the end until the line fits with the full name.
	// Over a server the first fact, where it is attached, stays: its
	// address is shortened in the middle, down to "attached" alone. Then
	// the name itself is shortened.
	for len(facts) > 0 {
		if len(facts) == 1 && h.info.Server != "" && xansi.StringWidth(facts[0]) > room {
			const prefix = "attached to "
			facts[0] = "attached"
			if n := room - len(prefix); n >= 16 {
				facts[0] = prefix + middleEllipsis(h.address(), n)
			}
		}
		right := st.HeaderDim.Render(strings.Join(facts, " · ")) + st.HeaderDim.Render(" ")
		if xansi.StringWidth(left)+xansi.StringWidth(sep)+xansi.StringWidth(right) <= h.width {
			return h.pad(left, right)
		}
		facts = facts[:len(facts)-1]
	}
	return h.pad(xansi.Truncate(left, h.width, "…"), "")
}

// address is the server's address as the header shows it: a socket under
// $HOME starts with ~.
func (h *header) address() string {
	a := h.info.Server
	if h.home == "" || h.home == "/" {
		return a
	}
	home := strings.TrimSuffix(h.home, "/") + "/"
	if rest, ok := strings.CutPrefix(a, "unix:"+home); ok {
		return "unix:~/" + rest
	}
	if rest, ok := strings.CutPrefix(a, home); ok {
		return "~/" + rest
	}
	return a
}

// middleEllipsis shortens s to at most w cells by cutting its middle, so
// both ends of a path stay: unix:/Users/al…/run/orchard.sock.
func middleEllipsis(s string, w int) string {
	if xansi.StringWidth(s) <= w {
		return s
	}
	if w < 2 {
		return xansi.Truncate(s, w, "")
	}
	head := xansi.Truncate(s, (w-1)/2, "")
	rs := []rune(s)
	tail, tw := "", 0
	for i := len(rs) - 1; i >= 0; i-- {
		cw := xansi.StringWidth(string(rs[i]))
		if xansi.StringWidth(head)+1+tw+cw > w {
			break
		}
		tail, tw = string(rs[i])+tail, tw+cw
	}
	return head + "…" + tail
}

func (h *header) pad(left, right string) string {
	gap := h.width - xansi.StringWidth(left) - xansi.StringWidth(right)
	if gap < 0 {
		return xansi.Truncate(left+right, h.width, "")
	}
	return left + h.st.Header.Render(strings.Repeat(" ", gap)) + right
}

// Facts lists what the header shows after the name, most important
// first.
func (h *header) Facts() []string {
	i := h.info
	var f []string
	if i.Server != "" {
		f = append(f, "attached to "+h.address())
	}
	if i.Family != "" {
		f = append(f, i.Family)
	}
	if i.Context > 0 {
		f = append(f, "ctx "+commas(i.Context))
	}
	f = append(f, specCapability(i.VerifyWidths))
	if i.ComputeUnits != "" {
		f = append(f, i.ComputeUnits)
	}
	if i.Logits {
		f = append(f, "sampling")
	} else {
		f = append(f, "argmax")
	}
	if len(i.Media) > 0 {
		f = append(f, "+"+strings.Join(i.Media, "+")) // /image, /audio work
	}
	if i.Runtime != "" {
		f = append(f, i.Runtime)
	}
	return f
}

func specCapability(widths []int) string {
	switch len(widths) {
	case 0:
		return "no speculation"
	case 1:
		return fmt.Sprintf("verify %d", widths[0])
	}
	return fmt.Sprintf("verify %d–%d", slices.Min(widths), slices.Max(widths))
}
