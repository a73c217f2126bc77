package tui

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/orchard-llm/orchard/engine"
)

// keyRoute is one row of the chat screen's key routing: the first row
// whose binding matches the key and whose condition holds takes it.
type keyRoute struct {
	key  *key.Binding                          // nil: any key
	when func(*Model, tea.KeyPressMsg) bool    // nil: always
	do   func(*Model, tea.KeyPressMsg) tea.Cmd // what the key does
}

func (r keyRoute) matches(m *Model, msg tea.KeyPressMsg) bool {
	return (r.key == nil || key.Matches(msg, *r.key)) && (r.when == nil || r.when(m, msg))
}

// handleKey sends a key down the routing table.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if !key.Matches(msg, m.keys.Quit) {
		m.quitArmedAt = time.Time{} // a second ctrl+c must come next
	}
	for _, r := range m.routes {
		if r.matches(m, msg) {
			return r.do(m, msg)
		}
	}
	return nil
}

// keyRoutes is the routing table, in order: ctrl+c; the help or message
// screen; the component that has the keys when it is not the input (the
// search bar lets the conversation scroll); then the chat screen's own
// keys while the input has them, and last the input itself.
func keyRoutes(k *keyMap) []keyRoute {
	on := func(f focusKind) func(*Model, tea.KeyPressMsg) bool {
		return func(m *Model, _ tea.KeyPressMsg) bool { return m.focused() == f }
	}
	routes := []keyRoute{
		{key: &k.Quit, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.interrupt() }},
		{when: func(m *Model, _ tea.KeyPressMsg) bool { return m.showHelp || m.showMessage }, do: (*Model).screenKey},
	}
	routes = append(routes, scrollRoutes(k, on(focusFind))...)
	routes = append(routes,
		keyRoute{when: func(m *Model, _ tea.KeyPressMsg) bool { return m.focused() != focusInput }, do: (*Model).toFocused},

		// The input has the keys from here on.
		keyRoute{key: &k.Cancel, do: (*Model).cancelKey},
		keyRoute{key: &k.Message, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			if m.toast.Last() != "" {
				m.showMessage = true
			}
			return nil
		}},
		keyRoute{key: &k.Palette, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			m.open(focusPalette)
			return m.palette.Open()
		}},
		keyRoute{key: &k.Editor, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return prepareEditor(m.input.Text()) }},
		// ? types itself into a message being written.
		keyRoute{key: &k.Help, when: func(m *Model, msg tea.KeyPressMsg) bool { return !printableKey(msg.String()) || m.input.Value() == "" },
			do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
				m.showHelp, m.helpOffset = true, 0
				return nil
			}},
		keyRoute{key: &k.Stats, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.cmdStats("") }},
		keyRoute{key: &k.Checkpoints, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.togglePanel(panelCheckpoints) }},
		keyRoute{key: &k.Drafts, do: (*Model).toggleDrafts},
		keyRoute{key: &k.Thinking, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			m.conv.ToggleThinking()
			return nil
		}},
		keyRoute{key: &k.Complete, when: completing, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			m.acceptCompletion()
			return nil
		}},
		keyRoute{key: &k.Focus, when: showing(panelCheckpoints), do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			m.setFocus(focusPanel)
			return nil
		}},
		keyRoute{key: &k.Focus, when: showing(panelHistory), do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.setFocus(focusHistory) }},
		keyRoute{key: &k.Focus, when: showing(panelTools), do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.setFocus(focusTools) }},
	)
	routes = append(routes, scrollRoutes(k, nil)...)
	routes = append(routes,
		keyRoute{key: &k.Regenerate, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.cmdRetry("") }},
		keyRoute{key: &k.Search, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.cmdFind("") }},
		keyRoute{key: &k.History, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.togglePanel(panelHistory) }},
		keyRoute{key: &k.New, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.cmdNew("") }},
		// ← and → move in a message being written.
		keyRoute{key: &k.VersionPrev, when: emptyInput, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.stepVersion(-1) }},
		keyRoute{key: &k.VersionNext, when: emptyInput, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.stepVersion(1) }},
		// While a completion list is shown ↑ and ↓ move in it; else
		// they are the input's.
		keyRoute{key: &k.HistoryPrev, when: completing, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			m.comp.Move(-1)
			return nil
		}},
		keyRoute{key: &k.HistoryNext, when: completing, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			m.comp.Move(1)
			return nil
		}},
		keyRoute{key: &k.Fold, do: (*Model).foldKey},
		keyRoute{key: &k.Send, do: func(m *Model, _ tea.KeyPressMsg) tea.Cmd { return m.submit() }},
		keyRoute{do: (*Model).toInput},
	)
	return routes
}

