package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestCompletePrefill: a request that ends with the model's message begun
// gets the reply that continues it. When the begun text encodes to the
// first k ids of an uninterrupted reply, the continuation is that reply's
// ids from k on, byte for byte, and the conversation the session keeps
// holds the whole reply; the user's turn comes from the cache.
func TestCompletePrefill(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(16)
	s, _ := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	defer e.Close()
	user := Message{Role: "user", Content: "apples and pears"}
	full := run(t, e, Request{Messages: []Message{user}, Settings: set})
	finished(t, full)
	base := s.LastPrompt()
	if len(full.ids) < 4 {
		t.Fatalf("reply of %d tokens: too short to cut", len(full.ids))
	}
	// The longest cut whose text the template encodes back to the same ids.
	k, begun := 0, ""
	for n := len(full.ids) - 2; n >= 1; n-- {
		text := s.tok.Decode(full.ids[:n], false)
		c := s.conversation([]Message{user, {Role: "model", Content: text}})
		c.System, c.Continue = set.System, true
		ids, err := s.tmpl.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(ids, append(slices.Clone(base), full.ids[:n]...)) {
			k, begun = n, text
			break
		}
	}
	if k == 0 {
		t.Fatalf("no cut of %v re-encodes to its ids", full.ids)
	}
	t.Logf("cut after %d of %d tokens: %q", k, len(full.ids), begun)
	set.MaxTokens = 16 - k
	r := run(t, e, Request{Messages: []Message{user, {Role: "model", Content: begun}}, Settings: set})
	m := finished(t, r)
	if !slices.Equal(r.ids, full.ids[k:]) {
		t.Fatalf("continuation of %q: %v, want %v (the uninterrupted reply from token %d)", begun, r.ids, full.ids[k:], k)
	}
	if m.ReusedTokens < len(base) {
		t.Fatalf("reused %d tokens, want at least the %d of the user's turn", m.ReusedTokens, len(base))
	}
	msgs := s.Messages()
	if n := len(msgs); n != 2 || msgs[1].Role != "model" || msgs[1].Content != begun+r.text {
		t.Fatalf("the session keeps %+v, want the user's message and the whole reply %q", msgs, begun+r.text)
	}
}

// TestCompleteLaterSystem: a system message after the first turn is a
// system turn where it stands.
func TestCompleteLaterSystem(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	s, _ := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	defer e.Close()
	msgs := []Message{{Role: "user", Content: "a"}, {Role: "model", Content: "b"}, {Role: "system", Content: "Answer in French."}, {Role: "user", Content: "c"}}
	finished(t, run(t, e, Request{Messages: msgs, Settings: greedyOff(2)}))
	got := s.tok.Decode(s.LastPrompt(), false)
	if !strings.Contains(got, "<turn|>\n<|turn>system\nAnswer in French.<turn|>\n<|turn>user\nc") {
		t.Fatalf("prompt %q has no system turn before the last user message", got)
	}
	r := run(t, e, Request{Messages: msgs[:3], Settings: greedyOff(2)})
	if _, ok := r.end.(Failed); !ok {
		t.Fatalf("a conversation ending with a system message: %#v, want Failed", r.end)
	}
}
