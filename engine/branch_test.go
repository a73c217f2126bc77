package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// turnOf runs one turn through do (Send, Regenerate, Edit) and returns
// the generated ids with every event.
func turnOf(t testing.TB, do func(emit func(Event)) error) ([]int, []Event) {
	t.Helper()
	var ids []int
	var evs []Event
	err := do(func(e Event) {
		if d, ok := e.(*Delta); ok {
			ids = append(ids, d.Tokens...)
		}
		evs = append(evs, e)
	})
	if err != nil && !errors.Is(err, ErrCancelled) {
		t.Fatalf("turn: %v", err)
	}
	return ids, evs
}

func started(t testing.TB, evs []Event) Started {
	t.Helper()
	for _, e := range evs {
		if s, ok := e.(Started); ok {
			return s
		}
	}
	t.Fatalf("no Started among %d events", len(evs))
	return Started{}
}

// TestRegenerateRewindsAndRepeats: with greedy decoding a regenerated
// reply is the same reply, fed from the cache rewound to the end of its
// prompt (one token fed again, not a prefill); the old reply stays as
// version 1 of 2; and the conversation goes on exactly as if it had not
// been regenerated — every family, also after the sliding window wrapped.
func TestRegenerateRewindsAndRepeats(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			set := Settings{MaxTokens: 10, System: "Be brief."}
			a := newSession(t, b, set)
			a.stops = nil
			reply(t, a, "First question, long enough to pass the window.")
			want, _ := reply(t, a, "Second.")

			got, evs := turnOf(t, a.Regenerate)
			st := started(t, evs)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("regenerated %v, first %v", got, want)
			}
			// All but the last prompt token come from the cache — or, when a
			// wrapped sliding ring cannot go back that far, the user is told.
			told := false
			for _, e := range evs {
				if n, ok := e.(Notice); ok && strings.Contains(n.Text, "prefilled again") {
					told = true
				}
			}
			if st.ReusedTokens != st.PromptTokens-1 && !(told && st.ReusedTokens == 0) {
				t.Errorf("regenerate reused %d of %d prompt tokens (told: %v); want all but the last", st.ReusedTokens, st.PromptTokens, told)
			}
			t.Logf("%s: reused %d of %d, min rewind %d", fam, st.ReusedTokens, st.PromptTokens, a.Capabilities().MinRewind)
			if st.Versions != 2 {
				t.Errorf("Started.Versions = %d, want 2", st.Versions)
			}
			if br, ok := evs[0].(Branched); !ok || br.Op != "regenerate" || len(br.Messages) != 3 {
				t.Fatalf("first event %#v", evs[0])
			}
			msgs := a.Messages()
			if len(msgs) != 4 || msgs[3].Version != 1 || msgs[3].Versions != 2 {
				t.Fatalf("messages after regenerate: %+v", msgs)
			}
			next, _ := reply(t, a, "Third.")

			u := newSession(t, b, set)
			u.stops = nil
			reply(t, u, "First question, long enough to pass the window.")
			reply(t, u, "Second.")
			wantNext, _ := reply(t, u, "Third.")
			if fmt.Sprint(next) != fmt.Sprint(wantNext) {
				t.Fatalf("after a regenerate %v, uninterrupted %v", next, wantNext)
			}
		})
	}
}

// TestRegenerateSamples: with sampling a regenerated reply is another
// draw (and another again with a new seed), and the earlier ones stay
// reachable, each exactly as it was.
func TestRegenerateSamples(t *testing.T) {
	b := testbundle.Tiny(t, "stateful3-logits")
	s := newSession(t, b, Settings{MaxTokens: 16, Sampling: Sampling{Temperature: 1.5, TopP: 1, Seed: 7}})
	s.stops = nil
	first, _ := reply(t, s, "Pick words.")
	text0 := s.Messages()[1].Content
	second, _ := turnOf(t, s.Regenerate)
	if fmt.Sprint(first) == fmt.Sprint(second) {
		t.Fatal("a regenerated sampled reply is the same 16 tokens")
	}
	set := s.Settings()
	set.Sampling.Seed = 8
	if err := s.SetSettings(set); err != nil {
		t.Fatal(err)
	}
	third, _ := turnOf(t, s.Regenerate)
	if fmt.Sprint(third) == fmt.Sprint(second) || fmt.Sprint(third) == fmt.Sprint(first) {
		t.Fatal("a new seed gave an earlier reply again")
	}
	if m := s.Messages()[1]; m.Versions != 3 || m.Version != 2 {
		t.Fatalf("versions %d/%d", m.Version, m.Versions)
	}
	var br Branched
	if err := s.SelectVersion(1, 0, func(e Event) {
		if b, ok := e.(Branched); ok {
			br = b
		}
	}); err != nil {
		t.Fatal(err)
	}
	if got := br.Messages[1]; got.Content != text0 || got.Version != 0 || got.Versions != 3 {
		t.Fatalf("version 1 shows %+v, want %q", got, text0)
	}
	if err := s.SelectVersion(1, 5, func(Event) {}); err == nil {
		t.Fatal("a version that does not exist was selected")
	}
}

