package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/tui"
)

var _ tui.Engine = (*Client)(nil)

// until reads a client's events until match. The reports of the line
// and the connection, and the server's autosaves, are left out of what
// it returns, unless matched: they come between the chat's events at any
// time.
func until(t *testing.T, c *Client, match func(engine.Event) bool) []engine.Event {
	t.Helper()
	var evs []engine.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("events closed; got %#v", evs)
			}
			if match(ev) {
				return append(evs, ev)
			}
			switch ev := ev.(type) {
			case engine.Line, engine.Connection:
				continue
			case engine.Checkpoints:
				if ev.Op == "autosave" {
					continue
				}
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("timed out; got %#v", evs)
		}
	}
}

func turnEnd(ev engine.Event) bool {
	switch e := ev.(type) {
	case engine.Finished, engine.Cancelled:
		return true
	case engine.Failed:
		return e.Op == "send"
	}
	return false
}

func textOf(evs []engine.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if d, ok := ev.(*engine.Delta); ok {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

// TestAttach: chat screens run over the server through the client: a
// turn streams to every screen, a screen that detaches mid-reply finds
// it complete when it comes back, and the replies are the engine's own.
func TestAttach(t *testing.T) {
	ts := startServer(t, serverOpts{delay: 15 * time.Millisecond, key: "k"})
	set := engine.DefaultSettings()
	set.MaxTokens = 16
	want := engineReply(t, set, "hello", "tell me more")
	ctx := context.Background()

	a, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Info().Server == "" || a.Info().Name != ts.info.Name {
		t.Fatalf("info %+v", a.Info())
	}
	a.SetSettings(set)
	until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })
	if a.Settings().MaxTokens != 16 {
		t.Fatalf("settings mirror %+v", a.Settings())
	}
	a.Send("hello")
	evs := until(t, a, turnEnd)
	if _, ok := evs[0].(engine.Started); !ok {
		t.Fatalf("first event %#v", evs[0])
	}
	if f, ok := evs[len(evs)-1].(engine.Finished); !ok || f.Reply != want[0] || textOf(evs) != want[0] {
		t.Fatalf("reply %#v, engine alone %q", evs[len(evs)-1], want[0])
	}
	if m := a.Messages(); len(m) != 2 || m[1].Content != want[0] {
		t.Fatalf("messages %+v", m)
	}

	// A second screen, over TCP with the key, sees the conversation; what
	// it sends streams to the first too, with the message shown.
	b, err := Connect(ctx, strings.TrimPrefix(ts.url, "http://"), "k")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(b.Messages(), a.Messages(), func(x, y engine.Message) bool { return x.Role == y.Role && x.Content == y.Content }) {
		t.Fatalf("second screen messages %+v", b.Messages())
	}
	if _, err := Connect(ctx, strings.TrimPrefix(ts.url, "http://"), "wrong"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("attach with a wrong key: %v", err)
	}
	b.Send("tell me more")
	evsA := until(t, a, func(ev engine.Event) bool { _, ok := ev.(*engine.Delta); return ok })
	cl, ok := evsA[0].(engine.Cleared)
	if !ok || len(cl.Messages) != 3 || cl.Messages[2].Content != "tell me more" {
		t.Fatalf("the other screen's message: %#v", evsA)
	}
	// One types at a time.
	// One types at a time: the refusal comes back to the caller.
	if err := a.Send("me too"); err == nil || !strings.Contains(err.Error(), "already being generated") {
		t.Fatalf("busy: %v", err)
	}
	// b detaches mid-reply; the reply goes on.
	b.Close()
	time.Sleep(60 * time.Millisecond)
	c, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	evsC := until(t, c, turnEnd)
	if _, ok := evsC[0].(engine.Started); !ok {
		t.Fatalf("re-attached: first event %#v", evsC[0])
	}
	if d, ok := evsC[1].(*engine.Delta); !ok || d.Text == "" {
		t.Fatalf("re-attached: no catch-up delta: %#v", evsC[:2])
	}
	if got := textOf(evsC); got != want[1] {
		t.Fatalf("re-attached screen saw %q, engine alone %q", got, want[1])
	}
	if m := c.Messages(); len(m) != 4 || m[3].Content != want[1] {
		t.Fatalf("messages after the reply: %+v", m)
	}
	until(t, a, turnEnd)

	// Checkpoints through the client.
	c.SaveCheckpoint("a")
	evs = until(t, c, func(ev engine.Event) bool { cp, ok := ev.(engine.Checkpoints); return ok && cp.Op == "save" })
	cp := evs[len(evs)-1].(engine.Checkpoints)
	// The list holds "a" and the server's autosave of the turns.
	if i := slices.IndexFunc(cp.List, func(c engine.CheckpointInfo) bool { return c.Name == "a" }); cp.Op != "save" || len(cp.List) != 2 || i < 0 || !cp.List[i].Compatible {
		t.Fatalf("save: %#v", cp)
	}
	c.LoadCheckpoint("nope")
	evs = until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.Failed); return ok })
	if e := evs[len(evs)-1].(engine.Failed); e.Op != "load" {
		t.Fatalf("load of a missing checkpoint: %#v", e)
	}

	// Cancel stops the chat's reply.
	c.SetSettings(engine.DefaultSettings())
	c.Send("a long one")
	until(t, c, func(ev engine.Event) bool { _, ok := ev.(*engine.Delta); return ok })
	c.Cancel()
	evs = until(t, c, turnEnd)
	if _, ok := evs[len(evs)-1].(engine.Cancelled); !ok {
		t.Fatalf("cancel: %#v", evs[len(evs)-1])
	}
	c.Clear()
	until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.Cleared); return ok })
	if len(c.Messages()) != 0 {
		t.Fatalf("messages after clear: %+v", c.Messages())
	}
}

