package server

import "testing"

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
