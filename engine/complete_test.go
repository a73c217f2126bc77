package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/tokenizer"
)

// countingChain counts the tokens fed by Prefill, so a test can tell a
// restore from a re-prefill.
type countingChain struct {
	chain.Chain
	prefilled int
}

func (c *countingChain) Prefill(t []int) (int, error) {
	c.prefilled += len(t)
	return c.Chain.Prefill(t)
}

func countingSession(t testing.TB, b *bundle.Bundle, set Settings) (*Session, *countingChain) {
	t.Helper()
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingChain{Chain: chaintest.Open(t, b, chain.Options{})}
	s, err := NewSession(b, cc, tok, set)
	if err != nil {
		t.Fatal(err)
	}
	s.Memory = nil
	return s, cc
}

type result struct {
	text string
	ids  []int
	end  Event
	evs  []Event
}

// run completes req synchronously.
func run(t testing.TB, e *Engine, req Request) result {
	t.Helper()
	ch := make(chan Event, 4096)
	e.Complete(req, func(ev Event) { ch <- ev })
	var r result
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev := <-ch:
			r.evs = append(r.evs, ev)
			switch x := ev.(type) {
			case *Delta:
				r.text += x.Text
				r.ids = append(r.ids, x.Tokens...)
			case Finished, Cancelled, Failed:
				r.end = ev
				return r
			}
		case <-timeout:
			t.Fatal("no end event")
		}
	}
}

func finished(t testing.TB, r result) TurnMetrics {
	t.Helper()
	f, ok := r.end.(Finished)
	if !ok {
		t.Fatalf("want Finished, got %#v", r.end)
	}
	return f.Metrics
}

func greedyOff(max int) Settings {
	s := DefaultSettings()
	s.MaxTokens = max
	s.Speculation = SpecModeOff
	return s
}

// TestCompleteEqualsChat: a request and its follow-up give the same ids
// as the same two turns sent in a chat session, and the follow-up serves
// everything but the new message from the cache.
func TestCompleteEqualsChat(t *testing.T) {
	for _, fam := range []string{"r1", "v2"} {
		t.Run(fam, func(t *testing.T) {
			b := testbundle.Tiny(t, fam)
			set := DefaultSettings()
			set.MaxTokens = 12
			ref := newSession(t, b, set)
			want1, _ := reply(t, ref, "apples and pears")
			want2, end2 := reply(t, ref, "and plums")
			wantReused := end2.(Finished).Metrics.ReusedTokens

			s, _ := countingSession(t, b, DefaultSettings())
			e := Start(s, ModelInfo{})
			defer e.Close()
			r1 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "apples and pears"}}, Settings: set})
			finished(t, r1)
			if !equalInts(r1.ids, want1) {
				t.Fatalf("first reply %v, chat %v", r1.ids, want1)
			}
			r2 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "apples and pears"}, {Role: "model", Content: r1.text}, {Role: "user", Content: "and plums"}}, Settings: set})
			m := finished(t, r2)
			if !equalInts(r2.ids, want2) {
				t.Fatalf("follow-up %v, chat %v", r2.ids, want2)
			}
			if m.ReusedTokens != wantReused || m.ReusedTokens == 0 {
				t.Fatalf("follow-up reused %d tokens, chat %d", m.ReusedTokens, wantReused)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConversationsAlternate: two clients alternate; switching back to
// a conversation restores its cache instead of prefilling it again, and
// the reply is token for token what an uninterrupted session gives.
func TestConversationsAlternate(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(10)
	refA := newSession(t, b, set)
	a1, _ := reply(t, refA, "first conversation about apples")
	a2, _ := reply(t, refA, "tell me more")
	refB := newSession(t, b, set)
	b1, _ := reply(t, refB, "second one, on the subject of rivers")
	b2, _ := reply(t, refB, "go on")

	s, cc := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	defer e.Close()
	ra1 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "first conversation about apples"}}, Settings: set})
	rb1 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "second one, on the subject of rivers"}}, Settings: set})
	before := cc.prefilled
	ra2 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "first conversation about apples"}, {Role: "model", Content: ra1.text}, {Role: "user", Content: "tell me more"}}, Settings: set})
	ma2 := finished(t, ra2)
	fedA := cc.prefilled - before
	before = cc.prefilled
	rb2 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "second one, on the subject of rivers"}, {Role: "model", Content: rb1.text}, {Role: "user", Content: "go on"}}, Settings: set})
	mb2 := finished(t, rb2)
	fedB := cc.prefilled - before

	for _, c := range []struct {
		name      string
		got, want []int
	}{{"a1", ra1.ids, a1}, {"b1", rb1.ids, b1}, {"a2", ra2.ids, a2}, {"b2", rb2.ids, b2}} {
		if !equalInts(c.got, c.want) {
			t.Errorf("%s: %v, uninterrupted %v", c.name, c.got, c.want)
		}
	}
	// Only the new turn is prefilled: what the cache did not hold.
	if want := ma2.PromptTokens - ma2.ReusedTokens; fedA != want || ma2.ReusedTokens < ma2.PromptTokens/2 {
		t.Errorf("a2 prefilled %d tokens, reused %d of %d", fedA, ma2.ReusedTokens, ma2.PromptTokens)
	}
	if want := mb2.PromptTokens - mb2.ReusedTokens; fedB != want || mb2.ReusedTokens < mb2.PromptTokens/2 {
		t.Errorf("b2 prefilled %d tokens, reused %d of %d", fedB, mb2.ReusedTokens, mb2.PromptTokens)
	}
	if st := e.ConversationStats(); st.Restores < 2 {
		t.Errorf("restores %d, want ≥ 2 (%+v)", st.Restores, st)
	}
}

