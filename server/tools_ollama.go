package server

import (
	"encoding/json"

	"github.com/orchard-llm/orchard/tools"
)

// ollamaCalls are calls as ollama's /api/chat returns them in
// message.tool_calls: {"function":{"name","arguments":{…}}}, the arguments
// an object (nil when there are none).
func ollamaCalls(calls []tools.Call) json.RawMessage {
	if len(calls) == 0 {
		return nil
	}
	type fn struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	out := make([]struct {
		Function fn `json:"function"`
	}, len(calls))
	for i, c := range calls {
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		out[i].Function = fn{Name: c.Name, Arguments: args}
	}
	b, err := json.Marshal(out)
	if err != nil { // a parsed call holds only what JSON holds
		return nil
	}
	return b
}
