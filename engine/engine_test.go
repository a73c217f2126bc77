package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// collect reads events until one of the wanted kinds arrives.
func collect(t *testing.T, e *Engine, until func(Event) bool) []Event {
	t.Helper()
	var evs []Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-e.Events():
			if !ok {
				t.Fatal("events closed early")
			}
			evs = append(evs, ev)
			if until(ev) {
				return evs
			}
		case <-timeout:
			t.Fatalf("no final event; got %d events", len(evs))
		}
	}
}

func isEnd(ev Event) bool {
	switch ev.(type) {
	case Finished, Cancelled, Failed:
		return true
	}
	return false
}

// TestEngineDeliversInOrder: a slow consumer gets coalesced deltas whose
// text and tokens add up to the reply, after Started and before Finished.
func TestEngineDeliversInOrder(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{MaxTokens: 30})
	s.stops = nil
	e := Start(s, ModelInfo{Name: "t"})
	defer e.Close()
	e.Send("Hello.")
	// Read nothing until the turn is over (the engine updates the
	// conversation it reports before queueing Finished): every delta
	// piles up in the queue and must come out merged.
	for deadline := time.Now().Add(60 * time.Second); len(e.Messages()) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the turn did not finish")
		}
	}
	evs := collect(t, e, isEnd)
	if _, ok := evs[0].(Started); !ok {
		t.Fatalf("first event %T", evs[0])
	}
	f, ok := evs[len(evs)-1].(Finished)
	if !ok {
		t.Fatalf("last event %T", evs[len(evs)-1])
	}
	var text string
	var toks, deltas int
	for _, ev := range evs {
		if d, ok := ev.(*Delta); ok {
			text += d.Text
			toks += len(d.Tokens)
			deltas++
			if len(d.FromDraft) != len(d.Tokens) {
				t.Fatal("FromDraft not parallel to Tokens")
			}
		}
	}
	if toks != 30 || !strings.HasPrefix(f.Reply, text) || deltas != 1 {
		t.Fatalf("%d tokens in %d deltas (want 30 in one merged delta)", toks, deltas)
	}
	if got := e.Messages(); len(got) != 2 || got[1].Content != f.Reply {
		t.Fatalf("messages %+v", got)
	}
}

// TestEngineCancelBeforeStart: a cancel issued before the queued turn
// starts cancels it.
func TestEngineCancelBeforeStart(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "v2"), Settings{MaxTokens: 50})
	s.stops = nil
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.SetSettings(Settings{MaxTokens: 50, DraftLen: 40}) // refused: keeps the loop busy briefly
	e.Send("one")
	e.Cancel()
	evs := collect(t, e, func(ev Event) bool { _, ok := ev.(Cancelled); return ok })
	var failed bool
	for _, ev := range evs {
		if f, ok := ev.(Failed); ok && f.Op == "settings" {
			failed = true
		}
	}
	if !failed {
		t.Fatal("the refused setting was not reported")
	}
	e.Send("two")
	if _, ok := collect(t, e, isEnd)[0].(Started); !ok {
		t.Fatal("the next turn did not start")
	}
}

// TestCancelledUnstarted: a turn cancelled while it waits in line says
// it never started (the front end gives the message back), and the
// conversation holds nothing of it.
func TestCancelledUnstarted(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{MaxTokens: 4})
	e := Start(s, ModelInfo{})
	defer e.Close()
	hold := make(chan struct{})
	e.do("hold", func() { <-hold }) // the loop is busy: the send waits
	for _, turn := range []func(){func() { e.Send("one") }, func() { e.Regenerate() }, func() { e.Edit("two") }} {
		turn()
		e.Cancel()
	}
	close(hold)
	for range 3 {
		evs := collect(t, e, isEnd)
		c, ok := evs[len(evs)-1].(Cancelled)
		if !ok || !c.Unstarted || c.Partial != "" || len(evs) != 1 {
			t.Fatalf("a turn cancelled in line: %#v", evs)
		}
	}
	if msgs := e.Messages(); len(msgs) != 0 {
		t.Fatalf("the conversation after cancels in line: %+v", msgs)
	}
	// A turn stopped once started did start.
	e.Send("three")
	collect(t, e, func(ev Event) bool { _, ok := ev.(*Delta); return ok })
	e.Cancel()
	evs := collect(t, e, isEnd)
	if c, ok := evs[len(evs)-1].(Cancelled); ok && c.Unstarted {
		t.Fatalf("a started turn said it never started: %#v", c)
	}
}

func TestEngineClose(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "stateful3"), Settings{})
	e := Start(s, ModelInfo{})
	e.Send("long")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for range e.Events() {
	}
	e.Send("after") // must not panic
	e.Close()
}