// TestEditEqualsFresh: an edited message's reply equals a fresh
// conversation that had that message instead (token for token, the cache
// rewound to before it); selecting the old version brings back the old
// turn, and the conversation continues from it exactly.
func TestEditEqualsFresh(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			set := Settings{MaxTokens: 8}
			fresh := func(msgs ...string) []int {
				s := newSession(t, b, set)
				s.stops = nil
				var ids []int
				for _, m := range msgs {
					ids, _ = reply(t, s, m)
				}
				return ids
			}
			a := newSession(t, b, set)
			a.stops = nil
			reply(t, a, "Hello there.")
			if got, _ := turnOf(t, func(emit func(Event)) error { return a.Edit("Goodbye now.", emit) }); fmt.Sprint(got) != fmt.Sprint(fresh("Goodbye now.")) {
				t.Fatalf("first message edited: %v, fresh %v", got, fresh("Goodbye now."))
			}
			held := len(a.Committed()) // what both versions of the second turn share
			reply(t, a, "A second question.")
			before := a.Messages()
			got, evs := turnOf(t, func(emit func(Event)) error { return a.Edit("Another second question.", emit) })
			if want := fresh("Goodbye now.", "Another second question."); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("second message edited: %v, fresh %v", got, want)
			}
			if st := started(t, evs); a.Capabilities().MinRewind == 0 && st.ReusedTokens < 10 {
				t.Errorf("the edit reused only %d tokens", st.ReusedTokens)
			}
			msgs := a.Messages()
			if len(msgs) != 4 || msgs[2].Content != "Another second question." || msgs[2].Versions != 2 || msgs[2].Version != 1 {
				t.Fatalf("after the edit: %+v", msgs)
			}
			// Back to the first version of message 3: the old turn is
			// there, and the next turn equals the uninterrupted one.
			if err := a.SelectVersion(2, 0, func(Event) {}); err != nil {
				t.Fatal(err)
			}
			if got := a.Messages(); got[2].Content != before[2].Content || got[3].Content != before[3].Content {
				t.Fatalf("version 1: %+v", got)
			}
			next, end := reply(t, a, "Third.")
			if f := end.(Finished); a.Capabilities().MinRewind == 0 && f.Metrics.ReusedTokens < held {
				t.Errorf("after switching versions the turn reused %d tokens; the versions share %d", f.Metrics.ReusedTokens, held)
			}
			if want := fresh("Goodbye now.", "A second question.", "Third."); fmt.Sprint(next) != fmt.Sprint(want) {
				t.Fatalf("after switching back %v, uninterrupted %v", next, want)
			}
		})
	}
}

// TestEditRefusedKeepsConversation: an edit the context cannot hold is
// refused, and the conversation and the next turn are as before.
func TestEditRefusedKeepsConversation(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	a := newSession(t, b, Settings{MaxTokens: 6})
	a.stops = nil
	reply(t, a, "Hello.")
	before := fmt.Sprint(a.Messages())
	var failed Failed
	var branched []Branched
	err := a.Edit(strings.Repeat("apples and pears ", 2000), func(e Event) {
		switch x := e.(type) {
		case Failed:
			failed = x
		case Branched:
			branched = append(branched, x)
		}
	})
	if !errors.Is(err, chain.ErrContextFull) || failed.Op != "edit" {
		t.Fatalf("edit returned %v, event %#v", err, failed)
	}
	if got := fmt.Sprint(a.Messages()); got != before {
		t.Fatalf("after a refused edit:\n%s\nwant\n%s", got, before)
	}
	if len(branched) != 2 || fmt.Sprint(branched[1].Messages) != before {
		t.Fatalf("branched events %+v", branched)
	}
	got, _ := reply(t, a, "Next.")
	u := newSession(t, b, Settings{MaxTokens: 6})
	u.stops = nil
	reply(t, u, "Hello.")
	if want, _ := reply(t, u, "Next."); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a refused edit %v, uninterrupted %v", got, want)
	}
}

// TestVersionsSurviveCheckpoint: versions, and what a regenerate
// continues, are saved with a checkpoint; after a restore a regenerate
// equals the one before it.
func TestVersionsSurviveCheckpoint(t *testing.T) {
	b := testbundle.Tiny(t, "v2")
	store := tempStore(t)
	a := newSession(t, b, Settings{MaxTokens: 8})
	a.stops = nil
	reply(t, a, "One.")
	reply(t, a, "Two.")
	turnOf(t, func(emit func(Event)) error { return a.Edit("Two, edited.", emit) })
	saveTo(t, store, a, "v")
	want, _ := turnOf(t, a.Regenerate)
	loaded, err := store.Load("v", b.Identity)
	if err != nil {
		t.Fatal(err)
	}
	c := newSession(t, b, Settings{})
	c.stops = nil
	if err := c.Restore(loaded); err != nil {
		t.Fatal(err)
	}
	if m := c.Messages(); len(m) != 4 || m[2].Versions != 2 || m[2].Version != 1 {
		t.Fatalf("restored messages %+v", m)
	}
	got, evs := turnOf(t, c.Regenerate)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("regenerate after restore %v, before %v", got, want)
	}
	if st := started(t, evs); st.ReusedTokens != st.PromptTokens-1 {
		t.Errorf("regenerate after restore reused %d of %d", st.ReusedTokens, st.PromptTokens)
	}
	if err := c.SelectVersion(2, 0, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	if m := c.Messages(); m[2].Content != "Two." {
		t.Fatalf("version 1 after restore: %+v", m)
	}
}

