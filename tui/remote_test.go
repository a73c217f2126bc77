package tui

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

// attachedModel is a screen as over a server, 120 columns wide.
func attachedModel(t *testing.T) *Model {
	t.Helper()
	info := engine.ModelInfo{Name: "demo-r1-small", Family: "r1", Context: 2048, VerifyWidths: []int{4}, Runtime: "reference",
		Server: "unix:/run/orchard.sock"}
	return newTestModel(t, testFake(t, FakeOptions{Info: info}), 140, 30, Options{})
}

// statusLine is the status bar as text: the last line with the context
// (the header has it too).
func statusLine(m *Model) string {
	s := ""
	for _, l := range strings.Split(plain(m), "\n") {
		if strings.Contains(l, "ctx ") {
			s = l
		}
	}
	return s
}

// TestAttachedShowsTheLine: the status bar shows an API request at work
// (endpoint, tokens, speed, what waits), and a message sent meanwhile
// says it is queued, with its place.
func TestAttachedShowsTheLine(t *testing.T) {
	m := attachedModel(t)
	// Attaching says how much context the server's conversation fills.
	send(m, engine.Connection{Addr: "unix:/run/orchard.sock", ContextUsed: 1234})
	if s := statusLine(m); !strings.Contains(s, "ctx 1,234/2,048") {
		t.Fatalf("context on attaching: %q", s)
	}
	send(m, engine.Line{Busy: "api", Endpoint: "/v1/chat/completions", Client: "127.0.0.1", Generated: 42, TokPerS: 30.5, Waiting: 1})
	s := statusLine(m)
	for _, want := range []string{"◆ busy: API · /v1/chat/completions", "1 queued", "42 tok · 30.5 tok/s", "from 127.0.0.1"} {
		if !strings.Contains(s, want) {
			t.Errorf("status %q lacks %q", s, want)
		}
	}
	typeText(m, "are you there?")
	m.Update(press("enter"))
	send(m, engine.Line{Busy: "api", Endpoint: "/v1/chat/completions", Client: "127.0.0.1", Generated: 50, TokPerS: 30, Waiting: 2, Place: 2})
	if got := m.toast.last; !strings.Contains(got, "Your message waits its turn: 2nd in line, after an API request (/v1/chat/completions from 127.0.0.1)") {
		t.Errorf("toast %q", got)
	}
	if s := statusLine(m); !strings.Contains(s, "⧗ queued · 2nd in line") || !strings.Contains(s, "busy: API · /v1/chat/completions") {
		t.Errorf("status while queued %q", s)
	}
	// Its turn comes: the chat's own figures again.
	send(m, engine.Line{Busy: "chat", Waiting: 1}, engine.Started{Turn: 0, PromptTokens: 20})
	if s := statusLine(m); !strings.Contains(s, "◐ prefill") || !strings.Contains(s, "1 queued") || strings.Contains(s, "busy: API") {
		t.Errorf("status while the chat's turn runs %q", s)
	}
	send(m, engine.Finished{Reply: "Yes.", Metrics: engine.TurnMetrics{ContextUsed: 30, ContextLimit: 2048}}, engine.Line{})
	// Sent right after a reply, a message waits a moment for that turn
	// to leave the line: nothing to say.
	m.toast.last = ""
	typeText(m, "and then?")
	m.Update(press("enter"))
	send(m, engine.Line{Busy: "chat", Waiting: 1, Place: 1})
	if s := statusLine(m); m.toast.last != "" || strings.Contains(s, "queued") {
		t.Errorf("behind the chat's own turn: toast %q, status %q", m.toast.last, s)
	}
}

