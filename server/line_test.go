package server

import (
	"context"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

func lineMatch(match func(engine.Line) bool) func(engine.Event) bool {
	return func(ev engine.Event) bool { l, ok := ev.(engine.Line); return ok && match(l) }
}

func lastLine(evs []engine.Event) engine.Line { return evs[len(evs)-1].(engine.Line) }

// TestLineShowsAPIRequests: an attached screen is told which API request
// generates, its tokens and speed as it streams, and, when its own
// message has to wait, its place in line; a screen attaching meanwhile
// is told at once.
func TestLineShowsAPIRequests(t *testing.T) {
	ts := startServer(t, serverOpts{delay: 10 * time.Millisecond})
	a, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	resp, rd := openStream(t, ts, "write at length", 60)
	defer resp.Body.Close()
	contentChunks(t, rd, 2)
	l := lastLine(until(t, a, lineMatch(func(l engine.Line) bool { return l.Busy == "api" && l.Generated > 0 })))
	if l.Endpoint != "/v1/chat/completions" || l.Client != "127.0.0.1" || l.TokPerS <= 0 || l.Waiting != 0 || l.Place != 0 {
		t.Fatalf("the API request at work: %+v", l)
	}

	b, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if first := lastLine(until(t, b, lineMatch(func(engine.Line) bool { return true }))); first.Busy != "api" || first.Endpoint != "/v1/chat/completions" {
		t.Fatalf("a screen attaching while it runs: %+v", first)
	}

	// A message sent meanwhile waits, first in line, then runs.
	a.Send("my turn")
	l = lastLine(until(t, a, lineMatch(func(l engine.Line) bool { return l.Place > 0 })))
	if l.Place != 1 || l.Waiting != 1 || l.Busy != "api" {
		t.Fatalf("the chat's message in line: %+v", l)
	}
	until(t, a, lineMatch(func(l engine.Line) bool { return l.Busy == "chat" && l.Place == 0 }))
	evs := until(t, a, turnEnd)
	if _, ok := evs[0].(engine.Started); !ok {
		t.Fatalf("the chat's turn: %#v", evs)
	}
	until(t, a, lineMatch(func(l engine.Line) bool { return l == engine.Line{} }))
}

// TestChatPlace: the chat's ticket's place in a fair line, served
// round-robin by client.
func TestChatPlace(t *testing.T) {
	q := newScheduler(10)
	var told []lineState
	q.changed = func(l lineState) { told = append(told, l) }
	run, _ := q.enqueue(holder{client: "z", kind: "api", endpoint: "/api/chat", request: "r1"})
	for _, c := range []string{"x", "x", "x", "y"} {
		if _, err := q.enqueue(holder{client: c, kind: "api"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.enqueue(holder{client: "chat", kind: "chat"}); err != nil {
		t.Fatal(err)
	}
	// Served next: x, y, chat.
	last := told[len(told)-1]
	if last.chatPlace != 3 || last.waiting != 5 || last.running == nil || last.running.request != "r1" || last.running.endpoint != "/api/chat" {
		t.Fatalf("line %+v", last)
	}
	q.release(run) // x runs; then y, chat, x, x
	if last = told[len(told)-1]; last.chatPlace != 2 || last.waiting != 4 || last.running.client != "x" {
		t.Fatalf("line after one was served %+v", last)
	}
	for i := 1; i < len(told); i++ {
		if told[i].seq <= told[i-1].seq {
			t.Fatalf("seq not increasing: %+v", told)
		}
	}
}
