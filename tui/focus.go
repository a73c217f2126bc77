package tui

import tea "charm.land/bubbletea/v2"

// focusable is a component that can take the keys: the input, the
// checkpoints and history panels, and what opens over them (the palette,
// a question, the search bar). Exactly one has the focus and shows it:
// the others draw no cursor, selection or highlighted border.
type focusable interface {
	Focus() tea.Cmd
	Blur()
	// Placeholder is what the empty input says while this component has
	// the keys; "" is the input's own.
	Placeholder() string
	// Update takes a key or a paste and returns what the Model is to do
	// (an action, action.go; nil for nothing). It never acts on the
	// Model itself.
	Update(tea.Msg) (action, tea.Cmd)
	View() string
	SetSize(w, h int)
}

type focusKind int

// The components that take the keys, by name, for the focus stack.
const (
	focusInput   focusKind = iota
	focusPanel             // the checkpoints panel
	focusPalette           // the command palette
	focusConfirm           // a yes/no question on the bottom line
	focusHistory           // the history panel (its search and list)
	focusFind              // the search bar of the conversation
	focusTools             // the tools panel (/tools)
	focusContext           // the context view (/context)
	numFocus
)

// The focus is a stack, as dialogs over a screen: its bottom is the
// input or a panel, and a palette, a question or the search bar opens
// over it; closing the top gives the keys back to what is under it.

// focused is the component that has the keys.
func (m *Model) focused() focusKind { return m.layers[len(m.layers)-1] }

// setFocus gives the keys to one component alone: everything over it
// and under it lets them go.
func (m *Model) setFocus(f focusKind) tea.Cmd {
	for _, l := range m.layers {
		if l != f {
			m.panes[l].Blur()
		}
	}
	m.layers = append(m.layers[:0], f)
	return m.focusTop()
}

// open puts a component over the one that has the keys.
func (m *Model) open(f focusKind) tea.Cmd {
	m.panes[m.focused()].Blur()
	m.layers = append(m.layers, f)
	return m.focusTop()
}

// closeTop closes what was opened last; the keys go back under it.
func (m *Model) closeTop() tea.Cmd {
	if len(m.layers) == 1 {
		return m.setFocus(focusInput)
	}
	m.panes[m.focused()].Blur()
	m.layers = m.layers[:len(m.layers)-1]
	return m.focusTop()
}

// focusTop shows where the keys are: the component on top takes them,
// and the input's placeholder says where they went.
func (m *Model) focusTop() tea.Cmd {
	p := m.panes[m.focused()]
	m.input.SetPlaceholder(p.Placeholder())
	return p.Focus()
}

// asking reports whether a question is on the bottom line.
func (m *Model) asking() bool { return m.focused() == focusConfirm }

// ask puts a yes/no question on the bottom line; yes runs on y. The
// focus comes back to where it is now (the input, over a palette or
// another question).
func (m *Model) ask(prompt string, yes func(m *Model) tea.Cmd) tea.Cmd {
	if f := m.focused(); f == focusConfirm || f == focusPalette {
		m.setFocus(focusInput)
	}
	m.confirm.Ask(prompt, yes)
	m.open(focusConfirm)
	return nil
}

// askChoice is ask with several answers, each on its key.
func (m *Model) askChoice(prompt string, opts []choice) {
	m.ask(prompt, nil)
	m.confirm.AskChoice(prompt, opts)
}

func (m *Model) closePalette() { m.setFocus(focusInput) }

// openPanel shows panel p in place of the one shown; if that one had the
// keys, they go back to the input.
func (m *Model) openPanel(p panelKind) {
	if f := m.focused(); m.panel == panelCheckpoints && p != panelCheckpoints && f == focusPanel ||
		m.panel == panelHistory && p != panelHistory && f == focusHistory ||
		m.panel == panelTools && p != panelTools && f == focusTools {
		m.setFocus(focusInput)
	}
	m.panel = p
}

// closePanel hides the panel; if it had the keys, they go back to the
// input.
func (m *Model) closePanel() {
	m.panel = panelNone
	if f := m.focused(); f == focusPanel || f == focusHistory || f == focusTools {
		m.setFocus(focusInput)
	}
}