// TestCompleteLeavesTheChatAlone: requests run beside the chat's own
// conversation; the chat continues from its cache afterwards as if no
// request had come, and Messages shows the chat's throughout.
func TestCompleteLeavesTheChatAlone(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(8)
	ref := newSession(t, b, set)
	w1, _ := reply(t, ref, "hello there")
	w2, wend := reply(t, ref, "again")

	s, _ := countingSession(t, b, set)
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.Send("hello there")
	evs := collect(t, e, isEnd)
	var got1 []int
	for _, ev := range evs {
		if d, ok := ev.(*Delta); ok {
			got1 = append(got1, d.Tokens...)
		}
	}
	other := run(t, e, Request{Messages: []Message{{Role: "user", Content: "something else entirely, and longer"}}, Settings: set})
	finished(t, other)
	if msgs := e.Messages(); len(msgs) != 2 || msgs[0].Content != "hello there" {
		t.Fatalf("chat messages during a request's conversation: %+v", msgs)
	}
	e.Send("again")
	evs = collect(t, e, isEnd)
	var got2 []int
	for _, ev := range evs {
		if d, ok := ev.(*Delta); ok {
			got2 = append(got2, d.Tokens...)
		}
	}
	fin := evs[len(evs)-1].(Finished)
	if !equalInts(got1, w1) || !equalInts(got2, w2) {
		t.Fatalf("chat replies %v %v, uninterrupted %v %v", got1, got2, w1, w2)
	}
	if fin.Metrics.ReusedTokens != wend.(Finished).Metrics.ReusedTokens {
		t.Fatalf("chat reused %d, uninterrupted %d", fin.Metrics.ReusedTokens, wend.(Finished).Metrics.ReusedTokens)
	}
	if msgs := e.Messages(); len(msgs) != 4 {
		t.Fatalf("chat has %d messages, want 4", len(msgs))
	}
}

