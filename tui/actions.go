package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/orchard-llm/orchard/engine"
)

// Regenerate, edit, versions, the history and the search: what the keys
// and commands of these features do on the model.

// lastUserText is the last message the user sent, as shown.
func (m *Model) lastUserText() string { return m.conv.LastUserText() }

// startEditing puts the last message in the input, to be sent in its
// place.
func (m *Model) startEditing() {
	m.input.StartEditing(m.lastUserText())
	m.updateCompletion()
}

func (m *Model) stopEditing() { m.input.StopEditing() }

// sendEdit sends v, the edited last message orig: the engine rewinds to
// before it and keeps the old one as another version. The same text
// again is a regenerate.
func (m *Model) sendEdit(v, orig string) tea.Cmd {
	orig = strings.TrimSpace(orig)
	m.stopEditing()
	m.input.Remember(v)
	m.input.Reset()
	m.comp.Hide()
	if v == orig {
		return m.cmdRetry("")
	}
	m.turn.sendEdit(v)
	m.refused = ""
	m.changed, m.unsaved = true, true
	m.call(engine.OpEdit, func(e Engine) error { return e.Edit(v) })
	return nil
}

// cmdEdit is /edit: alone it puts the last message in the input to edit;
// with text it sends that in the last message's place.
func (m *Model) cmdEdit(arg string) tea.Cmd {
	if m.replying() {
		return m.errorToast("A reply is streaming; esc stops it before editing.")
	}
	if cmd := m.toolsWaiting(); cmd != nil {
		return cmd
	}
	if m.lastUserText() == "" {
		return m.errorToast("There is no message to edit yet.")
	}
	if arg = strings.TrimSpace(arg); arg != "" {
		return m.sendEdit(arg, m.lastUserText())
	}
	m.startEditing()
	return nil
}

// cmdRetry is /retry and ctrl+g: a new reply to the last message; the
// old one stays as another version (← →).
func (m *Model) cmdRetry(string) tea.Cmd {
	if m.replying() {
		return m.errorToast("A reply is streaming; esc stops it before regenerating.")
	}
	if cmd := m.toolsWaiting(); cmd != nil {
		return cmd
	}
	if m.lastUserText() == "" {
		return m.errorToast("There is no reply to regenerate yet.")
	}
	m.turn.regenerate()
	m.changed, m.unsaved = true, true
	m.call(engine.OpRegenerate, func(e Engine) error { return e.Regenerate() })
	return nil
}

// stepVersion shows the previous (−1) or next (+1) version of the last
// message that has several.
func (m *Model) stepVersion(d int) tea.Cmd {
	i, version, versions := m.conv.VersionTarget()
	switch {
	case i < 0:
		return nil
	case m.replying():
		return m.errorToast("A reply is streaming; esc stops it before switching versions.")
	case m.tools.waiting():
		return m.toolsWaiting()
	}
	v := version + d
	if v < 0 || v >= versions {
		return m.infoToast(fmt.Sprintf("This is version %d of %d.", version+1, versions))
	}
	m.changed, m.unsaved = true, true
	m.call(engine.OpVersion, func(e Engine) error { return e.SelectVersion(i, v) })
	return nil
}

// cmdNew is /new and ctrl+n: a fresh conversation; the engine keeps the
// current one in the history.
func (m *Model) cmdNew(string) tea.Cmd {
	if m.replying() {
		return m.errorToast("A reply is streaming; esc stops it before starting anew.")
	}
	m.stopEditing()
	m.call(engine.OpClear, func(e Engine) error { return e.Clear() })
	return nil
}

// cmdHistory opens the history panel, searching for arg if given.
func (m *Model) cmdHistory(arg string) tea.Cmd {
	m.openPanel(panelHistory)
	m.hist.SetQuery(strings.TrimSpace(arg))
	q := m.hist.Query()
	m.call(engine.OpHistory, func(e Engine) error { return e.ListHistory(q) })
	return m.setFocus(focusHistory)
}

// resumeHistory resumes a conversation chosen in the history panel.
func (m *Model) resumeHistory(id string) tea.Cmd {
	if id == "" { // the conversation on screen, not kept yet
		m.closePanel()
		return nil
	}
	if m.replying() {
		return m.errorToast("A reply is streaming; esc stops it before resuming another conversation.")
	}
	m.stopEditing()
	m.call(engine.OpResume, func(e Engine) error { return e.ResumeHistory(id) })
	m.closePanel()
	return nil
}

// cmdTitle is /title TEXT: the conversation on screen gets TEXT as its
// title in the history (kept there first if it is not yet).
func (m *Model) cmdTitle(arg string) tea.Cmd {
	title := oneName(arg)
	m.call(engine.OpHistoryRename, func(e Engine) error { return e.RenameHistory("", title) })
	return nil
}

// cmdFind opens the search in the conversation, with arg as its text.
func (m *Model) cmdFind(arg string) tea.Cmd {
	cmd := m.open(focusFind)
	cmd = tea.Batch(cmd, m.findBar.Open(strings.TrimSpace(arg)))
	m.find(m.findBar.Query())
	return cmd
}

// find searches for q and shows the newest match.
func (m *Model) find(q string) {
	m.conv.SetFind(q)
	m.findBar.SetCount(m.conv.FindCount())
}

func (m *Model) closeFind() {
	m.conv.CloseFind()
	m.setFocus(focusInput)
}

// cmdCopy is /copy (the last reply) and /copy code [N] (a code block:
// the last one, or block N as labelled).
func (m *Model) cmdCopy(arg string) tea.Cmd {
	w := strings.Fields(strings.ToLower(arg))
	switch {
	case len(w) == 0:
		text, ok := m.conv.LastReply()
		if !ok {
			return m.errorToast("There is no reply to copy yet.")
		}
		return copyText(text, "", m.env, m.nativeClipboard, m.run)
	case w[0] != "code" || len(w) > 2:
		return m.errorToast("/copy takes nothing (the last reply) or code [N] (a code block: the last one, or block N as labelled).")
	}
	n := 0
	if len(w) == 2 {
		var err error
		if n, err = strconv.Atoi(w[1]); err != nil || n < 1 {
			return m.errorToast("/copy code takes the number of a block, as its label shows (code 1, code 2, …).")
		}
	}
	cb, at, total := m.conv.CodeBlock(n)
	switch {
	case total == 0:
		return m.errorToast("There is no code block in the conversation yet.")
	case at == 0:
		return m.errorToast(fmt.Sprintf("There is no code block %d; the conversation has %s.", n, plural(total, "block")))
	}
	what := fmt.Sprintf("code block %d", at)
	if cb.lang != "" {
		what += " (" + cb.lang + ")"
	}
	return copyText(cb.code, what, m.env, m.nativeClipboard, m.run)
}
