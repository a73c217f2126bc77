package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// confirm is a yes/no question on the bottom line, asked before an action
// that loses something (deleting, replacing a checkpoint, loading over an
// unsaved conversation). It takes the focus while it is shown; y answers
// yes and any other key no, so text typed on without looking cannot say
// yes by accident. Answered, it closes and the keys go back under it.
type confirm struct {
	st     *Styles
	width  int
	prompt string
	yes    func(m *Model) tea.Cmd
	no     func(m *Model) tea.Cmd // nil: no leaves things as they are
	hint   string                 // the keys, when no does something
	keys   yesNoKeys
	// choices, when set, replace yes and no: each answers with its key,
	// any other key leaves things as they are.
	choices []choice
}

// choice is one answer of a question with several (AskChoice).
type choice struct {
	key, label string
	run        func(m *Model) tea.Cmd
}

// AskChoice sets a question answered by one of opts' keys.
func (c *confirm) AskChoice(prompt string, opts []choice) {
	c.Ask(prompt, nil)
	c.choices = opts
}

func (c *confirm) SetSize(w, _ int) { c.width = w }

// Ask sets the question; yes runs if the user answers y. The Model opens
// it over what has the keys.
func (c *confirm) Ask(prompt string, yes func(m *Model) tea.Cmd) {
	c.prompt, c.yes = prompt, yes
	c.no, c.hint, c.choices = nil, "", nil
}

// Otherwise gives the question asked an action for no (any key but y and
// esc, which still leaves things as they are), and the keys to show.
func (c *confirm) Otherwise(hint string, no func(m *Model) tea.Cmd) { c.no, c.hint = no, hint }

func (c *confirm) Focus() tea.Cmd      { return nil }
func (c *confirm) Blur()               {}
func (c *confirm) Placeholder() string { return "answer the question below first" }

// Update answers the question with a key: y yes, esc nothing, any other
// key no. A paste never answers it.
func (c *confirm) Update(msg tea.Msg) (action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	if c.choices != nil {
		for _, o := range c.choices {
			if k.String() == o.key {
				return answerAction{o.run}, nil
			}
		}
		return answerAction{}, nil
	}
	switch {
	case key.Matches(k, c.keys.Yes):
		return answerAction{c.yes}, nil
	case key.Matches(k, c.keys.Esc):
		return answerAction{}, nil
	}
	return answerAction{c.no}, nil
}

func (c *confirm) lines() []string {
	hint := "y yes · any other key no"
	if c.hint != "" {
		hint = c.hint
	}
	if c.choices != nil {
		var hs []string
		for _, o := range c.choices {
			hs = append(hs, o.key+" "+o.label)
		}
		hint = strings.Join(append(hs, "any other key leaves it"), " · ")
	}
	return wrapPlain(c.prompt+" "+hint, max(c.width-1, 10))
}

// Lines is the rows View takes.
func (c *confirm) Lines() int { return len(c.lines()) }

func (c *confirm) View() string {
	ls := c.lines()
	for i, l := range ls {
		ls[i] = c.st.ConfirmPrompt.Render(xansi.Truncate(l, c.width, ""))
	}
	return strings.Join(ls, "\n")
}