// TestCompleteStop: the reply ends before the first stop string, the
// deltas add up to it, the reason is "stop" and Finished names the stop
// string (Anthropic's stop_sequence); a stop string that never
// appears changes nothing.
func TestCompleteStop(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(24)
	s, _ := countingSession(t, b, set)
	e := Start(s, ModelInfo{})
	defer e.Close()
	msgs := []Message{{Role: "user", Content: "count the apples"}}
	full := run(t, e, Request{Messages: msgs, Settings: set})
	finished(t, full)
	if len(full.text) < 8 {
		t.Fatalf("reply too short to test: %q", full.text)
	}
	// A stop string from the middle of the reply, spanning tokens.
	stop := full.text[len(full.text)/2 : len(full.text)/2+3]
	want := full.text[:strings.Index(full.text, stop)]
	for _, tc := range []struct {
		name   string
		stops  []string
		text   string
		reason string
		which  string // the stop string Finished names
	}{
		{"hit", []string{"\x00never", stop}, want, "stop", stop},
		{"miss", []string{"\x00never"}, full.text, finished(t, full).FinishReason, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, e, Request{Messages: msgs, Settings: set, Stop: tc.stops})
			f, ok := r.end.(Finished)
			if !ok {
				t.Fatalf("end %#v", r.end)
			}
			if r.text != tc.text || f.Reply != tc.text || f.Metrics.FinishReason != tc.reason || f.Stop != tc.which {
				t.Fatalf("streamed %q, reply %q (%s, stop %q); want %q (%s, stop %q)", r.text, f.Reply, f.Metrics.FinishReason, f.Stop, tc.text, tc.reason, tc.which)
			}
		})
	}
}

// TestCompleteRefusals: requests the engine cannot serve as given are
// refused with a RequestError before anything runs.
func TestCompleteRefusals(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	s, cc := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	defer e.Close()
	hot := DefaultSettings()
	hot.Sampling.Temperature = 0.8
	long := strings.Repeat("apples and pears ", 400)
	for _, tc := range []struct {
		name string
		req  Request
		is   error
	}{
		{"sampling on argmax", Request{Messages: []Message{{Role: "user", Content: "hi"}}, Settings: hot}, nil},
		{"ends with system", Request{Messages: []Message{{Role: "user", Content: "hi"}, {Role: "system", Content: "yes"}}, Settings: DefaultSettings()}, nil},
		{"unknown role", Request{Messages: []Message{{Role: "tool", Content: "x"}, {Role: "user", Content: "hi"}}, Settings: DefaultSettings()}, nil},
		{"empty", Request{Settings: DefaultSettings()}, nil},
		{"too long", Request{Messages: []Message{{Role: "user", Content: long}}, Settings: DefaultSettings()}, chain.ErrContextFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, e, tc.req)
			f, ok := r.end.(Failed)
			var re *RequestError
			if !ok || !errors.As(f.Err, &re) {
				t.Fatalf("end %#v, want a RequestError", r.end)
			}
			if tc.is != nil && !errors.Is(f.Err, tc.is) {
				t.Fatalf("error %v, want %v", f.Err, tc.is)
			}
		})
	}
	if cc.prefilled != 0 {
		t.Fatalf("refused requests prefilled %d tokens", cc.prefilled)
	}
}

// TestCompleteCancel: a job cancelled before it starts never runs; one
// cancelled while it streams stops within one token.
func TestCompleteCancel(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(0)
	s, cc := countingSession(t, b, set)
	e := Start(s, ModelInfo{})
	defer e.Close()

	block := make(chan struct{})
	e.do("block", func() { <-block })
	ch := make(chan Event, 16)
	job := e.Complete(Request{Messages: []Message{{Role: "user", Content: "never runs"}}, Settings: set}, func(ev Event) { ch <- ev })
	job.Cancel()
	close(block)
	if ev, ok := (<-ch).(Cancelled); !ok || ev.Metrics.FinishReason != "cancelled" || ev.Metrics.GeneratedTokens != 0 {
		t.Fatalf("cancelled before start: %#v", ev)
	}
	if cc.prefilled != 0 {
		t.Fatal("a cancelled job prefilled")
	}

	// The job is cancelled from the sink, on the engine goroutine, right
	// after the fifth token: the engine may not generate more than one
	// more (the check is before each chain call).
	var seen, atCancel int
	jobs := make(chan *Job, 1)
	got := make(chan Event, 1)
	block = make(chan struct{})
	e.do("block", func() { <-block })
	jobs <- e.Complete(Request{Messages: []Message{{Role: "user", Content: "a long reply please"}}, Settings: set}, func(ev Event) {
		switch x := ev.(type) {
		case *Delta:
			seen += len(x.Tokens)
			if seen >= 5 && atCancel == 0 {
				atCancel = seen
				j := <-jobs
				j.Cancel()
			}
		case Finished, Cancelled, Failed:
			got <- ev
		}
	})
	close(block)
	end := <-got
	c, ok := end.(Cancelled)
	if !ok {
		t.Fatalf("end %#v", end)
	}
	if c.Metrics.GeneratedTokens > atCancel+1 {
		t.Fatalf("generated %d tokens after a cancel at %d", c.Metrics.GeneratedTokens, atCancel)
	}
}

