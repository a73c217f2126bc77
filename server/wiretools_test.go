package server

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tools"
)

// TestWireCarriesToolCalls: the messages a screen attaching gets (session,
// stream) carry the chat's calls and results, numbers as written.
func TestWireCarriesToolCalls(t *testing.T) {
	msgs := []engine.Message{{Role: "user", Content: "Weather?"},
		{Role: "model", Content: "Let me look.", Calls: []tools.Call{{Name: "get_weather", Args: map[string]any{"city": "Paris", "days": json.Number("3")}}}},
		{Role: "tool", Responses: []tools.Response{{Name: "get_weather", Value: "sunny"}}},
		{Role: "model", Content: "Sunny."}}
	data, err := json.Marshal(toWireMessages(msgs))
	if err != nil {
		t.Fatal(err)
	}
	var back []wireMessage
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := fromWireMessages(&back); !reflect.DeepEqual(got, msgs) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", got, msgs)
	}
}
