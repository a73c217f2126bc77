package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/orchard-llm/orchard/engine"
)

// action is what a focused component asks the Model to do, one of the
// types below; nil asks for nothing. A component changes only itself:
// what touches the conversation, the engine or the focus is the Model's,
// in act.
type action any

type (
	// The keys go back to the input; the component stays on screen.
	leaveAction struct{}
	// The history or checkpoints panel closes.
	closePanelAction struct{}
	// The palette closes; with an item chosen, that runs.
	closePaletteAction struct{ chosen *paletteItem }
	// The search bar closes.
	closeFindAction struct{}
	// A question was answered: run is what the answer does (nil: nothing).
	answerAction struct{ run func(m *Model) tea.Cmd }

	// The checkpoints panel.
	loadCheckpoint   struct{ name string }
	forkCheckpoint   struct{ name string }
	saveCheckpoint   struct{ name string }
	deleteCheckpoint struct{ name string }
	renameCheckpoint struct{ name, to string }

	// The history panel.
	searchHistory struct{ query string }
	resumeHistory struct{ id string } // "": the conversation on screen
	deleteHistory struct{ id string }
	renameHistory struct{ id, title string }

	// The search bar: its text changed, or the next older (-1) or newer
	// (+1) match.
	findQuery struct{ query string }
	findStep  struct{ by int }

	// The input: ↑ on an empty input edits the last message sent; the
	// input stepped through the messages sent.
	editLastAction struct{}
	browsedAction  struct{}
)

// act carries out what a component asked for.
func (m *Model) act(a action) tea.Cmd {
	switch a := a.(type) {
	case leaveAction:
		m.setFocus(focusInput)
	case closePanelAction, closeToolsAction:
		m.closePanel()
	case toggleTool:
		return m.switchTool(a.name, a.off)
	case closePaletteAction:
		m.closePalette()
		if a.chosen != nil {
			return m.runPaletteItem(*a.chosen)
		}
	case closeFindAction:
		m.closeFind()
	case answerAction:
		m.closeTop()
		if a.run == nil {
			return m.infoToast("Nothing was changed.")
		}
		return a.run(m)

	// Loading or forking replaces the conversation, so the keys go back
	// to the input afterwards; other actions keep the panel focused.
	case loadCheckpoint:
		return m.cmdLoad(a.name)
	case forkCheckpoint:
		return m.cmdFork(a.name)
	case saveCheckpoint:
		return m.cmdSave(a.name)
	case deleteCheckpoint:
		m.call(engine.OpDelete, func(e Engine) error { return e.DeleteCheckpoint(a.name) })
	case renameCheckpoint:
		m.call(engine.OpRename, func(e Engine) error { return e.RenameCheckpoint(a.name, a.to) })

	case searchHistory:
		m.call(engine.OpHistory, func(e Engine) error { return e.ListHistory(a.query) })
	case resumeHistory:
		return m.resumeHistory(a.id)
	case deleteHistory:
		m.call(engine.OpHistoryDelete, func(e Engine) error { return e.DeleteHistory(a.id) })
	case renameHistory:
		m.call(engine.OpHistoryRename, func(e Engine) error { return e.RenameHistory(a.id, a.title) })

	case findQuery:
		m.find(a.query)
	case findStep:
		m.conv.FindStep(a.by)
		m.findBar.SetCount(m.conv.FindCount())

	case setPolicyAction:
		return m.setPolicy(a.policy)
	case compactAction:
		return m.cmdCompact("")

	case editLastAction:
		if m.input.EditLast(m.lastUserText()) {
			m.updateCompletion()
		}
	}
	return nil
}
