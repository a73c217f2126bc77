package tui

import (
	"fmt"
	"strings"
	"unicode"

	"charm.land/lipgloss/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// finder is the search in the conversation (ctrl+f): it looks in the
// text as shown — the lines of each message's body, ignoring case — so
// what it finds is what the user sees highlighted, and it jumps between
// the matches.
type finder struct {
	open    bool
	query   string
	matches []findMatch
	cur     int      // the match shown
	lines   []string // the transcript's lines the matches are in
	at      uint64   // the conversation's changes when they were found
	found   bool     // lines and matches are for query
}

// findMatch is a match: a line of the transcript and its cells.
type findMatch struct{ line, start, end int }

// msgMatches are a message's matches (lines relative to it), for the
// query and the rendering (its first line) they were found in.
type msgMatches struct {
	query string
	first *string
	at    []findMatch
}

func (f *finder) active() bool { return f.open && f.query != "" }

// SetFind searches for q and shows its last match (the newest).
func (c *conversation) SetFind(q string) {
	c.find.open = true
	if q != c.find.query {
		c.find.query, c.find.found = q, false
	}
	c.refind()
	c.find.cur = len(c.find.matches) - 1
	c.showMatch()
}

// FindStep moves to the previous (−1, older) or next (+1) match, round
// the ends.
func (c *conversation) FindStep(d int) {
	c.refind()
	if n := len(c.find.matches); n > 0 {
		c.find.cur = ((c.find.cur+d)%n + n) % n
		c.showMatch()
	}
}

// CloseFind ends the search; the view stays where it is.
func (c *conversation) CloseFind() {
	c.find = finder{}
}

// FindCount returns the match shown (from 1) and how many there are.
func (c *conversation) FindCount() (int, int) {
	c.refind()
	if len(c.find.matches) == 0 {
		return 0, 0
	}
	return c.find.cur + 1, len(c.find.matches)
}

// refind finds the matches again when the transcript changed.
func (c *conversation) refind() {
	f := &c.find
	if !f.active() {
		f.matches, f.lines = nil, nil
		return
	}
	if f.found && f.at == c.changes && c.linesCurrent() {
		return
	}
	prev := findMatch{line: -1}
	if f.cur >= 0 && f.cur < len(f.matches) {
		prev = f.matches[f.cur]
	}
	f.lines, f.matches = f.lines[:0], f.matches[:0]
	q := []rune(strings.ToLower(f.query))
	code := 1
	for i, m := range c.msgs {
		if c.ruleAbove(i) {
			f.lines = append(f.lines, c.windowRule()...)
		}
		ls := c.renderAt(m, code)
		code += len(c.blocksOf(m))
		base := len(f.lines)
		if len(ls) == 0 || m.found.query != f.query || m.found.first != &ls[0] {
			// Searched again only when its lines or the query changed.
			m.found = msgMatches{query: f.query, first: nil}
			if len(ls) > 0 {
				m.found.first = &ls[0]
			}
			for i := m.body[0]; i < m.body[1] && i < len(ls); i++ {
				for _, r := range matchCells(xansi.Strip(ls[i]), q) {
					m.found.at = append(m.found.at, findMatch{line: i, start: r[0], end: r[1]})
				}
			}
		}
		for _, fm := range m.found.at {
			fm.line += base
			f.matches = append(f.matches, fm)
		}
		f.lines = append(f.lines, ls...)
	}
	if n := len(f.lines); n > 0 {
		f.lines = f.lines[:n-1] // the separator after the last message
	}
	f.at, f.found = c.changes, true
	// Stay on the same match when the transcript grew around it.
	f.cur = min(f.cur, len(f.matches)-1)
	for i, m := range f.matches {
		if m == prev {
			f.cur = i
		}
	}
}

// linesCurrent reports whether every message's lines are rendered for
// the present width and flags (a resize or a toggle re-renders them).
func (c *conversation) linesCurrent() bool {
	for _, m := range c.msgs {
		if m.lines == nil || m.key.width != c.width || m.key.drafts != c.showDrafts || m.key.thinking != c.showThinking ||
			m.key.pictures != (c.pics != nil && c.pics.kitty) || m.dirty {
			return false
		}
	}
	return true
}

// matchCells finds q (lower case) in line, ignoring case, and returns
// each match as cells [start, end).
func matchCells(line string, q []rune) [][2]int {
	if len(q) == 0 {
		return nil
	}
	rs := []rune(line)
	var out [][2]int
	for i := 0; i+len(q) <= len(rs); i++ {
		k := 0
		for k < len(q) && unicode.ToLower(rs[i+k]) == q[k] {
			k++
		}
		if k == len(q) {
			start := xansi.StringWidth(string(rs[:i]))
			out = append(out, [2]int{start, start + xansi.StringWidth(string(rs[i:i+k]))})
			i += k - 1
		}
	}
	return out
}

// showMatch scrolls so the current match is in the middle of the view.
func (c *conversation) showMatch() {
	f := &c.find
	if f.cur < 0 || f.cur >= len(f.matches) {
		return
	}
	total := len(f.lines)
	want := total - 1 - f.matches[f.cur].line - c.height/2
	c.fromBottom = max(0, min(want, total-c.height))
}

// findView is View while searching: the window of the transcript with the
// matches highlighted, the current one more strongly.
func (c *conversation) findView() string {
	c.refind()
	f := &c.find
	total := len(f.lines)
	c.fromBottom = max(0, min(c.fromBottom, total-c.height))
	end := max(0, total-c.fromBottom)
	start := max(0, end-c.height)
	window := make([]string, 0, c.height)
	window = append(window, f.lines[start:end]...)
	var ranges []lipgloss.Range
	flush := func(line int) {
		if len(ranges) > 0 && line >= start && line < end {
			window[line-start] = lipgloss.StyleRanges(window[line-start], ranges...)
		}
		ranges = ranges[:0]
	}
	line := -1
	for i, m := range f.matches {
		if m.line < start || m.line >= end {
			continue
		}
		if m.line != line {
			flush(line)
			line = m.line
		}
		st := c.st.FindMatch
		if i == f.cur {
			st = c.st.FindCurrent
		}
		ranges = append(ranges, lipgloss.NewRange(m.start, m.end, st))
	}
	flush(line)
	for len(window) < c.height {
		window = append(window, "")
	}
	if c.fromBottom > 0 {
		hint := fmt.Sprintf(" ↓ %d more lines · ctrl+end follows ", c.fromBottom)
		window[len(window)-1] = c.st.ScrollHint.Render(xansi.Truncate(hint, c.width, "…"))
	}
	return strings.Join(window, "\n")
}
