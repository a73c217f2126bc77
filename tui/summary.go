package tui

import (
	"fmt"
	"slices"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// What the model sees besides the window, as the conversation shows it:
// the summary in force as a folded block under the window rule (the
// model sees it in place of the turns above), a mark on pinned messages
// (it still sees them verbatim) and on pictures and clips it sees as a
// line. The engine says all of it in each ContextReport.

// contextMarks are the marks the last ContextReport asked for.
type contextMarks struct {
	summary string
	edited  bool
	open    bool // the summary is unfolded
	pinned  []int
	elided  map[int][]string // message → the lines its elided files became
}

// SetContextMarks takes the summary, pins and elisions of a report.
func (c *conversation) SetContextMarks(v engine.ContextView) {
	open := c.marks.open && c.marks.summary == v.Summary
	c.marks = contextMarks{summary: v.Summary, edited: v.Edited, open: open, pinned: slices.Clone(v.Pinned)}
	for _, p := range v.Parts {
		for _, mc := range p.Media {
			if mc.Elided && p.Index >= 0 {
				if c.marks.elided == nil {
					c.marks.elided = map[int][]string{}
				}
				c.marks.elided[p.Index] = append(c.marks.elided[p.Index], mc.Line)
			}
		}
	}
	c.changes++
}

// SetSummary shows a new summary (Compacted), folded.
func (c *conversation) SetSummary(text string) {
	c.marks.summary, c.marks.edited, c.marks.open = text, false, false
	c.changes++
}

// ToggleSummary folds or unfolds the summary; false when there is none.
func (c *conversation) ToggleSummary() bool {
	if c.marks.summary == "" {
		return false
	}
	c.marks.open = !c.marks.open
	c.changes++
	return true
}

// Summary is the summary in force ("" none).
func (c *conversation) Summary() string { return c.marks.summary }

// Pinned reports whether message i is pinned.
func (c *conversation) Pinned(i int) bool { return slices.Contains(c.marks.pinned, i) }

// summaryBlock is the summary's lines under the window rule: one line
// folded, the text unfolded.
func (c *conversation) summaryBlock() []string {
	s := c.marks.summary
	if s == "" {
		return nil
	}
	w := min(max(c.width-len(gutter), 10), maxTextWidth)
	who := "the model's summary"
	if c.marks.edited {
		who = "your summary"
	}
	if !c.marks.open {
		head := fmt.Sprintf("▸ %s of the turns above (%d words) · /summary unfolds · /summary edit changes it", who, len(strings.Fields(s)))
		return []string{gutter + c.st.Version.Render(xansi.Truncate(head, w, "…")), ""}
	}
	out := []string{gutter + c.st.Version.Render(xansi.Truncate("▾ "+who+" of the turns above · /summary folds · /summary edit changes it", w, "…"))}
	for _, l := range wrapPlain(s, w-2) {
		out = append(out, gutter+"  "+c.st.Dim.Render(l))
	}
	return append(out, "")
}

// marked is msgs[i]'s lines with its marks (pinned, files seen as a
// line) after its label; the cached lines are left as they are.
func (c *conversation) marked(i int, ls []string) []string {
	var notes []string
	if c.Pinned(i) {
		notes = append(notes, "📌 pinned")
	}
	for _, l := range c.marks.elided[i] {
		notes = append(notes, "the model sees "+l)
	}
	if len(notes) == 0 || len(ls) == 0 {
		return ls
	}
	out := make([]string, 0, len(ls))
	out = append(out, ls[0]+c.st.Version.Render("  "+strings.Join(notes, " · ")))
	return append(out, ls[1:]...)
}

// Attachments are msgs[i]'s files as shown (nil past the end).
func (c *conversation) Attachments(i int) []engine.Attachment {
	if i < 0 || i >= len(c.msgs) {
		return nil
	}
	return c.msgs[i].attachments
}

// Len is the number of messages shown.
func (c *conversation) Len() int { return len(c.msgs) }

// Elided counts msgs[i]'s files the model sees as a line.
func (c *conversation) Elided(i int) int { return len(c.marks.elided[i]) }

// Changes counts changes to the transcript: a price keyed on it follows
// the conversation (a reply, a compaction, a pin).
func (c *conversation) Changes() uint64 { return c.changes }
