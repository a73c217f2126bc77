package cli

import (
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/termsafe"
)

// writeTable prints rows as columns two spaces apart, padded by display
// width — text/tabwriter counts runes, so a name with wide characters
// (CJK, emoji: two cells each) would push the columns after it out of
// line. Columns listed in right are right-aligned (numbers). Cells hold
// names and values from files, so each is shown through termsafe.Line.
func writeTable(w io.Writer, rows [][]string, right ...int) error {
	for _, r := range rows {
		for i, c := range r {
			r[i] = termsafe.Line(c)
		}
	}
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	isRight := make([]bool, len(widths))
	for _, i := range right {
		if i < len(isRight) {
			isRight[i] = true
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			switch {
			case isRight[i]:
				b.WriteString(pad + c)
			case i == len(r)-1:
				b.WriteString(c) // no trailing spaces
			default:
				b.WriteString(c + pad)
			}
			if i < len(r)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// commas writes n with thousands separators, as the chat screen does.
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
