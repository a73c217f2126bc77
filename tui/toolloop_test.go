package tui

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/mcpweather"
	"github.com/orchard-llm/orchard/mcpclient"
	"github.com/orchard-llm/orchard/tools"
)

// toolFake is the fake engine with the chat's tool loop: it records the
// declarations and the results it is given.
type toolFake struct {
	*FakeEngine
	mu      sync.Mutex
	decls   [][]tools.Declaration
	results [][]tools.Response
}

func (f *toolFake) SetTools(t engine.ChatTools) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decls = append(f.decls, t.Decls)
	return nil
}

func (f *toolFake) ToolResults(rs []tools.Response) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = append(f.results, rs)
	return nil
}

// weatherClient is an MCP client of a weather server served in-process
// (streamable HTTP).
func weatherClient(t *testing.T) *mcpclient.Client {
	t.Helper()
	s := mcpweather.Server()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	c := mcpclient.New(map[string]mcpclient.Server{"weather": {URL: ts.URL, Enabled: true}}, mcpclient.Options{})
	t.Cleanup(func() { c.Close() })
	return c
}

// runToolCmds runs a command and what it batches, giving the loop's
// messages to m and running what they return in turn (the tool calls'
// work, done inline); a toast's timer and other messages are left. A
// command that does not answer within 5 s fails the test.
func runToolCmds(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("a command did not answer")
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runToolCmds(t, m, c)
		}
	case toolsetMsg, toolDoneMsg:
		_, next := m.Update(msg)
		runToolCmds(t, m, next)
	case toolKeptMsg:
		m.Update(msg)
	}
}

var weatherCall = tools.Call{Name: "get_weather", Args: map[string]any{"city": "Paris"}}

// askWeather plays a reply that calls get_weather.
func askWeather(m *Model) tea.Cmd {
	reply := "Let me look.<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>"
	cmd := m.handleEvents([]engine.Event{engine.Started{Turn: 0}, &engine.Delta{Text: reply},
		engine.Finished{Reply: reply, Calls: []tools.Call{weatherCall}, Metrics: engine.TurnMetrics{FinishReason: "tool_calls"}}})
	m.Update(frameMsg{})
	return cmd
}

