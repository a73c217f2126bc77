package engine

import (
	"errors"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/tokenizer"
)

// TestCompleteRaw: a raw prompt is fed as its text encodes. The chat
// template's own rendering, sent raw, gives the chat request's prompt ids
// and reply; a raw prompt that extends it is served from the cache; a
// raw prompt keeps the template away (no turn markers are added); a
// prompt that fills the context is refused with the figures.
func TestCompleteRaw(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(10)
	s, _ := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	defer e.Close()

	chat := run(t, e, Request{Messages: []Message{{Role: "user", Content: "apples and pears"}}, Settings: set})
	finished(t, chat)
	rendered, err := s.tmpl.Render(tokenizer.Conversation{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "apples and pears"}}})
	if err != nil {
		t.Fatal(err)
	}
	chatPrompt := s.LastPrompt()

	raw := run(t, e, Request{Raw: true, Messages: []Message{{Role: "user", Content: rendered}}, Settings: set})
	m := finished(t, raw)
	if !equalInts(s.LastPrompt(), chatPrompt) || !equalInts(raw.ids, chat.ids) {
		t.Fatalf("raw rendering: prompt %v reply %v; chat: prompt %v reply %v", s.LastPrompt(), raw.ids, chatPrompt, chat.ids)
	}
	if m.PromptTokens != len(chatPrompt) {
		t.Fatalf("prompt tokens %d, want %d", m.PromptTokens, len(chatPrompt))
	}

	more := run(t, e, Request{Raw: true, Messages: []Message{{Role: "user", Content: rendered + raw.text + " and plums"}}, Settings: set})
	if m := finished(t, more); m.ReusedTokens < len(chatPrompt) {
		t.Fatalf("an extended raw prompt reused %d tokens, want at least %d", m.ReusedTokens, len(chatPrompt))
	}

	plain := run(t, e, Request{Raw: true, Messages: []Message{{Role: "user", Content: "once upon a time"}}, Settings: set})
	finished(t, plain)
	bos, _ := s.tok.BOS()
	want := append([]int{bos}, s.tok.Encode("once upon a time")...)
	if !equalInts(s.LastPrompt(), want) {
		t.Fatalf("raw prompt fed %v, want %v (BOS and the text, no template)", s.LastPrompt(), want)
	}

	long := make([]byte, 0, 4*s.caps.Context)
	for range s.caps.Context {
		long = append(long, " a"...)
	}
	r := run(t, e, Request{Raw: true, Messages: []Message{{Role: "user", Content: string(long)}}, Settings: set})
	f, ok := r.end.(Failed)
	var cf *ContextFullError
	var re *RequestError
	if !ok || !errors.As(f.Err, &cf) || !cf.Raw || cf.Context != s.caps.Context || !errors.As(f.Err, &re) || !errors.Is(f.Err, chain.ErrContextFull) {
		t.Fatalf("an over-long raw prompt: %#v", r.end)
	}

	bad := run(t, e, Request{Raw: true, Messages: []Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}}, Settings: set})
	if f, ok := bad.end.(Failed); !ok || !errors.As(f.Err, &re) {
		t.Fatalf("a raw request of two messages: %#v", bad.end)
	}
}