// TestVersionsSurviveARequest: an API request's conversation passing
// through the session neither takes the chat's versions nor leaves its
// own: afterwards the chat's regenerate and version switch act on the
// chat's conversation, and a request's conversation starts without them.
func TestVersionsSurviveARequest(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(8)
	s := newSession(t, b, set)
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.Send("hello there")
	collect(t, e, isEnd)
	e.Regenerate()
	collect(t, e, isEnd)
	if m := e.Messages(); len(m) != 2 || m[1].Versions != 2 {
		t.Fatalf("before the request: %+v", m)
	}
	other := run(t, e, Request{Messages: []Message{{Role: "user", Content: "a"}, {Role: "model", Content: "b"},
		{Role: "user", Content: "something else entirely"}}, Settings: set})
	finished(t, other)
	if m := e.Messages(); len(m) != 2 || m[1].Versions != 2 {
		t.Fatalf("the chat during a request's conversation: %+v", m)
	}
	e.SelectVersion(1, 0)
	evs := collect(t, e, func(ev Event) bool { _, ok := ev.(Branched); return ok || isEnd(ev) })
	if br, ok := evs[len(evs)-1].(Branched); !ok || len(br.Messages) != 2 || br.Messages[1].Version != 0 {
		t.Fatalf("selecting the chat's version: %#v", evs[len(evs)-1])
	}
	// The request's conversation (4 messages after its reply) carries no
	// version of the chat's.
	again := run(t, e, Request{Messages: []Message{{Role: "user", Content: "a"}, {Role: "model", Content: "b"},
		{Role: "user", Content: "something else entirely"}, {Role: "model", Content: other.text}, {Role: "user", Content: "more"}}, Settings: set})
	finished(t, again)
	// Looked at on the engine goroutine, without bringing the chat back.
	held := make(chan string, 1)
	e.do("list", func() { held <- fmt.Sprintf("foreign %v, versions %d", e.convs.foreign, len(e.sess.versions)) })
	if got := <-held; got != "foreign true, versions 0" {
		t.Fatalf("a request's conversation in the session: %s", got)
	}
}

// TestRegenerateAndEditKeepAttachments: a message with an image is
// regenerated from the cache (its rows are not encoded or fed again)
// into the same reply; an edit keeps the image and gives the reply a
// fresh conversation with the edited text and the image gives; switching
// back to the first version after both is exact.
func TestRegenerateAndEditKeepAttachments(t *testing.T) {
	dir := t.TempDir()
	pic := writePNG(t, dir, 3, 24, 24)
	b := testbundle.Tiny(t, "r1")
	set := Settings{MaxTokens: 8, Speculation: SpecModeOff}
	img := MediaFile{Kind: MediaImage, Path: pic}

	s := mediaSession(t, b, set)
	want, _ := sendMedia(t, s, "Describe it.", img)
	got, evs := turnOf(t, s.Regenerate)
	st := started(t, evs)
	if fmt.Sprint(got) != fmt.Sprint(want) || st.ReusedTokens != st.PromptTokens-1 {
		t.Fatalf("regenerate %v (reused %d of %d), first %v", got, st.ReusedTokens, st.PromptTokens, want)
	}
	if len(st.Attachments) != 1 || s.Messages()[0].Attachments[0].SHA256 != st.Attachments[0].SHA256 {
		t.Fatalf("the regenerated turn's attachments %+v", st.Attachments)
	}

	edited, _ := turnOf(t, func(emit func(Event)) error { return s.Edit("Describe it briefly.", emit) })
	f := mediaSession(t, b, set)
	if fresh, _ := sendMedia(t, f, "Describe it briefly.", img); fmt.Sprint(edited) != fmt.Sprint(fresh) {
		t.Fatalf("edited %v, fresh %v", edited, fresh)
	}
	if m := s.Messages()[0]; len(m.Attachments) != 1 || m.Versions != 2 {
		t.Fatalf("the edited message %+v", m)
	}

	if err := s.SelectVersion(0, 0, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	next, _ := sendMedia(t, s, "What colour?")
	u := mediaSession(t, b, set)
	sendMedia(t, u, "Describe it.", img)
	if wantNext, _ := sendMedia(t, u, "What colour?"); fmt.Sprint(next) != fmt.Sprint(wantNext) {
		t.Fatalf("after switching back %v, uninterrupted %v", next, wantNext)
	}
}