// TestToolCard: the servers' tools are declared when the chat opens; a
// call shows as a card and asks: y runs it once (the result on the card,
// given back to the engine), a runs it and keeps it allowed (the config
// writer called; the next call runs without asking), n refuses (the model
// is told), esc stops the loop (no results, the card gone). /tools lists
// the tools and their cost, and /tools off takes a server's away.
func TestToolCard(t *testing.T) {
	f := &toolFake{FakeEngine: testFake(t, FakeOptions{})}
	var kept []string
	m := newTestModel(t, f, 100, 30, Options{Tools: &ToolsOptions{Client: weatherClient(t),
		KeepAllowed: func(name string) error { kept = append(kept, name); return nil }}})
	runToolCmds(t, m, m.tools.loadTools())
	if len(f.decls) != 1 || len(f.decls[0]) != 1 || f.decls[0][0].Name != "get_weather" {
		t.Fatalf("declared %v", f.decls)
	}
	send(m, engine.ToolsChanged{Count: 1, Tokens: 57})

	// While the reply streams, its call shows as a line, not as markup.
	m.handleEvents([]engine.Event{engine.Started{Turn: 0}, &engine.Delta{Text: "Let me look.<|tool_call>call:get_wea"}})
	m.Update(frameMsg{})
	if screen := plain(m); !strings.Contains(screen, "⚙ calling a tool…") || strings.Contains(screen, "<|tool_call>") || !strings.Contains(screen, "Let me look.") {
		t.Fatalf("streaming a call:\n%s", screen)
	}
	m.handleEvents([]engine.Event{engine.Cancelled{Partial: "Let me look."}})
	runToolCmds(t, m, askWeather(m))
	screen := plain(m)
	for _, want := range []string{"⚙ weather.get_weather", `{"city":"Paris"}`, "Run weather.get_weather", "a always", "Let me look."} {
		if !strings.Contains(screen, want) {
			t.Fatalf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "<|tool_call>") {
		t.Fatalf("the call's markup is on screen:\n%s", screen)
	}
	_, cmd := m.Update(press("y"))
	runToolCmds(t, m, cmd)
	want := [][]tools.Response{{{Name: "get_weather", Value: "sunny, 15 °C in Paris"}}}
	if !reflect.DeepEqual(f.results, want) {
		t.Fatalf("results %#v, want %#v", f.results, want)
	}
	if screen := plain(m); !strings.Contains(screen, "sunny, 15 °C in Paris") {
		t.Fatalf("no result on the card:\n%s", screen)
	}

	// a: run, kept, and not asked again.
	runToolCmds(t, m, askWeather(m))
	_, cmd = m.Update(press("a"))
	runToolCmds(t, m, cmd)
	runToolCmds(t, m, askWeather(m))
	if len(f.results) != 3 || !reflect.DeepEqual(kept, []string{"weather.get_weather"}) || m.asking() {
		t.Fatalf("after a: results %d, kept %v, asking %v", len(f.results), kept, m.asking())
	}

	// n and esc, with the tool no longer allowed.
	m.tools.always = map[string]bool{}
	runToolCmds(t, m, askWeather(m))
	_, cmd = m.Update(press("n"))
	runToolCmds(t, m, cmd)
	if got := f.results[3]; !reflect.DeepEqual(got, []tools.Response{engine.Refused(weatherCall)}) {
		t.Fatalf("refused: %#v", got)
	}
	if screen := plain(m); !strings.Contains(screen, "refused") {
		t.Fatalf("no refusal on the card:\n%s", screen)
	}
	runToolCmds(t, m, askWeather(m))
	_, cmd = m.Update(press("esc"))
	runToolCmds(t, m, cmd)
	if len(f.results) != 4 || m.asking() || m.conv.last().card != nil {
		t.Fatalf("esc: results %d, asking %v", len(f.results), m.asking())
	}

	// ctrl+c at the question stops the loop as esc does.
	runToolCmds(t, m, askWeather(m))
	m.Update(press("ctrl+c"))
	if len(f.results) != 4 || m.asking() || m.conv.last().card != nil || m.tools.card != nil {
		t.Fatalf("ctrl+c: results %d, asking %v", len(f.results), m.asking())
	}

	typeText(m, "/tools")
	m.Update(press("enter"))
	if screen := plain(m); !strings.Contains(screen, "1 declared, 57 context tokens") || !strings.Contains(screen, "Server weather: [on] get_weather — The weather") {
		t.Fatalf("/tools:\n%s", screen)
	}
	m.Update(press("esc"))
	typeText(m, "/tools off weather")
	m.Update(press("enter"))
	if n := len(f.decls); n != 2 || len(f.decls[1]) != 0 {
		t.Fatalf("after /tools off: declared %v", f.decls)
	}
}

// TestToolCardRecord: a loaded conversation's calls and results show as
// a card (folded when long), and /export writes them.
func TestToolCardRecord(t *testing.T) {
	long := strings.Repeat("line\n", 12)
	msgs := []engine.Message{{Role: "user", Content: "Weather?"},
		{Role: "model", Content: "Let me look.", Calls: []tools.Call{weatherCall}},
		{Role: "tool", Responses: []tools.Response{{Name: "get_weather", Value: long}}},
		{Role: "model", Content: "Sunny."}}
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 100, 40, Options{})
	send(m, engine.Cleared{Messages: msgs})
	screen := plain(m)
	if !strings.Contains(screen, "⚙ get_weather") || !strings.Contains(screen, "8 more lines folded") || !strings.Contains(screen, "Sunny.") {
		t.Fatalf("screen:\n%s", screen)
	}
	md := transcriptMarkdown(engine.ModelInfo{}, engine.Settings{}, m.conv.Messages(), testTime)
	if !strings.Contains(md, "### Tools") || !strings.Contains(md, "**get_weather** `{\"city\":\"Paris\"}`") || !strings.Contains(md, long) {
		t.Fatalf("export:\n%s", md)
	}
}

// TestToolCardCutOutput: an output cut for the model (mcpclient's cap)
// goes back cut, with the card saying so, and /export writes it whole.
func TestToolCardCutOutput(t *testing.T) {
	f := &toolFake{FakeEngine: testFake(t, FakeOptions{})}
	m := newTestModel(t, f, 100, 30, Options{})
	card := newToolCard([]tools.Call{weatherCall})
	m.tools = &toolLoop{card: card, always: map[string]bool{}}
	m.conv.AddCard("", card)
	whole := strings.Repeat("x", 100_000)
	cut := whole[:1000] + "\n[the tool wrote 100000 bytes, the first 1000 are shown]"
	m.Update(toolDoneMsg{card, 0, mcpclient.Outcome{Response: tools.Response{Name: "get_weather", Value: cut},
		Result: mcpclient.Result{Text: cut, Full: whole, Truncated: true, Elapsed: 5 * time.Millisecond}}})
	if want := [][]tools.Response{{{Name: "get_weather", Value: cut}}}; !reflect.DeepEqual(f.results, want) {
		t.Fatalf("the model was given %d results", len(f.results))
	}
	if screen := plain(m); !strings.Contains(screen, "of 100000 bytes for the model") || !strings.Contains(screen, "5ms") {
		t.Fatalf("card:\n%s", screen)
	}
	md := transcriptMarkdown(engine.ModelInfo{}, engine.Settings{}, m.conv.Messages(), testTime)
	if !strings.Contains(md, whole) {
		t.Fatal("/export does not hold the whole output")
	}
}
