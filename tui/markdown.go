package tui

import (
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	xansi "github.com/charmbracelet/x/ansi"
)

// markdown renders replies with glamour. A TermRenderer is costly to
// build (style parsing) and wraps at a fixed width, so one is kept per
// width; the map stays tiny because widths change only on resize.
type markdown struct {
	style     ansi.StyleConfig
	renderers map[int]*glamour.TermRenderer
}

func newMarkdown(dark, noColor bool) *markdown {
	var st ansi.StyleConfig
	switch {
	case noColor:
		st = styles.ASCIIStyleConfig
	case dark:
		st = styles.DarkStyleConfig
	default:
		st = styles.LightStyleConfig
	}
	// The conversation pane owns margins and spacing between messages.
	var zero uint
	st.Document.Margin = &zero
	st.Document.BlockPrefix = ""
	st.Document.BlockSuffix = ""
	return &markdown{style: st, renderers: map[int]*glamour.TermRenderer{}}
}

// render returns the lines of text rendered as markdown at width. It
// never fails: if glamour refuses the input the text is wrapped plainly.
func (md *markdown) render(text string, width int) []string {
	width = max(width, 10)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	r, ok := md.renderers[width]
	if !ok {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStyles(md.style), glamour.WithWordWrap(width))
		if err != nil {
			return wrapPlain(text, width)
		}
		md.renderers[width] = r
	}
	out, err := r.Render(literalHTML(text))
	if err != nil {
		return wrapPlain(text, width)
	}
	return cleanLines(out, width)
}

// cleanLines splits glamour output into lines, drops the blank lines it
// puts around the document and the styled padding it appends to every
// line (kilobytes of escapes per screen otherwise), and cuts anything a
// wide table or URL pushed past the width.
func cleanLines(out string, width int) []string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		l = trimStyledSpace(l)
		if xansi.StringWidth(l) > width {
			l = xansi.Truncate(l, width, "…")
		}
		lines[i] = l
	}
	for len(lines) > 0 && xansi.Strip(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && xansi.Strip(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// trimStyledSpace removes trailing spaces and the SGR sequences between
// them, then closes any style left open so it cannot bleed into the
// next line.
func trimStyledSpace(l string) string {
	end := len(l)
	for end > 0 {
		switch {
		case l[end-1] == ' ':
			end--
		case l[end-1] == 'm':
			i := strings.LastIndex(l[:end], "\x1b[")
			if i < 0 || !isSGRParams(l[i+2:end-1]) {
				return closeStyle(l[:end])
			}
			end = i
		default:
			return closeStyle(l[:end])
		}
	}
	return ""
}

func isSGRParams(p string) bool {
	for i := 0; i < len(p); i++ {
		if (p[i] < '0' || p[i] > '9') && p[i] != ';' && p[i] != ':' {
			return false
		}
	}
	return true
}

func closeStyle(l string) string {
	if strings.Contains(l, "\x1b[") && !strings.HasSuffix(l, "\x1b[m") && !strings.HasSuffix(l, "\x1b[0m") {
		return l + "\x1b[m"
	}
	return l
}

// wrapPlain word-wraps text (which may carry styles) to width.
func wrapPlain(text string, width int) []string {
	if text == "" {
		return nil
	}
	return strings.Split(xansi.Wrap(text, max(width, 1), ""), "\n")
}

// streamMarkdown renders a reply while it grows. The text before the
// last safe boundary (see safeBoundary) is rendered once and kept; each
// frame renders only the unfinished tail after it. Two renders glued at
// a blank line can differ slightly from one render of the whole, so the
// finished reply is rendered again in one piece.
type streamMarkdown struct {
	width  int
	origin int      // where text starts in the reply; another origin is another part
	stable int      // bytes of text covered by lines
	lines  []string // render of text[:stable]
}

func (s *streamMarkdown) reset() { *s = streamMarkdown{} }

func (s *streamMarkdown) render(md *markdown, text string, width, origin int) []string {
	if width != s.width || origin != s.origin || s.stable > len(text) {
		*s = streamMarkdown{width: width, origin: origin}
	}
	if b := safeBoundary(text, s.stable); b > s.stable {
		chunk := md.render(text[s.stable:b], width)
		s.lines = glue(s.lines, chunk)
		s.stable = b
	}
	tail := md.render(text[s.stable:], width)
	if len(tail) == 0 {
		return s.lines
	}
	return glue(s.lines, tail)
}

// glue joins two rendered fragments with one blank line, as glamour
// separates blocks. It never aliases a's backing array, which holds the
// cached stable lines.
func glue(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]string, 0, len(a)+1+len(b))
	out = append(out, a...)
	out = append(out, "")
	return append(out, b...)
}

