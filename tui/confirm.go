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
	extra  []extraAnswer // keys of their own, before y, esc and no
}

// extraAnswer is a key a question takes besides y, esc and no.
type extraAnswer struct {
	key key.Binding
	run func(m *Model) tea.Cmd
}

func (c *confirm) SetSize(w, _ int) { c.width = w }

// Ask sets the question; yes runs if the user answers y. The Model opens
// it over what has the keys.
func (c *confirm) Ask(prompt string, yes func(m *Model) tea.Cmd) {
	c.prompt, c.yes = prompt, yes
	c.no, c.hint, c.extra = nil, "", nil
}

// Also gives the question asked another answer, on k (a tool call's "a
// always" and its esc, which stops the loop).
func (c *confirm) Also(k key.Binding, run func(m *Model) tea.Cmd) {
	c.extra = append(c.extra, extraAnswer{k, run})
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
	for _, x := range c.extra {
		if key.Matches(k, x.key) {
			return answerAction{x.run}, nil
		}
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

// choice is one answer of a question with several (AskChoice).
type choice struct {
	key, label string
	run        func(m *Model) tea.Cmd
}

// AskChoice sets a question answered by one of opts' keys; any other
// key leaves things as they are.
func (c *confirm) AskChoice(prompt string, opts []choice) {
	c.Ask(prompt, nil)
	var hs []string
	for _, o := range opts {
		c.Also(key.NewBinding(key.WithKeys(o.key)), o.run)
		hs = append(hs, o.key+" "+o.label)
	}
	c.hint = strings.Join(append(hs, "any other key leaves it"), " · ")
}
