package tools

// Call is one function call the model wrote (or a client's API sent).
// Argument values are nil, bool, string, json.Number (numbers keep the
// digits they were written with), []any and map[string]any; rendering
// also takes float64, Go integers and []string.
type Call struct {
	Name string
	Args map[string]any
}

// Response is one function's result, written back inside the model's
// turn. A map[string]any value is written as the response's own members
// (response:NAME{temperature:15,weather:<|"|>sunny<|"|>}); any other value,
// such as a tool's text output, as response:NAME{value:…}.
type Response struct {
	Name  string
	Value any
}

// RenderCalls writes calls as the model writes them,
// <|tool_call>call:NAME{key:value,…}<tool_call|> each, keys sorted and
// bare (a key that would not parse back bare is delimited with <|"|>).
// The same call always has the same bytes, whatever order its arguments
// came in: a conversation re-rendered with its calls keeps its prefix.
func RenderCalls(cs []Call) (Text, error) {
	var w writer
	for _, c := range cs {
		w.block(CallOpen, "call", c.Name, CallClose, func() { w.members(c.Name, c.Args, false, 1) })
	}
	return w.result()
}

// RenderResponses writes results as the chat template does,
// <|tool_response>response:NAME{…}<tool_response|> each, to follow the
// calls in the same model turn. When the model itself stopped on
// <|tool_response> (it writes it after its calls, and a host stops on
// it), that first opener is already in the cache: feed the text after it
// (Text.After).
func RenderResponses(rs []Response) (Text, error) {
	var w writer
	for _, r := range rs {
		w.block(ResponseOpen, "response", r.Name, ResponseClose, func() {
			if m, ok := r.Value.(map[string]any); ok {
				w.members(r.Name, m, false, 1)
			} else {
				w.lit("value:")
				w.value(r.Name, r.Value, false, 1)
			}
		})
	}
	return w.result()
}

// After returns t without its leading markup piece when that piece is
// spelling: RenderResponses(rs).After(ResponseOpen) is what follows a
// <|tool_response> the model wrote itself.
func (t Text) After(spelling string) Text {
	if len(t) == 0 || t[0].Literal || len(t[0].Text) < len(spelling) || t[0].Text[:len(spelling)] != spelling {
		return t
	}
	rest := t[0].Text[len(spelling):]
	if rest == "" {
		return t[1:]
	}
	out := append(Text{{Text: rest}}, t[1:]...)
	return out
}
