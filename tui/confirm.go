package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// confirm is a yes/no question on the bottom line, asked before an action
// that loses something (deleting, replacing a checkpoint, loading over an
// unsaved conversation). It takes the focus while it is shown; y answers
// yes and any other key no, so text typed on without looking cannot say
// yes by accident. The focus goes back where it was.
type confirm struct {
	st     *Styles
	width  int
	active bool
	prompt string
	yes    func(m *Model) tea.Cmd
	no     func(m *Model) tea.Cmd // nil: no leaves things as they are
	hint   string                 // the keys, when no does something
	prev   focusKind              // the focus to give back
}

func (c *confirm) SetSize(w int) { c.width = w }

// Ask shows the question; yes runs if the user answers y.
func (c *confirm) Ask(prompt string, prev focusKind, yes func(m *Model) tea.Cmd) {
	c.active, c.prompt, c.yes, c.prev = true, prompt, yes, prev
	c.no, c.hint = nil, ""
}

// Otherwise gives the question asked an action for no (any key but y and
// esc, which still leaves things as they are), and the keys to show.
func (c *confirm) Otherwise(hint string, no func(m *Model) tea.Cmd) { c.no, c.hint = no, hint }

// Answer ends the question; it returns the action to run, nil for none.
func (c *confirm) Answer(msg tea.KeyPressMsg) func(m *Model) tea.Cmd {
	c.active = false
	switch msg.String() {
	case "y", "Y":
		return c.yes
	case "esc":
		return nil
	}
	return c.no
}

func (c *confirm) lines() []string {
	hint := "y yes · any other key no"
	if c.hint != "" {
		hint = c.hint
	}
	return wrapPlain(c.prompt+" "+hint, max(c.width-1, 10))
}

// Lines is the rows View takes.
func (c *confirm) Lines() int {
	if !c.active {
		return 0
	}
	return len(c.lines())
}

func (c *confirm) View() string {
	ls := c.lines()
	for i, l := range ls {
		ls[i] = c.st.ConfirmPrompt.Render(xansi.Truncate(l, c.width, ""))
	}
	return strings.Join(ls, "\n")
}
