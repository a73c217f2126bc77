package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
)

// handleEvents applies engine events in order.
func (m *Model) handleEvents(events []engine.Event) tea.Cmd {
	var cmds []tea.Cmd
	streamed := false
	for _, ev := range events {
		switch e := ev.(type) {
		case engine.Started:
			m.turn.started()
			m.stats.Started(e)
			m.conv.TurnWindow(e.Window)
			if len(e.Attachments) > 0 {
				m.conv.SetAttachments(e.Attachments)
				cmds = append(cmds, m.pics.Send(e.Attachments))
			}
			m.conv.StartReply(e.Versions)
		case engine.PrefillProgress:
			m.turn.prefilling()
			m.stats.Prefill(e)
		case *engine.Delta:
			m.turn.decoding()
			m.stats.Delta(*e)
			m.conv.AppendDelta(*e)
			streamed = true
		case engine.Finished:
			m.turn.finished(false)
			m.stats.Finished(e.Metrics)
			m.conv.FinishReply(e.Reply, e.Metrics, false)
			m.changed, m.unsaved = true, true
			if len(e.Calls) > 0 {
				cmds = append(cmds, m.callsAsked(e))
			}
		case engine.Cancelled:
			compacting := m.turn.compacting != ""
			m.turn.compacting = ""
			if e.Unstarted && compacting && m.turn.pending == turnNone {
				cmds = append(cmds, m.infoToast("Compaction stopped: the conversation is as it was."))
				break
			}
			if e.Unstarted {
				cmds = append(cmds, m.onUnstarted())
				break
			}
			m.turn.finished(true)
			m.stats.Finished(e.Metrics)
			m.conv.FinishReply(e.Partial, e.Metrics, true)
			m.changed, m.unsaved = true, true
			cmds = append(cmds, m.infoToast("Stopped. The partial reply is kept."))
		case engine.Failed:
			if e.Op == engine.OpCompact {
				m.turn.compacting = ""
			}
			cmds = append(cmds, m.onFailed(e))
		case engine.Compacting, engine.Compacted, engine.ContextReport:
			cmds = append(cmds, m.onContextEvent(e))
		case engine.Notice:
			cmds = append(cmds, m.infoToast(e.Text))
		case engine.ToolsChanged:
			m.onToolsChanged(e)
		case engine.SettingsChanged:
			old := m.turn.settings
			m.turn.settings = e.Settings
			m.ctxView.Show(m.ctx, e.Settings.ContextPolicy)
			cmds = append(cmds, m.infoToast(describeSettingsChange(old, e.Settings)))
		case engine.Checkpoints:
			if e.Op == engine.OpSave {
				m.unsaved = false
			}
			focus := e.Name
			if e.Op == engine.OpAutosave {
				focus = "" // it comes on its own: the cursor stays where the user left it
			}
			m.ckpts.SetList(e.List, focus)
			if t := checkpointText(e); t != "" {
				cmds = append(cmds, m.infoToast(t))
			}
		case engine.Branched:
			m.conv.Replace(e.Messages)
			m.conv.SetWindow(e.Window)
			m.askContext(e.Window)
			m.stats.SetContext(e.ContextUsed)
			m.changed = true
		case engine.History:
			cmds = append(cmds, m.onHistory(e))
		case engine.Line:
			cmds = append(cmds, m.onLine(e))
		case engine.Connection:
			cmds = append(cmds, m.onConnection(e))
		case engine.Cleared:
			m.conv.SetMessages(e.Messages)
			m.conv.SetWindow(e.Window)
			m.askContext(e.Window)
			cmds = append(cmds, m.conv.SendPictures())
			m.turn.cleared()
			m.tools.dropCalls()
			m.stats.Cleared(e.ContextUsed)
			if e.Settings != (engine.Settings{}) {
				// A loaded checkpoint brings its own settings: show the
				// engine's, not the ones this screen had.
				m.turn.settings = e.Settings
			}
			m.changed = true
			m.unsaved = false // empty, or as saved
		}
	}
	if streamed && !m.frameScheduled {
		m.frameScheduled = true
		cmds = append(cmds, tea.Tick(frameInterval, func(time.Time) tea.Msg { return frameMsg{} }))
	}
	return tea.Batch(cmds...)
}

// onFailed reports a failure. A refused message leaves the
// conversation as it was, so its text goes back into the input.
func (m *Model) onFailed(e engine.Failed) tea.Cmd {
	switch e.Op {
	case engine.OpRegenerate, engine.OpEdit:
		m.takeBack(turnKind(e.Op), e.Err)
	case engine.OpSend:
		// The files go back in the queue, but one the engine could not
		// read: enter again sends the message with them.
		text := failureText(e.Op, e.Err)
		if kept := m.takeBack(turnSend, e.Err); kept != "" {
			text = strings.TrimSuffix(text, ".") + "." + kept
		}
		return m.errorToast(text)
	}
	return m.errorToast(failureText(e.Op, e.Err))
}

