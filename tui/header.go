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
}

func (h *header) SetSize(w int) { h.width = w }

func (h *header) View() string {
	st := h.st
	left := st.Brand.Render(" orchard ") + st.HeaderName.Render(h.info.Name)
	facts := h.facts()
	sep := st.HeaderDim.Render(" · ")
	// Drop facts from the end until the line fits with the full name;
	// then shorten the name itself.
	for len(facts) > 0 {
		right := st.HeaderDim.Render(strings.Join(facts, " · ")) + st.HeaderDim.Render(" ")
		if xansi.StringWidth(left)+xansi.StringWidth(sep)+xansi.StringWidth(right) <= h.width {
			return h.pad(left, right)
		}
		facts = facts[:len(facts)-1]
	}
	return h.pad(xansi.Truncate(left, h.width, "…"), "")
}

func (h *header) pad(left, right string) string {
	gap := h.width - xansi.StringWidth(left) - xansi.StringWidth(right)
	if gap < 0 {
		return xansi.Truncate(left+right, h.width, "")
	}
	return left + h.st.Header.Render(strings.Repeat(" ", gap)) + right
}

// facts lists what the header shows after the name, most important
// first.
func (h *header) facts() []string {
	i := h.info
	var f []string
	if i.Attached != "" {
		f = append(f, "attached to "+i.Attached)
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
