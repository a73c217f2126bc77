package server

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tools"
)

// TestAttachTools: an attached screen declares its tools to the server's
// chat (the cost comes back as ToolsChanged), a reply's calls reach it on
// the finished event, and the results it gives back go on with the same
// model turn on the server; results no call waits for are refused.
// Another screen attached sees the reply, not a request to run its calls.
func TestAttachTools(t *testing.T) {
	ts := weatherServer(t, "v2")
	c, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	decl := tools.Declaration{Name: "get_weather", Description: "The weather in a city",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}
	if err := c.SetTools(engine.ChatTools{Decls: []tools.Declaration{decl}}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.ToolsChanged); return ok })
	if tc := evs[len(evs)-1].(engine.ToolsChanged); tc.Count != 1 || tc.Tokens <= 0 {
		t.Fatalf("tools changed %+v", tc)
	}

	other, err := Connect(context.Background(), "unix:"+ts.sock, "") // another screen
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := c.Send("What is the weather in Paris?"); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, turnEnd)
	// The other screen shows the reply but does not run its calls.
	if oevs := until(t, other, turnEnd); len(oevs[len(oevs)-1].(engine.Finished).Calls) != 0 {
		t.Fatalf("the other screen was asked for the calls: %#v", oevs[len(oevs)-1])
	}
	call := tools.Call{Name: "get_weather", Args: map[string]any{"city": "Paris"}}
	f, ok := evs[len(evs)-1].(engine.Finished)
	if !ok || f.Metrics.FinishReason != "tool_calls" || !reflect.DeepEqual(f.Calls, []tools.Call{call}) {
		t.Fatalf("first turn: %#v", evs[len(evs)-1])
	}
	if err := c.ToolResults([]tools.Response{{Name: "get_weather", Value: "sunny, 15 °C"}}); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, func(ev engine.Event) bool {
		_, fin := ev.(engine.Finished)
		f, failed := ev.(engine.Failed)
		return fin || failed && f.Op == engine.OpToolResults
	})
	if f, ok := evs[len(evs)-1].(engine.Finished); !ok || f.Reply != weatherAnswer || len(f.Calls) != 0 {
		t.Fatalf("answer: %#v", evs[len(evs)-1])
	}
	roles := []string{}
	for _, m := range c.Messages() {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "user model tool model" {
		t.Fatalf("conversation %s", got)
	}

	// Results with no call waiting: refused on the stream.
	if err := c.ToolResults([]tools.Response{{Name: "get_weather", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, func(ev engine.Event) bool { f, ok := ev.(engine.Failed); return ok && f.Op == engine.OpToolResults })
	if f := evs[len(evs)-1].(engine.Failed); !strings.Contains(f.Err.Error(), "no tool call is waiting") {
		t.Fatalf("results without a call: %v", f.Err)
	}
}
