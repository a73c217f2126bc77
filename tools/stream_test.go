package tools

import (
	"reflect"
	"strings"
	"testing"
)

var streamReplies = []string{
	"",
	"plain text, no calls < and <| and <|tool and <|tool_ but no marker",
	"I'll check.\n" + callCases[0].text + callCases[5].text + ResponseOpen,
	callCases[9].text + "\nThen: " + callCases[12].text,
	"text " + CallOpen + "call:f{a:1" + CallClose + " more",       // malformed, closed
	"text " + CallOpen + `call:f{a:<|"|>unclosed` + " to the end", // malformed, open
	"text " + CallOpen + `call:f{a:1}`,                            // the reply stopped before the closer
	"ends with a partial <|tool_c",
	"ends with a partial <|tool_respo",
	"<tool_call|> stray closer, <|tool> declaration opener" + CallOpen + "call:g{}" + CallClose + CallClose,
	ResponseOpen + ResponseOpen,
}

// collect feeds a reply to a Stream in the given pieces.
func collect(pieces []string) []Event {
	var s Stream
	var ev []Event
	for _, p := range pieces {
		ev = s.Feed(p, ev)
	}
	return s.End(ev)
}

func sameEvents(t *testing.T, label string, got, want []Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events %v, want %d %v", label, len(got), got, len(want), want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Text != w.Text || !reflect.DeepEqual(g.Call, w.Call) || (g.Err == nil) != (w.Err == nil) {
			t.Fatalf("%s: event %d = %+v, want %+v", label, i, g, w)
		}
	}
}

// TestStreamAnySplit: whatever pieces a reply arrives in (every cut into
// two, and byte by byte), the Stream finds what Parse finds, and the
// events' text is the whole reply: nothing lost, nothing added.
func TestStreamAnySplit(t *testing.T) {
	for _, reply := range streamReplies {
		want := Parse(reply)
		var all strings.Builder
		for _, e := range want {
			all.WriteString(e.Text)
		}
		if all.String() != reply {
			t.Fatalf("Parse(%q) loses text: %q", reply, all.String())
		}
		for cut := 0; cut <= len(reply); cut++ {
			sameEvents(t, "cut", settled(collect([]string{reply[:cut], reply[cut:]})), want)
		}
		bytes := make([]string, len(reply))
		for i := range reply {
			bytes[i] = reply[i : i+1]
		}
		ev := collect(bytes)
		sameEvents(t, "byte by byte", settled(ev), want)
		// Every call is announced before it ends.
		open := false
		for _, e := range ev {
			switch e.Kind {
			case EventCallStart:
				open = true
			case EventCall, EventMalformed:
				if !open {
					t.Errorf("%q: %v came without EventCallStart", reply, e.Kind)
				}
				open = false
			}
		}
	}
}

// TestStreamEvents: what a front end sees for one reply, token by token.
func TestStreamEvents(t *testing.T) {
	reply := []string{"Checking", " the weather.", "\n<", "|tool_call>", "call:get_weather{city:", Quote, "Paris", Quote, "}", CallClose, ResponseOpen}
	ev := collect(reply)
	kinds := make([]EventKind, len(ev))
	for i, e := range ev {
		kinds[i] = e.Kind
	}
	want := []EventKind{EventText, EventText, EventText, EventCallStart, EventCall, EventResponseWanted}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds = %v, want %v (%+v)", kinds, want, ev)
	}
	if ev[2].Text != "\n" {
		t.Errorf("the text before the marker = %q, want the newline only", ev[2].Text)
	}
	if !reflect.DeepEqual(ev[4].Call, callCases[0].call) {
		t.Errorf("call = %+v", ev[4].Call)
	}
}

// TestStreamCallTooLong: a call that never closes is given up at
// MaxCallBytes and reported; what follows is text again.
func TestStreamCallTooLong(t *testing.T) {
	var s Stream
	var ev []Event
	ev = s.Feed(CallOpen+"call:f{a:", ev)
	chunk := strings.Repeat("1", 64<<10)
	for len(ev) < 2 {
		ev = s.Feed(chunk, ev)
	}
	bad := ev[1]
	if bad.Kind != EventMalformed || bad.Err == nil || !strings.Contains(bad.Err.Error(), "longer than") || len(bad.Text) <= MaxCallBytes {
		t.Fatalf("event = %v %v", bad.Kind, bad.Err)
	}
	ev = s.End(s.Feed("after", ev[:0]))
	if len(ev) != 1 || ev[0].Kind != EventText || ev[0].Text != "after" {
		t.Errorf("after the long call: %+v", ev)
	}
}

// TestStreamAllocatesNothingOutsideCalls: feeding a reply's tokens costs
// no allocation while no call is open (the engine's per-token path).
func TestStreamAllocatesNothingOutsideCalls(t *testing.T) {
	tokens := []string{"The", " answer", " is", " <", "b>42</b>", ".", "\n", "Done", " <|", "turn"}
	var s Stream
	ev := make([]Event, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		for _, tok := range tokens {
			ev = s.Feed(tok, ev[:0])
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per reply outside calls, want 0", allocs)
	}
}

func BenchmarkStreamText(b *testing.B) {
	tokens := strings.Fields("The quick brown fox jumps over the lazy dog and then < writes some <b>markup</b> too")
	var s Stream
	ev := make([]Event, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		for _, tok := range tokens {
			ev = s.Feed(tok, ev[:0])
		}
	}
}
