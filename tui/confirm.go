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
	prev   focusKind // the focus to give back
}

func (c *confirm) SetSize(w int) { c.width = w }

// Ask shows the question; yes runs if the user answers y.
func (c *confirm) Ask(prompt string, prev focusKind, yes func(m *Model) tea.Cmd) {
	c.active, c.prompt, c.yes, c.prev = true, prompt, yes, prev
}

// Answer ends the question; it returns the action to run, nil for no.
func (c *confirm) Answer(msg tea.KeyPressMsg) func(m *Model) tea.Cmd {
	c.active = false
	if s := msg.String(); s == "y" || s == "Y" {
		return c.yes
	}
	return nil
}

func (c *confirm) lines() []string {
	return wrapPlain(c.prompt+" y yes · any other key no", max(c.width-1, 10))
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
