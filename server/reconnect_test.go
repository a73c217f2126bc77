package server

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/syncbuf"
	"github.com/orchard-llm/orchard/tui"
)

func isDown(ev engine.Event) bool {
	c, ok := ev.(engine.Connection)
	return ok && c.Down
}

func isBack(ev engine.Event) bool {
	c, ok := ev.(engine.Connection)
	return ok && c.Reconnected
}

// TestReconnect: the server is shut down and started again on the same
// socket and port while two screens are attached, one on each. They say
// the server went away, keep the conversation, refuse commands with a
// sentence, attach again by themselves, and then show the server's
// conversation and the context it fills.
func TestReconnect(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverOpts{dir: dir})
	addr := strings.TrimPrefix(ts.url, "http://")
	ctx := context.Background()
	a, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Connect(ctx, addr, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	set := engine.DefaultSettings()
	set.MaxTokens = 8
	a.SetSettings(set)
	until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })
	a.Send("hello")
	until(t, a, turnEnd)
	until(t, b, turnEnd)

	ts.stop(t) // autosaves the conversation
	for _, c := range []*Client{a, b} {
		down := until(t, c, isDown)
		if d := down[len(down)-1].(engine.Connection); d.Err == nil || d.Retry <= 0 || d.Addr != c.addr {
			t.Fatalf("%s: lost: %+v", c.addr, d)
		}
		// Commands are refused with a sentence while it is away.
		if err := c.Clear(); err == nil || !strings.Contains(err.Error(), "not connected") || !strings.Contains(err.Error(), c.addr) {
			t.Fatalf("%s: a command while away: %v", c.addr, err)
		}
		if m := c.Messages(); len(m) != 2 {
			t.Fatalf("%s: the conversation while away: %+v", c.addr, m)
		}
	}

	ts2 := startServer(t, serverOpts{dir: dir, addr: addr, resume: true})
	ts2.hubMu.Lock()
	want := ts2.chatCtx
	ts2.hubMu.Unlock()
	if want == 0 {
		t.Fatal("the restarted server's conversation fills no context")
	}
	for _, c := range []*Client{a, b} {
		back := until(t, c, isBack)
		if got := back[len(back)-1].(engine.Connection).ContextUsed; got != want {
			t.Errorf("%s: context after attaching again %d, the server's %d", c.addr, got, want)
		}
		evs := until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.Cleared); return ok })
		cl := evs[len(evs)-1].(engine.Cleared)
		if len(cl.Messages) != 2 || cl.Messages[0].Content != "hello" || cl.ContextUsed != want {
			t.Errorf("%s: the server's conversation after attaching again: %+v", c.addr, cl)
		}
	}
	// Commands go through again.
	b.Send("and then?")
	evs := until(t, b, turnEnd)
	if _, ok := evs[len(evs)-1].(engine.Finished); !ok {
		t.Fatalf("a turn after attaching again: %#v", evs[len(evs)-1])
	}
	until(t, a, turnEnd)
	if m := a.Messages(); len(m) != 4 {
		t.Fatalf("the other screen's conversation: %+v", m)
	}
}

// TestReconnectGivesUp: a server restarted with another model, or that
// now wants a key, will not be attached to by waiting: the screen is
// told why, once, and commands say so.
func TestReconnectGivesUp(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverOpts{dir: dir})
	addr := strings.TrimPrefix(ts.url, "http://")
	a, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Connect(context.Background(), addr, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ts.stop(t)
	until(t, a, isDown)
	until(t, b, isDown)
	startServer(t, serverOpts{dir: dir, addr: addr, family: "v2", key: "k2"})
	for c, want := range map[*Client]string{a: "another model", b: "401"} {
		evs := until(t, c, func(ev engine.Event) bool { d, ok := ev.(engine.Connection); return ok && d.Down && d.Retry == 0 })
		d := evs[len(evs)-1].(engine.Connection)
		var perm permanentError
		if !errors.As(d.Err, &perm) || !strings.Contains(d.Err.Error(), want) {
			t.Errorf("%s: gave up with %v, want %q", c.addr, d.Err, want)
		}
		if err := c.Cancel(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: a command after giving up: %v", c.addr, err)
		}
	}
}

// TestRetryWait: the waits double from 250 ms to at most 5 s.
func TestRetryWait(t *testing.T) {
	var got []time.Duration
	for n := range 7 {
		got = append(got, retryWait(n))
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
}

// screenOutput is what a chat screen wrote, safe to read while it runs.
type screenOutput struct{ syncbuf.Buffer }

// since is what was written after from.
func (o *screenOutput) since(from int) string { return o.String()[from:] }

// waitFor waits until everything wanted was written since from; it
// returns where the output ends then.
func (o *screenOutput) waitFor(t *testing.T, from int, want ...string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := o.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s[from:], w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return len(s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q; it wrote:\n%q", missing, s[from:])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runScreen runs the chat screen over c, 120×30 without colours, until
// the test ends; it returns where to write its keys and what it writes.
func runScreen(t *testing.T, c *Client) (io.Writer, *screenOutput) {
	t.Helper()
	in, keys := io.Pipe()
	out := &screenOutput{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tui.Run(ctx, c, tui.Options{Input: in, Output: out, Width: 120, Height: 30, NoColor: true, AutosaveEvery: -1,
			Env: []string{"HOME=" + t.TempDir(), "TERM=xterm-256color"}, NoNativeClipboard: true, NoMouse: true})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the screen did not end")
		}
		keys.Close()
	})
	return keys, out
}

// TestAttachedScreenReconnects runs the chat screen itself over a client
// while its server is shut down and started again on the same socket:
// the screen says the server went away, refuses a command with a
// sentence, attaches again by itself and goes on chatting.
func TestAttachedScreenReconnects(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverOpts{dir: dir})
	c, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	set := engine.DefaultSettings()
	set.MaxTokens = 6
	c.SetSettings(set)
	until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })

	keys, out := runScreen(t, c)
	at := out.waitFor(t, 0, "Type a message")
	io.WriteString(keys, "hello\r")
	at = out.waitFor(t, at, "tokens ·")

	ts.stop(t)
	at = out.waitFor(t, at, "went away", "reconnecting")
	io.WriteString(keys, "/clear\r")
	at = out.waitFor(t, at, "not connected")

	startServer(t, serverOpts{dir: dir, resume: true})
	at = out.waitFor(t, at, "Reconnected to unix:")
	io.WriteString(keys, "more\r")
	out.waitFor(t, at, "tokens ·")
	if m := c.Messages(); len(m) != 4 || m[0].Content != "hello" || m[2].Content != "more" {
		t.Fatalf("the server's conversation: %+v", m)
	}
}
