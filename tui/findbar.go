package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// findBar is the search field on the bottom line while the search in
// the conversation is open (ctrl+f). It has the keys while it is shown.
type findBar struct {
	st    *Styles
	width int
	field textinput.Model
	keys  findKeys
	cur   int // the match shown, from 1
	total int
}

func newFindBar(st *Styles) findBar {
	f := textinput.New()
	f.Prompt = ""
	f.Placeholder = "text in the conversation"
	f.CharLimit = 200
	return findBar{st: st, field: f, keys: newFindKeys()}
}

func (b *findBar) SetSize(w, _ int) {
	b.width = w
	b.field.SetWidth(max(10, min(40, w-50)))
}

func (b *findBar) Open(q string) tea.Cmd {
	b.field.SetValue(q)
	b.field.CursorEnd()
	return b.field.Focus()
}

func (b *findBar) Focus() tea.Cmd { return b.field.Focus() }
func (b *findBar) Blur()          { b.field.Blur() }

func (b *findBar) Placeholder() string { return "keys go to the search below · esc closes it" }

func (b *findBar) Query() string { return b.field.Value() }

// SetCount sets the match shown (from 1) and the number of matches.
func (b *findBar) SetCount(cur, total int) { b.cur, b.total = cur, total }

// Update handles a key or a paste while the bar has the focus.
func (b *findBar) Update(msg tea.Msg) (action, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, b.keys.Close):
			return closeFindAction{}, nil
		case key.Matches(k, b.keys.Older):
			return findStep{-1}, nil
		case key.Matches(k, b.keys.Newer):
			return findStep{1}, nil
		}
	}
	before := b.field.Value()
	var cmd tea.Cmd
	b.field, cmd = b.field.Update(msg)
	if b.field.Value() != before {
		return findQuery{b.field.Value()}, cmd
	}
	return nil, cmd
}

func (b *findBar) View() string {
	st := b.st
	line := st.Label.Render("find: ") + b.field.View()
	switch {
	case b.field.Value() == "":
	case b.total == 0:
		line += "  " + st.StatusWarn.UnsetBackground().Render("no match")
	default:
		line += "  " + st.Value.Render(fmt.Sprintf("%d/%d", b.cur, b.total))
	}
	line += st.Dim.Render("  enter/↑ older · ↓ newer · esc closes")
	return xansi.Truncate(line, b.width, "…")
}
