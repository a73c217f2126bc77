package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/tokenizer"
	"github.com/orchard-llm/orchard/tools"
)

// The chat's own tool loop. With tools set (SetTools), the chat's turns
// declare them in the system turn and stop where the model waits for
// results (<|tool_response>, left pending): the turn's Finished carries
// the calls (FinishReason "tool_calls") and asks the front end for their
// results. The front end decides (allow, refuse), runs the tools off its
// own loop and gives the results back with ToolResults: the same model
// turn goes on, and only the results are prefilled — the calls are
// rendered with the bytes the model wrote (toolcalls.go).

// DefaultMaxCalls bounds the calls of one turn when ChatTools.MaxCalls
// is 0 (config chat.tools.max_calls).
const DefaultMaxCalls = 8

// ChatTools are the chat's tools: what the model may call, and how many
// calls one turn (a user message and the replies after it) may make.
type ChatTools struct {
	Decls    []tools.Declaration
	MaxCalls int
}

func (t ChatTools) maxCalls() int {
	if t.MaxCalls > 0 {
		return t.MaxCalls
	}
	return DefaultMaxCalls
}

// ToolsChanged answers SetTools: how many tools the chat declares and
// what their declarations cost in context tokens.
type ToolsChanged struct {
	Count  int
	Tokens int
}

func (ToolsChanged) event() {}

// ErrNoCalls is the refusal of results no call is waiting for.
var ErrNoCalls = errors.New("no tool call is waiting for results")

// SetTools sets the chat's tools (none: the chat declares no tools) and
// returns what their declarations cost in context tokens.
func (s *Session) SetTools(t ChatTools) (int, error) {
	if len(t.Decls) == 0 {
		s.chatTools, s.chatDecls = ChatTools{MaxCalls: t.MaxCalls}, nil
		return 0, nil
	}
	if !s.CanCallTools() {
		return 0, errors.New("this bundle cannot call tools: its tokenizer has no Gemma 4 tool tokens")
	}
	text, err := tools.RenderDeclarations(t.Decls)
	if err != nil {
		return 0, err
	}
	cost, err := s.DeclarationTokens(text)
	if err != nil {
		return 0, err
	}
	s.chatTools, s.chatDecls = ChatTools{Decls: slices.Clone(t.Decls), MaxCalls: t.MaxCalls}, text
	return cost, nil
}

// DeclarationTokens is what declarations cost in the context: the tokens
// a first turn renders with them, less those it renders without.
func (s *Session) DeclarationTokens(decls tools.Text) (int, error) {
	msgs := []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "?"}}
	with, err := s.tmpl.Encode(tokenizer.Conversation{System: s.set.System, Tools: decls, Messages: msgs})
	if err != nil {
		return 0, err
	}
	without, err := s.tmpl.Encode(tokenizer.Conversation{System: s.set.System, Messages: msgs})
	if err != nil {
		return 0, err
	}
	return len(with) - len(without), nil
}

// toolTurn runs a chat turn with the chat's tools declared and the
// model's wait for results as a stop.
func (s *Session) toolTurn(emit func(Event), run func(emit func(Event)) error) error {
	if len(s.chatTools.Decls) == 0 {
		return run(emit)
	}
	stops, respOpen := s.toolStops()
	saved := s.stops
	s.stops, s.decls = stops, s.chatDecls
	defer func() { s.stops, s.decls = saved, nil }()
	return run(func(ev Event) {
		if f, ok := ev.(Finished); ok && f.Metrics.FinishReason == "eos" && s.pending == respOpen {
			ev = s.callsAsked(f, emit)
		}
		emit(ev)
	})
}

// callsAsked turns a reply that waits for results into the model message
// with its calls (Content the text, Calls the calls: the rendering that
// gives the model's bytes back) and a Finished asking for their results.
// A malformed call stays text, with a Notice. Past the turn's bound the
// calls are kept in the record but not asked for.
func (s *Session) callsAsked(f Finished, emit func(Event)) Event {
	f = toolFinish(f, emit)
	f.Metrics.FinishReason = "stop"
	n := len(s.msgs)
	if len(f.Calls) == 0 || n == 0 || s.msgs[n-1].Role != "model" {
		f.Calls = nil
		return f
	}
	text, _, _ := tools.Split(f.Reply)
	last := &s.msgs[n-1]
	begun, _ := strings.CutSuffix(last.Content, f.Reply) // a continued message's text before the reply
	last.Content, last.Calls = begun+text, f.Calls
	// The next user message renders this turn anew: what a plain reply
	// continues (an end of turn) is not what the model left pending.
	s.contOK = false
	f.Metrics.FinishReason = "tool_calls"
	if made := s.callsThisTurn(); made > s.chatTools.maxCalls() {
		emit(Notice{Text: fmt.Sprintf("the model asked for %d tool calls in one turn, more than chat.tools.max_calls (%d): the calls are not run", made, s.chatTools.maxCalls())})
		f.Calls, f.Metrics.FinishReason = nil, "tool_limit"
	}
	if last.Metrics != nil {
		m := *last.Metrics
		m.FinishReason = f.Metrics.FinishReason
		last.Metrics = &m
	}
	return f
}

