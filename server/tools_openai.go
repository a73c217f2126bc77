package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tools"
)

// Tool calling through OpenAI's chat completions (and, with the same
// shapes, ollama's /api/chat): tools and tool_choice become the engine's
// declarations, assistant tool_calls and role "tool" messages its calls and
// results, and the calls the model writes come back as tool_calls with
// ids, streamed as delta.tool_calls chunks.

// ToolChoiceHeader says that a tool_choice was taken as a wish, not a
// constraint: an argmax bundle's output cannot be masked, so "required"
// or a named function cannot force a call (the model may answer in text).
// A named function is the only one declared: the model is offered no
// other.
const ToolChoiceHeader = "X-Orchard-Tool-Choice"

// toolSpec is a tool as OpenAI and ollama send it.
type toolSpec struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

// toolCallJSON is a call in an assistant message or a reply: OpenAI's
// arguments are a JSON string, ollama's an object.
type toolCallJSON struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Index    *int   `json:"index,omitempty"` // streamed deltas
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// toolMode is what a request's tools and tool_choice ask of the reply.
type toolMode struct {
	on       bool   // tools declared: calls are parsed out of the reply
	single   bool   // parallel_tool_calls false: the first call only
	unforced string // tool_choice the bundle cannot force ("" none)
}

// decodeJSONNumbers decodes raw keeping numbers as written.
func decodeJSONNumbers(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

// declarationsOf reads OpenAI's (and ollama's) tools.
func declarationsOf(raw json.RawMessage) ([]tools.Declaration, error) {
	if !given(raw) {
		return nil, nil
	}
	var specs []toolSpec
	if err := decodeJSONNumbers(raw, &specs); err != nil {
		return nil, bad("invalid_value", "tools", "tools must be an array of {\"type\":\"function\",\"function\":{\"name\",\"description\",\"parameters\"}}")
	}
	out := make([]tools.Declaration, 0, len(specs))
	seen := map[string]bool{}
	for i, sp := range specs {
		param := fmt.Sprintf("tools[%d]", i)
		switch {
		case sp.Type != "" && sp.Type != "function":
			return nil, bad("unsupported_value", param+".type", fmt.Sprintf("tools of type %q are not supported: function tools are", sp.Type))
		case sp.Function == nil:
			return nil, bad("invalid_value", param+".function", "a tool needs its function: {\"name\",\"description\",\"parameters\"}")
		case !tools.ValidName(sp.Function.Name):
			return nil, bad("invalid_value", param+".function.name", fmt.Sprintf("a function name is 1…%d letters, digits, '_', '-' or '.'", tools.MaxNameBytes))
		case seen[sp.Function.Name]:
			return nil, bad("invalid_value", param+".function.name", fmt.Sprintf("the function %q is declared twice", sp.Function.Name))
		}
		seen[sp.Function.Name] = true
		out = append(out, tools.Declaration{Name: sp.Function.Name, Description: sp.Function.Description, Parameters: sp.Function.Parameters})
	}
	if _, err := tools.RenderDeclarations(out); err != nil {
		return nil, bad("invalid_value", "tools", err.Error())
	}
	return out, nil
}

// toolChoiceOf applies tool_choice to the declarations: "none" declares
// nothing (and calls in the reply stay text), "auto" all, "required" all
// (unforced), a named function that one alone (unforced: it may still
// answer in text).
func toolChoiceOf(raw json.RawMessage, decls []tools.Declaration) ([]tools.Declaration, toolMode, error) {
	mode := toolMode{on: len(decls) > 0}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return decls, mode, nil
	}
	var word string
	if json.Unmarshal(raw, &word) == nil {
		switch word {
		case "auto":
			return decls, mode, nil
		case "none":
			return nil, toolMode{}, nil
		case "required":
			if len(decls) == 0 {
				return nil, mode, bad("invalid_value", "tool_choice", "tool_choice required needs tools")
			}
			mode.unforced = "required"
			return decls, mode, nil
		}
		return nil, mode, bad("invalid_value", "tool_choice", fmt.Sprintf("tool_choice %q: want none, auto, required or {\"type\":\"function\",\"function\":{\"name\":…}}", word))
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Type != "function" || named.Function.Name == "" {
		return nil, mode, bad("invalid_value", "tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":…}}")
	}
	for _, d := range decls {
		if d.Name == named.Function.Name {
			mode.unforced = "function"
			return []tools.Declaration{d}, mode, nil
		}
	}
	return nil, mode, bad("invalid_value", "tool_choice", fmt.Sprintf("tool_choice names %q, which is not among the tools", named.Function.Name))
}

// noteToolChoice says on the answer that a tool_choice was not forced.
func (s *Server) noteToolChoice(w http.ResponseWriter, mode toolMode) {
	if mode.unforced == "" {
		return
	}
	w.Header().Set(ToolChoiceHeader, mode.unforced+"; unforced")
	s.log.Info("tool_choice not forced: the bundle emits argmax ids, so the model may answer without a call", "tool_choice", mode.unforced)
}

