package tui

import (
	"strings"

	xansi "github.com/charmbracelet/x/ansi"
)

// The model's view of the conversation: under drop-oldest the oldest
// turns leave the context but stay in the transcript (the record); a rule
// above the first message the model still sees marks where its view
// starts. The engine says where with each turn (Started), and with each
// conversation it shows (Cleared, Branched, Engine.Window at start).

// windowRuleText is the rule's words.
const windowRuleText = " the model no longer sees above this line "

// SetWindow says where the model's view starts: msgs[i] is the first
// message it sees (0: all of them).
func (c *conversation) SetWindow(i int) {
	if i != c.window {
		c.window = i
		c.changes++
	}
}

// TurnWindow is SetWindow for a turn that started: DropTurn puts the
// window it had before back.
func (c *conversation) TurnWindow(i int) {
	before := c.window
	c.SetWindow(i)
	c.windowBefore = before
}

// DropTurn takes back the reply of a turn that started and failed (the
// reply streaming), and the window it moved.
func (c *conversation) DropTurn() {
	if last := c.last(); last != nil && last.streaming {
		c.msgs = c.msgs[:len(c.msgs)-1]
		c.changes++
		c.SetWindow(c.windowBefore)
	}
}

// ruleAbove reports whether the window rule goes above msgs[i].
func (c *conversation) ruleAbove(i int) bool { return i == c.window && i > 0 && i < len(c.msgs) }

// windowRule is the rule's lines (the rule and a blank line), as wide as
// the text.
func (c *conversation) windowRule() []string {
	w := min(max(c.width-len(gutter), 10), maxTextWidth)
	side := max(0, (w-len(windowRuleText))/2)
	line := strings.Repeat("─", side) + windowRuleText + strings.Repeat("─", side)
	return []string{gutter + c.st.WindowRule.Render(xansi.Truncate(line, w, "…")), ""}
}
