package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestEventsCarryTheirState: a turn's end carries the conversation it
// leaves (the reply in it; after a cancel the partial one; after a failed
// turn the conversation as it was), so no front end reads a getter after
// an event to learn it.
func TestEventsCarryTheirState(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{MaxTokens: 4})
	e := Start(s, ModelInfo{})
	defer e.Close()

	e.Send("hello")
	evs := collect(t, e, isEnd)
	fin, ok := evs[len(evs)-1].(Finished)
	if !ok || len(fin.Messages) != 2 || fin.Messages[1].Content != fin.Reply || fin.Messages[1].Metrics == nil {
		t.Fatalf("Finished carries %+v", evs[len(evs)-1])
	}

	// A turn that cannot fit fails; the conversation is as it was.
	e.Send(strings.Repeat("too long to fit ", 200))
	evs = collect(t, e, isEnd)
	if f, ok := evs[len(evs)-1].(Failed); !ok || f.Op != OpSend || len(f.Messages) != 2 || f.Messages[1].Content != fin.Reply {
		t.Fatalf("a failed turn carries %+v", evs[len(evs)-1])
	}
	// Other commands' failures change nothing and carry nothing.
	e.SelectVersion(9, 9)
	evs = collect(t, e, isEnd)
	if f, ok := evs[len(evs)-1].(Failed); !ok || f.Op != OpVersion || f.Messages != nil {
		t.Fatalf("a failed command carries %+v", evs[len(evs)-1])
	}

	// A turn cancelled in line carries the conversation too.
	hold := make(chan struct{})
	e.do(OpMark, func() { <-hold })
	e.Send("never")
	e.Cancel()
	close(hold)
	evs = collect(t, e, isEnd)
	if c, ok := evs[len(evs)-1].(Cancelled); !ok || !c.Unstarted || len(c.Messages) != 2 {
		t.Fatalf("a turn cancelled in line carries %+v", evs[len(evs)-1])
	}
}

// TestCommandAcceptance: a command returns its acceptance to its caller;
// one refused (the engine closed) says so at once and reports nothing on
// Events.
func TestCommandAcceptance(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{MaxTokens: 4})
	e := Start(s, ModelInfo{})
	if err := e.ListCheckpoints(); err != nil {
		t.Fatalf("a command to a running engine: %v", err)
	}
	// The accepted command answers with an event (no store here: a
	// Failed); wait for it, so the refusals below are alone after Close.
	collect(t, e, func(ev Event) bool { f, ok := ev.(Failed); return ok && f.Op == OpList })
	e.Close()
	for name, cmd := range map[string]func() error{
		"send":     func() error { return e.Send("hello") },
		"clear":    e.Clear,
		"settings": func() error { return e.SetSettings(DefaultSettings()) },
		"save":     func() error { return e.SaveCheckpoint("x") },
		"resume":   func() error { return e.ResumeHistory("x") },
	} {
		if err := cmd(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	for ev := range e.Events() {
		if f, ok := ev.(Failed); ok {
			t.Errorf("a refused command also reported %+v", f)
		}
	}
}