// onUnstarted takes in a turn cancelled while it waited in line (behind
// an API request, over a server): nothing of it reached the
// conversation, so the screen takes it back as after a refused send.
// Another screen's turn, never shown here, changes nothing.
func (m *Model) onUnstarted() tea.Cmd {
	op := m.turn.pending
	if op == turnNone {
		return nil
	}
	kept := m.takeBack(op, nil)
	switch op {
	case turnSend:
		return m.infoToast("Cancelled before it started: the message is back in the input." + kept)
	case turnEdit:
		return m.infoToast("Cancelled before it started: the edit is back in the input.")
	}
	return m.infoToast("Cancelled before it started: the conversation is as it was.")
}

// takeBack undoes on screen a turn (op send, regenerate or edit) the
// engine refused or never started: the conversation is as it was (for a
// regenerate or an edit the engine says so with Branched); a message sent
// goes back into the input, its files back in the queue but one err
// names; an edit goes back to being edited. It returns what it said of
// the files ("" for none).
func (m *Model) takeBack(op turnKind, err error) string {
	m.turn.failed()
	m.conv.DropTurn()
	var kept string
	switch op {
	case turnEdit:
		if m.turn.edit != "" && m.input.Value() == "" {
			m.startEditing()
			m.input.SetValue(m.turn.edit)
			m.refused = m.turn.edit
		}
	case turnSend:
		if t, ok := m.conv.RemoveLastUser(); ok && m.input.Value() == "" {
			if in := m.turn.sentInput; in != "" && strings.TrimSpace(m.input.Expand(in)) == t {
				t = in // as it was typed: a long paste folded
			}
			m.input.SetValue(t)
			m.refused = t // esc clears it; it is not kept as a draft
		}
		kept = m.keepAttachments(m.turn.sentFiles, err)
	}
	m.turn.clearPending()
	return kept
}

// onHistory applies a history event: a list for the panel, or what
// happened to a conversation.
func (m *Model) onHistory(e engine.History) tea.Cmd {
	switch e.Op {
	case engine.OpList:
		m.hist.SetList(e)
	case engine.OpKept:
		return m.infoToast("The conversation you left is kept in the history (" + m.keys.History.Help().Key + " lists it).")
	case engine.OpResume:
		return m.infoToast("Resumed " + strconv.Quote(e.Title) + ".")
	case engine.OpDelete:
		return m.infoToast("Deleted the conversation from the history.")
	case engine.OpRename:
		return m.infoToast("Renamed the conversation " + strconv.Quote(e.Title) + " in the history.")
	}
	return nil
}

func checkpointText(e engine.Checkpoints) string {
	q := strconv.Quote(e.Name)
	switch e.Op {
	case engine.OpSave:
		return "Saved checkpoint " + q + "."
	case engine.OpLoad:
		return "Loaded checkpoint " + q + "."
	case engine.OpDelete:
		return "Deleted checkpoint " + q + "."
	case engine.OpRename:
		return "Renamed the checkpoint to " + q + "."
	case engine.OpFork:
		return "Started a new conversation from " + q + "."
	}
	return ""
}

// describeSettingsChange says what a SettingsChanged changed.
func describeSettingsChange(a, b engine.Settings) string {
	var d []string
	if a.Sampling.Temperature != b.Sampling.Temperature {
		if b.Sampling.Greedy() {
			d = append(d, "greedy decoding")
		} else {
			d = append(d, fmt.Sprintf("temperature %g", b.Sampling.Temperature))
		}
	}
	if a.Sampling.TopK != b.Sampling.TopK {
		d = append(d, fmt.Sprintf("top-k %d", b.Sampling.TopK))
	}
	if a.Sampling.TopP != b.Sampling.TopP {
		d = append(d, fmt.Sprintf("top-p %g", b.Sampling.TopP))
	}
	if a.Sampling.Seed != b.Sampling.Seed {
		d = append(d, fmt.Sprintf("seed %d", b.Sampling.Seed))
	}
	if a.Speculation != b.Speculation {
		d = append(d, "speculation "+string(b.Speculation))
	}
	if a.DraftLen != b.DraftLen {
		d = append(d, fmt.Sprintf("drafts of %d tokens", b.DraftLen))
	}
	if a.Thinking != b.Thinking {
		d = append(d, map[bool]string{true: "thinking on", false: "thinking off"}[b.Thinking])
	}
	if a.System != b.System {
		if b.System == "" {
			d = append(d, "no system prompt")
		} else {
			d = append(d, "new system prompt")
		}
	}
	if len(d) == 0 {
		return "Settings unchanged."
	}
	return "Now: " + strings.Join(d, ", ") + "."
}

// onRefused takes a command the engine refused: as its failure would
// have been (a message sent goes back into the input).
func (m *Model) onRefused(r refusedMsg) tea.Cmd {
	return m.onFailed(engine.Failed{Op: r.op, Err: r.err})
}