// callsOf reads an assistant message's tool_calls: the calls and their ids
// ("" where a client sent none).
func callsOf(raw json.RawMessage, param string) ([]tools.Call, []string, error) {
	var in []toolCallJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, nil, bad("invalid_value", param, "tool_calls must be an array of {\"id\",\"type\":\"function\",\"function\":{\"name\",\"arguments\"}}")
	}
	calls := make([]tools.Call, 0, len(in))
	ids := make([]string, 0, len(in))
	for j, c := range in {
		p := fmt.Sprintf("%s[%d].function", param, j)
		if !tools.ValidName(c.Function.Name) {
			return nil, nil, bad("invalid_value", p+".name", fmt.Sprintf("a function name is 1…%d letters, digits, '_', '-' or '.'", tools.MaxNameBytes))
		}
		args, err := argumentsOf(c.Function.Arguments)
		if err != nil {
			return nil, nil, bad("invalid_value", p+".arguments", "arguments must be a JSON object (or a string holding one): "+err.Error())
		}
		calls = append(calls, tools.Call{Name: c.Function.Name, Args: args})
		ids = append(ids, c.ID)
	}
	if _, err := tools.RenderCalls(calls); err != nil {
		return nil, nil, bad("invalid_value", param, err.Error())
	}
	return calls, ids, nil
}

// argumentsOf reads a call's arguments: an object, or a string holding
// one (OpenAI's form); empty is no arguments.
func argumentsOf(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return map[string]any{}, nil
		}
		raw = []byte(s)
	}
	var args map[string]any
	if err := decodeJSONNumbers(raw, &args); err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// callNames resolves tool messages to the function they answer: by
// tool_call_id among the calls sent before, else by the name a client
// gave (ollama's tool_name, OpenAI's legacy name), else the only call of
// the assistant message before.
type callNames struct {
	byID map[string]string
	last []tools.Call
}

func (cn *callNames) add(calls []tools.Call, ids []string) {
	if cn.byID == nil {
		cn.byID = map[string]string{}
	}
	for i, id := range ids {
		if id != "" {
			cn.byID[id] = calls[i].Name
		}
	}
	cn.last = calls
}

func (cn *callNames) name(m *chatMessage, param string) (string, error) {
	if m.ToolCallID != "" {
		if n, ok := cn.byID[m.ToolCallID]; ok {
			return n, nil
		}
		if m.Name == "" && m.ToolName == "" {
			return "", bad("invalid_value", param+".tool_call_id", fmt.Sprintf("tool_call_id %q names no call made before it", m.ToolCallID))
		}
	}
	switch {
	case m.ToolName != "":
		return m.ToolName, nil
	case m.Name != "":
		return m.Name, nil
	case len(cn.last) == 1:
		return cn.last[0].Name, nil
	}
	return "", bad("invalid_value", param, "a tool message needs tool_call_id (or tool_name) to say which call it answers")
}

// callsJSON are calls as OpenAI returns them: ids, and the arguments as a
// JSON string. index numbers them in a stream (from first).
func callsJSON(calls []tools.Call, first int, indexed bool) []toolCallJSON {
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		args, err := json.Marshal(c.Args)
		if err != nil || c.Args == nil {
			args = []byte("{}")
		}
		str, _ := json.Marshal(string(args))
		out[i] = toolCallJSON{ID: newID("call_"), Type: "function"}
		out[i].Function.Name, out[i].Function.Arguments = c.Name, str
		if indexed {
			n := first + i
			out[i].Index = &n
		}
	}
	return out
}

// toolReply splits a finished reply as mode asks: its text (malformed
// calls kept in it) and its calls, and the finish reason: "tool_calls"
// when it made any. Without tools the reply is all text.
func toolReply(e engine.Finished, mode toolMode) (string, []tools.Call, string) {
	reason := finishReason(e.Metrics.FinishReason)
	if !mode.on {
		return e.Reply, nil, reason
	}
	text, calls, _ := tools.Split(e.Reply)
	if mode.single && len(calls) > 1 {
		calls = calls[:1]
	}
	if len(calls) > 0 {
		reason = "tool_calls"
	}
	return text, calls, reason
}

// toolDeltas turns a streamed reply into text and calls as they end.
type toolDeltas struct {
	mode  toolMode
	st    tools.Stream
	ev    []tools.Event
	calls int // calls sent so far
}

// push feeds text and returns the reply text and the calls it completed.
func (td *toolDeltas) push(text string, end bool) (string, []tools.Call) {
	if !td.mode.on {
		return text, nil
	}
	td.ev = td.st.Feed(text, td.ev[:0])
	if end {
		td.ev = td.st.End(td.ev)
	}
	var b strings.Builder
	var calls []tools.Call
	for _, e := range td.ev {
		switch e.Kind {
		case tools.EventText, tools.EventMalformed:
			b.WriteString(e.Text)
		case tools.EventCall:
			if td.mode.single && td.calls > 0 {
				continue
			}
			td.calls++
			calls = append(calls, e.Call)
		}
	}
	return b.String(), calls
}

// reason is the stream's finish reason: "tool_calls" when it sent any.
func (td *toolDeltas) reason(r string) string {
	if td.calls > 0 {
		return "tool_calls"
	}
	return r
}
