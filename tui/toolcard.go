package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tools"
)

// toolCard is a model's tool calls as the conversation shows them: one
// row per call (the tool, its arguments), then what became of it — its
// result, folded when long, and its time; a refusal; an error. It is the
// conversation's entry for the engine's "tool" message, so the screen's
// messages keep the engine's indexes.
type toolCard struct {
	calls []cardCall
}

type cardCall struct {
	call    tools.Call
	tool    string // the server's name for it, "server.tool" ("" unknown)
	state   callState
	output  string // what the model was given
	full    int    // the whole output's bytes (more than output when cut)
	whole   string // the whole output, when it was cut for the model (/export writes it)
	elapsed time.Duration
}

type callState int

const (
	callAsking callState = iota // waiting for the person's y/a/n
	callRunning
	callDone
	callFailed // the tool reported an error, or the call could not be made
	callRefused
)

// cardFold is how many lines of a result the card shows.
const cardFold = 4

// newToolCard is the card of calls not run yet.
func newToolCard(calls []tools.Call) *toolCard {
	c := &toolCard{}
	for _, call := range calls {
		c.calls = append(c.calls, cardCall{call: call})
	}
	return c
}

// cardFromRecord is the card of a loaded conversation's calls and results.
func cardFromRecord(calls []tools.Call, rs []tools.Response) *toolCard {
	c := newToolCard(calls)
	for i := range c.calls {
		if i >= len(rs) {
			break
		}
		cc := &c.calls[i]
		cc.state, cc.output = callDone, responseText(rs[i].Value)
		if m, ok := rs[i].Value.(map[string]any); ok {
			if e, ok := m["error"].(string); ok {
				cc.state, cc.output = callFailed, e
				if e == refusedText {
					cc.state = callRefused
				}
			}
		}
		cc.full = len(cc.output)
	}
	return c
}

// refusedText is what engine.Refused tells the model.
var refusedText = engine.Refused(tools.Call{}).Value.(map[string]any)["error"].(string)

func responseText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// argsText is a call's arguments as one line of JSON.
func argsText(c tools.Call) string {
	b, _ := json.Marshal(c.Args)
	if c.Args == nil {
		return "{}"
	}
	return string(b)
}

// lines renders the card at width w.
func (c *toolCard) lines(st *Styles, w int) []string {
	var out []string
	for _, cc := range c.calls {
		name := cc.tool
		if name == "" {
			name = cc.call.Name
		}
		head := st.ToolLabel.Render("⚙ "+safeLine(name)) + " " + st.Dim.Render(safeLine(argsText(cc.call)))
		out = append(out, xansi.Truncate(head, w, "…"))
		switch cc.state {
		case callAsking:
			out = append(out, st.ToolWait.Render("  waiting for you: y run once · a always · n refuse · esc stop"))
		case callRunning:
			out = append(out, st.ToolWait.Render("  running…"))
		case callRefused:
			out = append(out, st.ToolFailed.Render("  refused: the model is told"))
		default:
			body := wrapPlain(strings.TrimRight(safeText(cc.output), "\n"), max(w-2, 10))
			folded := 0
			if len(body) > cardFold {
				folded, body = len(body)-cardFold, body[:cardFold]
			}
			style := st.ToolOutput
			if cc.state == callFailed {
				style = st.ToolFailed
			}
			for _, l := range body {
				out = append(out, "  "+style.Render(l))
			}
			var foot []string
			if folded > 0 {
				word := "lines"
				if folded == 1 {
					word = "line"
				}
				foot = append(foot, fmt.Sprintf("%d more %s folded (/export has them)", folded, word))
			}
			if cc.elapsed > 0 {
				foot = append(foot, cc.elapsed.Round(time.Millisecond).String())
			}
			if len(foot) > 0 {
				out = append(out, "  "+xansi.Truncate(st.Footer.Render(strings.Join(foot, " · ")), w-2, "…"))
			}
			if cc.full > len(cc.output) {
				note := fmt.Sprintf("cut to %d of %d bytes for the model (/export writes it whole)", len(cc.output), cc.full)
				out = append(out, "  "+xansi.Truncate(st.Footer.Render(note), w-2, "…"))
			}
		}
	}
	return out
}