// TestAttachedReconnects: the server goes away mid-reply: the screen
// says so and keeps the conversation (the reply cut short), then attaches
// again and shows the server's conversation and context.
func TestAttachedReconnects(t *testing.T) {
	m := attachedModel(t)
	send(m, engine.Connection{Addr: "unix:/run/orchard.sock"})
	typeText(m, "tell me about orchards")
	m.Update(press("enter"))
	send(m, engine.Started{Turn: 0, PromptTokens: 12}, &engine.Delta{Text: "Apple trees grow", Live: engine.Live{Generated: 3, ContextUsed: 15, ContextLimit: 2048}})
	send(m, engine.Connection{Addr: "unix:/run/orchard.sock", Down: true, Err: errors.New("it closed the connection"), Retry: 250 * time.Millisecond})
	screen := plain(m)
	for _, want := range []string{"⚠ server went away · reconnecting…", "tell me about orchards", "Apple trees grow", "interrupted"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen while away lacks %q:\n%s", want, screen)
		}
	}
	if !strings.Contains(m.toast.last, "The server at unix:/run/orchard.sock went away (it closed the connection); reconnecting") {
		t.Errorf("toast %q", m.toast.last)
	}
	if m.replying() {
		t.Error("still waiting for a reply from a server that went away")
	}
	// Later attempts say nothing more.
	m.toast.last = ""
	send(m, engine.Connection{Addr: "unix:/run/orchard.sock", Down: true, Err: errors.New("connection refused"), Retry: time.Second})
	if m.toast.last != "" {
		t.Errorf("a second toast %q", m.toast.last)
	}

	// Back: the server's conversation (it finished the reply) and context.
	msgs := []engine.Message{{Role: "user", Content: "tell me about orchards"}, {Role: "model", Content: "Apple trees grow in rows."}}
	send(m, engine.Connection{Addr: "unix:/run/orchard.sock", Reconnected: true, ContextUsed: 1500},
		engine.Cleared{Messages: msgs, ContextUsed: 1500, Settings: engine.DefaultSettings()})
	screen = plain(m)
	for _, want := range []string{"ctx 1,500/2,048", "Apple trees grow in rows.", "○ ready"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen after attaching again lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "reconnecting") || !strings.Contains(m.toast.last, "Reconnected to unix:/run/orchard.sock.") {
		t.Errorf("toast %q, screen:\n%s", m.toast.last, screen)
	}

	// A server that will not come back: the screen says so and stays.
	send(m, engine.Connection{Addr: "unix:/run/orchard.sock", Down: true, Err: errors.New("it closed the connection"), Retry: time.Second},
		engine.Connection{Addr: "unix:/run/orchard.sock", Down: true, Err: errors.New("the server now serves another model"), Retry: 0})
	if s := statusLine(m); !strings.Contains(s, "✕ disconnected") {
		t.Errorf("status after giving up %q", s)
	}
	if !strings.Contains(m.toast.last, "cannot be attached to again: the server now serves another model") {
		t.Errorf("toast %q", m.toast.last)
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCancelInLine: a message cancelled while it waits in line (behind an
// API request) never started: the screen shows the conversation as it is
// — no reply, not the message — and the message goes back into the input
// with its files, as after a refused send. A regenerate cancelled so
// leaves the conversation as it was, an edit goes back to being edited,
// and another screen's message cancelled in line changes nothing here.
func TestCancelInLine(t *testing.T) {
	pic := filepath.Join(t.TempDir(), "pear.png")
	writeTestPNG(t, pic)
	m := attachedModel(t)
	prior := []engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: "a", Metrics: &engine.TurnMetrics{GeneratedTokens: 1, FinishReason: "eos"}}}
	unstarted := engine.Cancelled{Metrics: engine.TurnMetrics{FinishReason: "cancelled"}, Unstarted: true}
	shows := func(what string) {
		t.Helper()
		if n := len(m.conv.msgs); n != 2 || m.conv.msgs[1].text != "a" || m.conv.msgs[1].cancelled || m.replying() {
			t.Fatalf("%s: %d messages on screen, replying %v:\n%s", what, n, m.replying(), plain(m))
		}
		if strings.Contains(plain(m), "partial reply is kept") {
			t.Fatalf("%s: told of a partial reply:\n%s", what, plain(m))
		}
	}
	send(m, engine.Cleared{Messages: prior})

	m.attached = []engine.MediaFile{{Kind: engine.MediaImage, Path: pic}}
	typeText(m, "are you there?")
	m.Update(press("enter"))
	send(m, engine.Line{Busy: "api", Endpoint: "/v1/chat/completions", Waiting: 1, Place: 1})
	m.Update(press("esc"))
	send(m, unstarted)
	shows("a message")
	if m.input.Value() != "are you there?" || len(m.attached) != 1 || m.attached[0].Path != pic {
		t.Fatalf("input %q, files %+v", m.input.Value(), m.attached)
	}
	if !strings.Contains(m.toast.last, "before it started") || !strings.Contains(m.toast.last, "pear.png") {
		t.Errorf("toast %q", m.toast.last)
	}

	m.input.Reset()
	m.attached = nil
	m.Update(press("ctrl+g"))
	m.Update(press("esc"))
	send(m, unstarted)
	shows("a regenerate")
	if m.input.Value() != "" {
		t.Errorf("a regenerate put %q in the input", m.input.Value())
	}

	typeText(m, "/edit a better q")
	m.Update(press("enter"))
	m.Update(press("esc"))
	send(m, unstarted)
	shows("an edit")
	if m.input.Value() != "a better q" || !m.input.editing {
		t.Errorf("after an edit cancelled in line: input %q, editing %v", m.input.Value(), m.input.editing)
	}

	m.stopEditing()
	m.input.Reset()
	send(m, unstarted) // another screen's
	shows("another screen's message")
}