// TestCompleteSeed: on a logits bundle the same request with the same
// seed samples the same reply, whatever ran in between.
func TestCompleteSeed(t *testing.T) {
	b := testbundle.Tiny(t, "stateful3-logits")
	set := greedyOff(12)
	set.Sampling = Sampling{Temperature: 1.2, TopP: 0.95, Seed: 42}
	s, _ := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	defer e.Close()
	req := Request{Messages: []Message{{Role: "user", Content: "pick some words"}}, Settings: set}
	r1 := run(t, e, req)
	finished(t, r1)
	run(t, e, Request{Messages: []Message{{Role: "user", Content: "something in between"}}, Settings: set})
	r2 := run(t, e, req)
	if !equalInts(r1.ids, r2.ids) {
		t.Fatalf("same seed, different replies: %v vs %v", r1.ids, r2.ids)
	}
}

// TestConversationBudget: beyond the budget the least recently used
// conversations are dropped.
func TestConversationBudget(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(4)
	s, _ := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.KeepConversations(2, 1<<30)
	for _, text := range []string{"one", "two", "three", "four", "five"} {
		finished(t, run(t, e, Request{Messages: []Message{{Role: "user", Content: text + " conversation"}}, Settings: set}))
	}
	st := e.ConversationStats()
	if st.Kept != 2 || st.Evictions < 2 || st.Bytes <= 0 {
		t.Fatalf("stats %+v, want 2 kept and evictions", st)
	}
}

// TestConversationsSpill: conversations pushed out of memory wait on disk
// (0600 files in a 0700 folder); coming back reads the cache instead of
// a prefill and the reply is token for token the uninterrupted one; Close
// removes the folder.
func TestConversationsSpill(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(8)
	ref := newSession(t, b, set)
	a1, _ := reply(t, ref, "the first of three")
	a2, _ := reply(t, ref, "go on")

	s, cc := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	dir := filepath.Join(t.TempDir(), "conversations")
	e.KeepConversations(1, 1<<30)
	e.SpillConversations(dir, 1<<30)
	ra1 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "the first of three"}}, Settings: set})
	for _, other := range []string{"the second one", "and a third"} {
		finished(t, run(t, e, Request{Messages: []Message{{Role: "user", Content: other}}, Settings: set}))
	}
	st := e.ConversationStats()
	if st.OnDisk < 1 || st.DiskBytes <= 0 {
		t.Fatalf("nothing on disk: %+v", st)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v %v", fi.Mode(), err)
	}
	before := cc.prefilled
	ra2 := run(t, e, Request{Messages: []Message{{Role: "user", Content: "the first of three"}, {Role: "model", Content: ra1.text}, {Role: "user", Content: "go on"}}, Settings: set})
	m := finished(t, ra2)
	if !equalInts(ra1.ids, a1) || !equalInts(ra2.ids, a2) {
		t.Fatalf("replies %v %v, uninterrupted %v %v", ra1.ids, ra2.ids, a1, a2)
	}
	if fed := cc.prefilled - before; fed != m.PromptTokens-m.ReusedTokens || m.ReusedTokens < m.PromptTokens/2 {
		t.Fatalf("prefilled %d, reused %d of %d", fed, m.ReusedTokens, m.PromptTokens)
	}
	e.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the folder outlived Close: %v", err)
	}
}