// safeBoundary returns the largest offset p > from such that text[:p]
// ends with a blank line and rendering text[:p] and text[p:] separately
// cannot change how either is read, or from if there is none. from must
// itself be such a boundary (or 0). The rules are deliberately
// conservative; a missed boundary only costs a larger tail render.
//
// A cut is safe after a blank line that is outside any fenced block,
// when the next line is complete, starts at column 0 and does not start
// a list item (it would continue a loose list). Link reference
// definitions and raw HTML blocks can reach across blank lines, so
// their presence stops the advance.
func safeBoundary(text string, from int) int {
	best := from
	inFence := false
	var fence string
	prevBlank := false
	for pos := from; pos < len(text); {
		nl := strings.IndexByte(text[pos:], '\n')
		if nl < 0 {
			break // an incomplete line decides nothing yet
		}
		line := text[pos : pos+nl]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if inFence {
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				inFence = false
			}
			prevBlank = false
			pos += nl + 1
			continue
		}
		blank := strings.TrimSpace(line) == ""
		if !blank && prevBlank && indent == 0 && line[0] != '\t' && !isListItem(line) {
			best = pos
		}
		switch {
		case blank:
		case indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			inFence = true
			fence = trimmed[:3]
		case indent < 4 && strings.HasPrefix(trimmed, "<"):
			return best
		case indent < 4 && isLinkDefinition(trimmed):
			return from
		}
		prevBlank = blank
		pos += nl + 1
	}
	return best
}

// isListItem reports whether line starts a bullet or ordered list item.
func isListItem(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

func isLinkDefinition(t string) bool {
	if !strings.HasPrefix(t, "[") {
		return false
	}
	end := strings.Index(t, "]:")
	return end > 1 && !strings.ContainsAny(t[1:end], "[]")
}

// Gemma 4 wraps its reasoning in channel markers; the text between them
// is shown folded.
const (
	thinkOpen  = "<|channel>"
	thinkClose = "<channel|>"
)

// part is a run of a reply: the answer or a thinking block.
type part struct {
	start, end int // byte offsets into the reply text
	thinking   bool
	open       bool // thinking block still being generated
}

// splitThinking cuts a reply into answer and thinking parts. The final
// bytes of a streaming reply that could be the start of a marker are
// left out so a half-arrived marker never flashes on screen.
func splitThinking(text string) []part {
	var parts []part
	pos := 0
	for pos < len(text) {
		i := strings.Index(text[pos:], thinkOpen)
		if i < 0 {
			end := len(text) - partialMarker(text[pos:], thinkOpen)
			if end > pos {
				parts = append(parts, part{start: pos, end: end})
			}
			break
		}
		if i > 0 {
			parts = append(parts, part{start: pos, end: pos + i})
		}
		body := pos + i + len(thinkOpen)
		j := strings.Index(text[body:], thinkClose)
		if j < 0 {
			parts = append(parts, part{start: body, end: len(text) - partialMarker(text[body:], thinkClose), thinking: true, open: true})
			break
		}
		parts = append(parts, part{start: body, end: body + j, thinking: true})
		pos = body + j + len(thinkClose)
	}
	return parts
}

// partialMarker returns how many trailing bytes of s are a proper prefix
// of marker.
func partialMarker(s, marker string) int {
	for n := min(len(marker)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, marker[:n]) {
			return n
		}
	}
	return 0
}

// thinkingBody strips the channel name Gemma writes first ("thought").
func thinkingBody(s string) string {
	s = strings.TrimPrefix(s, "thought")
	return strings.TrimSpace(s)
}

// stripThinking returns the reply without its thinking blocks: what
// /copy and /export take as the answer.
func stripThinking(text string) string {
	var b strings.Builder
	for _, p := range splitThinking(text) {
		if !p.thinking {
			b.WriteString(text[p.start:p.end])
		}
	}
	return strings.TrimSpace(b.String())
}