// callsThisTurn counts the calls made since the last user message.
func (s *Session) callsThisTurn() int {
	n := 0
	for i := len(s.msgs) - 1; i >= 0 && s.msgs[i].Role != "user"; i-- {
		n += len(s.msgs[i].Calls)
	}
	return n
}

// AwaitedCalls are the calls the conversation waits results for: the last
// message's, when the model stopped for them within the turn's bound.
func (s *Session) AwaitedCalls() []tools.Call {
	n := len(s.msgs)
	t, ok := s.toolTokens()
	if !ok || n == 0 || len(s.msgs[n-1].Calls) == 0 || s.pending != t.ResponseOpen ||
		s.callsThisTurn() > s.chatTools.maxCalls() {
		return nil
	}
	return s.msgs[n-1].Calls
}

// ToolResults gives the results of the awaited calls back, one per call
// in order (a refused call's result says so), and goes on with the same
// model turn: only the results are prefilled. A failure puts the session
// back before them; the calls wait again.
func (s *Session) ToolResults(rs []tools.Response, emit func(Event)) error {
	calls := s.AwaitedCalls()
	err := error(nil)
	switch {
	case calls == nil:
		err = ErrNoCalls
	case len(rs) != len(calls):
		err = fmt.Errorf("%d results for %d calls", len(rs), len(calls))
	default:
		_, err = tools.RenderResponses(rs)
	}
	if err != nil {
		emit(Failed{Op: OpToolResults, Err: err})
		return err
	}
	return s.toolTurn(emit, func(emit func(Event)) error {
		undo := s.undoPoint()
		s.msgs = append(s.msgs, Message{Role: "tool", Responses: slices.Clone(rs)})
		m := Message{Role: "model"}
		return s.send(turnReq{msg: &m, from: s.tail(), op: OpToolResults, cont: true, undo: undo}, emit)
	})
}

// Refused is the result of a call the user did not allow: the model is
// told, and can answer without it.
func Refused(c tools.Call) tools.Response {
	return tools.Response{Name: c.Name, Value: map[string]any{"error": "the user refused this call"}}
}

// SetTools sets the chat's tools; ToolsChanged answers (Failed{Op:
// OpTools} when the bundle cannot call tools or a declaration is bad).
func (e *Engine) SetTools(t ChatTools) error {
	return e.do(OpTools, func() {
		cost, err := e.sess.SetTools(t)
		if err != nil {
			e.emit(Failed{Op: OpTools, Err: err})
			return
		}
		e.emit(ToolsChanged{Count: len(t.Decls), Tokens: cost})
	})
}

// ToolResults gives the results of the calls a Finished asked for (one
// per call, in order) and goes on with the model's turn: a turn's events
// follow (Failed{Op: OpToolResults} when no call waits).
func (e *Engine) ToolResults(rs []tools.Response) error {
	return e.startTurn(OpToolResults, func(emit func(Event)) { e.sess.ToolResults(rs, emit) })
}

// The checkpoint form of calls and results: JSON whose numbers come back
// as json.Number, so a restored call renders the digits it was written
// with (the same bytes, the same cache prefix).
type callJSON struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args,omitempty"`
}

type responseJSON struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// ToolsJSON are m's calls and results as JSON (none: nil), the form
// checkpoints and the server's stream carry.
func (m Message) ToolsJSON() (calls, responses json.RawMessage) {
	if len(m.Calls) > 0 {
		cs := make([]callJSON, len(m.Calls))
		for i, c := range m.Calls {
			cs[i] = callJSON(c)
		}
		calls, _ = json.Marshal(cs) // values a call or a tool gives are JSON's own
	}
	if len(m.Responses) > 0 {
		rs := make([]responseJSON, len(m.Responses))
		for i, r := range m.Responses {
			rs[i] = responseJSON(r)
		}
		responses, _ = json.Marshal(rs)
	}
	return calls, responses
}

// SetToolsJSON gives m the calls and results ToolsJSON wrote.
func (m *Message) SetToolsJSON(calls, responses json.RawMessage) error {
	decode := func(raw json.RawMessage, v any) error {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		return d.Decode(v)
	}
	if len(calls) > 0 {
		var cs []callJSON
		if err := decode(calls, &cs); err != nil {
			return fmt.Errorf("message's tool calls: %w", err)
		}
		for _, c := range cs {
			m.Calls = append(m.Calls, tools.Call(c))
		}
	}
	if len(responses) > 0 {
		var rs []responseJSON
		if err := decode(responses, &rs); err != nil {
			return fmt.Errorf("message's tool results: %w", err)
		}
		for _, r := range rs {
			m.Responses = append(m.Responses, tools.Response(r))
		}
	}
	return nil
}