// record is the card's calls and results as the tool message records
// them: what the model was given, or with whole the outputs uncut (for
// /export).
func (c *toolCard) record(whole bool) (calls []tools.Call, rs []tools.Response) {
	for _, cc := range c.calls {
		out := cc.output
		if whole && cc.whole != "" {
			out = cc.whole
		}
		calls = append(calls, cc.call)
		switch cc.state {
		case callRefused:
			rs = append(rs, engine.Refused(cc.call))
		case callFailed:
			rs = append(rs, tools.Response{Name: cc.call.Name, Value: map[string]any{"error": cc.output}})
		case callDone:
			rs = append(rs, tools.Response{Name: cc.call.Name, Value: out})
		}
	}
	return calls, rs
}

// The conversation's side of the cards.

// AddCard shows a card after the last reply, whose text becomes the
// reply's without its calls.
func (c *conversation) AddCard(text string, card *toolCard) {
	if m := c.last(); m != nil && m.role == "model" {
		m.text = text
		m.runs = clipRuns(m.runs, len(text))
		c.rerender(m)
	}
	c.msgs = append(c.msgs, &chatMsg{role: "tool", card: card})
	c.fromBottom = 0
	c.changes++
}

// RefreshCard renders the last card again after its state changed.
func (c *conversation) RefreshCard(card *toolCard) {
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].card == card {
			c.rerender(c.msgs[i])
			c.changes++
			return
		}
	}
}

// DropCard takes a card whose calls were not answered off the screen
// (the engine's record has no results for them).
func (c *conversation) DropCard(card *toolCard) {
	if m := c.last(); m != nil && m.card == card {
		c.msgs = c.msgs[:len(c.msgs)-1]
		c.changes++
	}
}

// renderCard is a card message's lines.
func (c *conversation) renderCard(m *chatMsg, w int) []string {
	body := m.card.lines(c.st, w)
	lines := make([]string, 0, len(body)+1)
	m.body = [2]int{0, len(body)}
	for _, l := range body {
		lines = append(lines, gutter+l)
	}
	return append(lines, "")
}

// cardMessage is the chatMsg of the engine's "tool" message at index i
// of msgs (the calls are the model message's before it).
func cardMessage(msgs []engine.Message, i int) *chatMsg {
	var calls []tools.Call
	if i > 0 {
		calls = msgs[i-1].Calls
	}
	return &chatMsg{role: "tool", card: cardFromRecord(calls, msgs[i].Responses)}
}

// writeToolCalls is a card in /export: each call and its whole result.
func writeToolCalls(b *strings.Builder, m engine.Message) {
	b.WriteString("### Tools\n\n")
	for i, c := range m.Calls {
		fmt.Fprintf(b, "**%s** `%s`\n\n", c.Name, argsText(c))
		if i < len(m.Responses) {
			b.WriteString("```\n" + responseText(m.Responses[i].Value) + "\n```\n\n")
		} else {
			b.WriteString("_not run_\n\n")
		}
	}
}

// replyBody is a model reply's lines. While it streams, a tool call it
// is writing shows as one line, not as the format's markup (the card
// takes its place when the reply ends).
func (c *conversation) replyBody(m *chatMsg, w, code int) []string {
	i := strings.Index(m.text, tools.CallOpen)
	if !m.streaming || i < 0 {
		return c.modelBody(m, w, code)
	}
	cut := &chatMsg{role: m.role, text: m.text[:i], runs: clipRuns(slices.Clone(m.runs), i), streaming: true}
	return append(c.modelBody(cut, w, code), c.st.ToolWait.Render("⚙ calling a tool…"))
}
