package tui

import (
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
)

// Over a server the screen also shows what the server's line is doing —
// an API request generating, the chat's message waiting its turn — and
// the connection: lost, reconnecting, back. These come as engine.Line
// and engine.Connection events; an engine in-process sends neither.

// remoteState is what the screen knows of the server.
type remoteState struct {
	line engine.Line
	down *engine.Connection // the loss being retried; nil while connected
	told bool               // the message in line was said to wait
}

// onLine takes the server's line in; a message of this screen's that
// waits for an API request says so, once, with its place. (Behind the
// chat's own turn, whose place it takes a moment after the turn ended,
// it waits for nothing worth saying.)
func (m *Model) onLine(e engine.Line) tea.Cmd {
	r := &m.remote
	r.line = e
	if e.Place == 0 {
		r.told = false
	}
	if e.Place == 0 || e.Busy != "api" || r.told || m.turn.pending == turnNone {
		return nil
	}
	r.told = true
	text := "Your message waits its turn: " + ordinal(e.Place) + " in line, after an API request (" + apiWho(e) + ")"
	return m.infoToast(text + ". " + m.keys.Cancel.Help().Key + " cancels it.")
}

// onConnection follows the link to the server. When it is lost the
// screen keeps the conversation; a reply that was streaming is shown cut
// short (the server's own comes back with the conversation on
// reconnecting).
func (m *Model) onConnection(e engine.Connection) tea.Cmd {
	r := &m.remote
	switch {
	case e.Down:
		first := r.down == nil
		r.down, r.line = &e, engine.Line{}
		if first {
			m.conv.CutShort()
			m.turn.failed()
			m.turn.pending, m.turn.edit = turnNone, ""
		}
		if e.Retry == 0 {
			return m.errorToast(fmt.Sprintf("The server at %s cannot be attached to again: %v. Quit and attach again.", e.Addr, e.Err))
		}
		if first {
			return m.errorToast(fmt.Sprintf("The server at %s went away (%v); reconnecting… The conversation stays on screen.", e.Addr, e.Err))
		}
	case e.Reconnected:
		r.down = nil
		m.stats.SetContext(e.ContextUsed)
		return m.infoToast("Reconnected to " + e.Addr + ".")
	default:
		m.stats.SetContext(e.ContextUsed)
	}
	return nil
}

// CutShort ends the reply streaming on screen as interrupted.
func (c *conversation) CutShort() {
	if n := len(c.msgs); n > 0 && c.msgs[n-1].streaming {
		m := c.msgs[n-1]
		m.streaming, m.interrupted = false, true
		m.stream.reset()
		c.rerender(m)
		c.changes++
	}
}

// status puts the server's state in the status bar's segments, which
// hold the lead (what the chat is doing) only: a lost connection or a
// busy line replaces the lead, and the line's details follow it.
func (r *remoteState) status(st *Styles, chatBusy bool, segs []segment) []segment {
	l := r.line
	switch {
	case r.down != nil && r.down.Retry == 0:
		segs[0].text = st.StatusWarn.Render("✕ disconnected")
	case r.down != nil:
		segs[0].text = st.StatusWarn.Render("⚠ server went away · reconnecting…")
	case chatBusy:
		if l.Waiting > 0 {
			segs = append(segs, segment{st.StatusKey.Render(fmt.Sprintf("%d queued", l.Waiting)), 3})
		}
	case l.Place > 0 && l.Busy == "api":
		segs[0].text = st.StatusLive.Render("⧗ queued · " + ordinal(l.Place) + " in line")
		segs = append(segs, segment{st.StatusKey.Render("busy: ") + st.StatusValue.Render("API · "+safeLine(l.Endpoint)), 1})
		segs = append(segs, apiFigures(st, l)...)
	case l.Busy == "api":
		segs[0].text = st.StatusLive.Render("◆ busy: API · " + safeLine(l.Endpoint))
		if l.Waiting > 0 {
			segs = append(segs, segment{st.StatusKey.Render(fmt.Sprintf("%d queued", l.Waiting)), 1})
		}
		segs = append(segs, apiFigures(st, l)...)
	}
	return segs
}

// apiFigures are the running API reply's tokens and speed, and who sent
// it.
func apiFigures(st *Styles, l engine.Line) []segment {
	var segs []segment
	if l.Generated > 0 {
		segs = append(segs, segment{st.StatusValue.Render(fmt.Sprintf("%s tok · %.1f tok/s", commas(l.Generated), l.TokPerS)), 2})
	}
	if l.Client != "" {
		segs = append(segs, segment{st.StatusKey.Render("from " + safeLine(l.Client)), 7})
	}
	return segs
}

// apiWho names an API request: its endpoint and client.
func apiWho(l engine.Line) string {
	if l.Client == "" {
		return safeLine(l.Endpoint)
	}
	return safeLine(l.Endpoint) + " from " + safeLine(l.Client)
}

// ordinal is 1st, 2nd, 3rd, 4th, …
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}
