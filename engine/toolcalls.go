package engine

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/orchard-llm/orchard/tokenizer"
	"github.com/orchard-llm/orchard/tools"
)

// Tool calling in a request (Gemma 4's format, package tools). The
// declarations close the system turn; a model message's calls follow its
// text, and the "tool" messages after it put their results inside the
// same model turn — the model's text after them continues that turn
// without a new <|turn>model:
//
//	<|turn>model\n{text}<|tool_call>call:…<tool_call|><|tool_response>response:…<tool_response|>{text}…
//
// Everything is rendered with sorted keys, so the turn a follow-up request
// sends back has the very bytes the model wrote and the cache keeps all of
// it: only the results are prefilled. The reply stops when the model writes
// <|tool_response> (it waits for results); that token stays pending, as an
// end of turn does, and the follow-up's rendering begins with it.

// toolTokens returns the ids of the tool tokens, ok false when the
// tokenizer has none (a Gemma 3 bundle).
func (s *Session) toolTokens() (tools.Tokens, bool) {
	t, err := tools.LookupTokens(s.tok)
	return t, err == nil
}

// usesTools reports whether a request declares tools or carries calls or
// results.
func usesTools(req Request) bool {
	return len(req.Tools) > 0 || slices.ContainsFunc(req.Messages, func(m Message) bool {
		return m.Role == "tool" || len(m.Calls) > 0
	})
}

// toolRequest checks a request's declarations, calls and results and, when
// it ends with results, adds the model's empty message that the reply
// continues: a request ending with a tool message is a prefill of the same
// model turn.
func (s *Session) toolRequest(req Request) (Request, error) {
	if !usesTools(req) {
		return req, nil
	}
	if req.Raw {
		return req, &RequestError{errors.New("a raw prompt takes no tools: send a conversation")}
	}
	if _, err := tools.LookupTokens(s.tok); err != nil {
		return req, &RequestError{fmt.Errorf("this bundle cannot call tools: %w", err)}
	}
	if _, err := tools.RenderDeclarations(req.Tools); err != nil {
		return req, &RequestError{err}
	}
	for i, m := range req.Messages {
		switch {
		case m.Role == "tool":
			prev := ""
			if i > 0 {
				prev = req.Messages[i-1].Role
			}
			if prev != "tool" && (prev != "model" || len(req.Messages[i-1].Calls) == 0) {
				return req, &RequestError{fmt.Errorf("message %d holds tool results but does not follow a model message with calls", i)}
			}
			if len(m.Responses) == 0 {
				return req, &RequestError{fmt.Errorf("message %d is a tool message without results", i)}
			}
			if _, err := tools.RenderResponses(m.Responses); err != nil {
				return req, &RequestError{fmt.Errorf("message %d: %w", i, err)}
			}
		case len(m.Calls) > 0:
			if m.Role != "model" {
				return req, &RequestError{fmt.Errorf("message %d has calls but is not the model's", i)}
			}
			if _, err := tools.RenderCalls(m.Calls); err != nil {
				return req, &RequestError{fmt.Errorf("message %d: %w", i, err)}
			}
		}
	}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		req.Messages = append(slices.Clip(req.Messages), Message{Role: "model"})
	}
	return req, nil
}

// templateMessages are msgs as the template takes them: a model message
// with calls, the tool messages after it and the model messages that
// continue it make one model message written as pieces. The request was
// checked (toolRequest): rendering cannot fail.
func templateMessages(msgs []Message) []tokenizer.Message {
	out := make([]tokenizer.Message, 0, len(msgs))
	open := false // the last message is a model turn that results left open
	for _, m := range msgs {
		switch {
		case m.Role == "tool" && len(out) > 0 && out[len(out)-1].Role == tokenizer.RoleModel:
			last := &out[len(out)-1]
			if last.Parts == nil {
				last.Parts = modelParts(Message{Content: last.Content}, true)
			}
			t, _ := tools.RenderResponses(m.Responses)
			last.Parts, open = append(last.Parts, t...), true
			continue
		case m.Role == "model" && open:
			last := &out[len(out)-1]
			last.Parts = append(last.Parts, modelParts(m, false)...)
		case m.Role == "model" && len(m.Calls) > 0:
			out = append(out, tokenizer.Message{Role: tokenizer.RoleModel, Parts: modelParts(m, true)})
		default:
			out = append(out, tokenizer.Message{Role: tokenizer.Role(m.Role), Content: m.Content, Media: mediaFor(m.Attachments)})
		}
		open = false
	}
	return out
}

// modelParts writes a model message's text and calls. Text that calls or
// results follow keeps its trailing space, as the model wrote it before
// the call; the turn's opening space is trimmed, as the template trims.
func modelParts(m Message, first bool) tools.Text {
	text := tokenizer.StripThoughts(m.Content)
	if first {
		text = strings.TrimLeftFunc(text, unicode.IsSpace)
	}
	if len(m.Calls) == 0 {
		text = strings.TrimRightFunc(text, unicode.IsSpace)
	}
	out := tools.Text{}
	if text != "" {
		out = append(out, tools.Piece{Text: text, Literal: true})
	}
	calls, _ := tools.RenderCalls(m.Calls)
	return append(out, calls...)
}

// sameTools compares what two messages call and answer.
func sameTools(x, y Message) bool {
	return reflect.DeepEqual(x.Calls, y.Calls) && reflect.DeepEqual(x.Responses, y.Responses)
}

// toolStops is the stop set of a request's turn: the session's, and
// <|tool_response>, which the model writes after its calls to wait for
// their results.
func (s *Session) toolStops() ([]int, int) {
	t, ok := s.toolTokens()
	if !ok {
		return s.stops, -1
	}
	return append(slices.Clone(s.stops), t.ResponseOpen), t.ResponseOpen
}

// toolFinish gives a finished reply its calls: the reason is "tool_calls"
// when the model stopped for results of calls that parse. A malformed call
// stays in the reply as text, and a Notice says what is wrong with it.
func toolFinish(e Finished, sink func(Event)) Finished {
	_, calls, err := tools.Split(e.Reply)
	if err != nil {
		sink(Notice{Text: fmt.Sprintf("the reply holds a malformed tool call, kept as text: %v", err)})
	}
	e.Calls = calls
	if e.Metrics.FinishReason == "tool_calls" && len(calls) == 0 {
		e.Metrics.FinishReason = "stop"
	}
	return e
}

// CanCallTools reports whether the bundle can take tool declarations and
// calls: its tokenizer has Gemma 4's tool tokens and its template writes
// a system turn for the declarations.
func (s *Session) CanCallTools() bool {
	if _, ok := s.toolTokens(); !ok {
		return false
	}
	decl, err := tools.RenderDeclarations([]tools.Declaration{{Name: "f"}})
	if err != nil {
		return false
	}
	_, err = s.tmpl.Encode(tokenizer.Conversation{Tools: decl, Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "?"}}})
	return err == nil
}