// scrollRoutes scroll the conversation, while when holds.
func scrollRoutes(k *keyMap, when func(*Model, tea.KeyPressMsg) bool) []keyRoute {
	scroll := func(f func(c *conversation)) func(*Model, tea.KeyPressMsg) tea.Cmd {
		return func(m *Model, _ tea.KeyPressMsg) tea.Cmd {
			f(m.conv)
			return nil
		}
	}
	return []keyRoute{
		{key: &k.ScrollUp, when: when, do: scroll(func(c *conversation) { c.ScrollUp(1) })},
		{key: &k.ScrollDown, when: when, do: scroll(func(c *conversation) { c.ScrollDown(1) })},
		{key: &k.PageUp, when: when, do: scroll((*conversation).PageUp)},
		{key: &k.PageDown, when: when, do: scroll((*conversation).PageDown)},
		{key: &k.Top, when: when, do: scroll((*conversation).Top)},
		{key: &k.Bottom, when: when, do: scroll((*conversation).Bottom)},
	}
}

func completing(m *Model, _ tea.KeyPressMsg) bool { return m.comp.Visible() }
func emptyInput(m *Model, _ tea.KeyPressMsg) bool { return m.input.Value() == "" }

func showing(p panelKind) func(*Model, tea.KeyPressMsg) bool {
	return func(m *Model, _ tea.KeyPressMsg) bool { return m.panel == p }
}

// screenKey is a key on the help or message screen: the help scrolls
// when it is taller than the terminal; any other key closes the screen.
func (m *Model) screenKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.showHelp && m.scrollHelp(msg) {
		return nil
	}
	m.showHelp, m.showMessage = false, false
	return nil
}

// toFocused gives the key to the component that has the focus.
func (m *Model) toFocused(msg tea.KeyPressMsg) tea.Cmd {
	act, cmd := m.panes[m.focused()].Update(msg)
	return tea.Batch(cmd, m.act(act))
}

// toInput gives the key to the input; the completion follows what it
// holds, unless the input only stepped through its history.
func (m *Model) toInput(msg tea.KeyPressMsg) tea.Cmd {
	act, cmd := m.input.Update(msg)
	if act == nil {
		m.updateCompletion()
	}
	return tea.Batch(cmd, m.act(act))
}

// cancelKey is esc: it hides the completion, stops a reply, clears a
// message the engine refused, leaves an edit, or closes the panel.
func (m *Model) cancelKey(tea.KeyPressMsg) tea.Cmd {
	switch {
	case m.comp.Visible():
		m.comp.Hide()
	case m.replying() || m.turn.compacting != "":
		m.call(engine.OpCancel, func(e Engine) error { return e.Cancel() })
	case m.tools.waiting():
		return m.stopCalls()
	case m.refused != "" && m.input.Value() == m.refused:
		m.input.Reset()
		m.refused = ""
		m.stopEditing()
		return m.infoToast("Cleared the message that was not sent.")
	case m.input.Editing():
		m.input.Reset()
		m.stopEditing()
		return m.infoToast("The message was left as it was.")
	case m.panel != panelNone:
		m.closePanel()
	}
	return nil
}

// togglePanel is the key of the checkpoints or history panel: it opens
// the panel, or closes it when it is open.
func (m *Model) togglePanel(p panelKind) tea.Cmd {
	switch {
	case m.panel == p:
		m.closePanel()
		return nil
	case p == panelHistory:
		return m.cmdHistory("")
	}
	return m.cmdCheckpoints("")
}

func (m *Model) toggleDrafts(tea.KeyPressMsg) tea.Cmd {
	if m.conv.ToggleDrafts() {
		return m.infoToast("Tokens from accepted drafts are highlighted (markdown off while shown).")
	}
	return nil
}

func (m *Model) foldKey(tea.KeyPressMsg) tea.Cmd {
	if !m.input.ToggleFold() {
		return m.infoToast(fmt.Sprintf("Nothing to fold: a paste of more than %d lines or %s characters is folded into one line.", foldLines, commas(foldRunes)))
	}
	return nil
}