// TestAttachRefused: nothing listening, a bad address.
func TestAttachRefused(t *testing.T) {
	for _, addr := range []string{"unix:/nonexistent/orchard.sock", "127.0.0.1:1", "https://example.com", "nonsense"} {
		if _, err := Connect(context.Background(), addr, ""); err == nil {
			t.Errorf("attach %q succeeded", addr)
		}
	}
}

// TestShutdown: a reply in flight finishes, new requests are refused,
// the chat's conversation is autosaved, attached screens see the end.
func TestShutdown(t *testing.T) {
	var records []engine.TurnMetrics
	ts := startServer(t, serverOpts{delay: 5 * time.Millisecond, metrics: func(m engine.TurnMetrics) error {
		records = append(records, m)
		return nil
	}})
	a, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	set := engine.DefaultSettings()
	set.MaxTokens = 6
	a.SetSettings(set)
	a.Send("remember me")
	until(t, a, turnEnd)

	resp, rd := openStream(t, ts, "finish this", 30)
	contentChunks(t, rd, 1)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- ts.Shutdown(ctx)
	}()
	for !ts.closing.Load() {
		time.Sleep(time.Millisecond)
	}
	// The reply in flight ends normally.
	var tail strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := rd.Read(buf)
		tail.Write(buf[:n])
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	if !strings.Contains(tail.String(), `"finish_reason":"`) || !strings.HasSuffix(tail.String(), "data: [DONE]\n\n") {
		t.Fatalf("the reply in flight was cut: %q", tail.String())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ts.closed = true
	ts.eng.Close()
	if _, err := ts.store.Load("_autosave", testbundle.Tiny(t, "r1").Identity); err != nil {
		t.Fatalf("no autosave: %v", err)
	}
	// The attached screen says the server went away, and goes on trying.
	until(t, a, func(ev engine.Event) bool { c, ok := ev.(engine.Connection); return ok && c.Down && c.Retry > 0 })
	a.Close()
	for range a.Events() {
	}
	// One metrics record per request: the chat turn and the API request.
	if len(records) != 2 {
		t.Fatalf("%d metrics records, want 2", len(records))
	}
	if _, err := Probe(context.Background(), "unix:"+ts.sock, ""); err == nil {
		t.Fatal("the server still answers after shutdown")
	}
}
