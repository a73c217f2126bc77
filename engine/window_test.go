package engine

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// orchardQuestions fill the tiny preset's 128-token context in a few turns.
var orchardQuestions = []string{
	"Tell me about pears, plums and apples in the orchard.",
	"And the apples, the pears and the plums in the autumn?",
	"Which of the plums, pears and apples keep the longest?",
	"How are the pears and the plums and the apples picked?",
	"What do the plums, the apples and the pears taste of?",
	"Which trees, pears or plums or apples, grow the fastest?",
}

// reload is a way a conversation comes back.
type reload struct {
	name string
	do   func()
}

// keptEverywhere saves the engine's conversation as checkpoint name and
// as the autosave, then starts a new one (/new keeps it in the history).
// It returns its id in the history and the ways to bring it back: resume
// it from the history, load the checkpoint, --continue (the autosave).
func keptEverywhere(t *testing.T, e *Engine, name string) (string, []reload) {
	t.Helper()
	e.SaveCheckpoint(name)
	until(t, e, func(c Checkpoints) bool { return c.Op == "save" })
	e.Autosave()
	until(t, e, func(c Checkpoints) bool { return c.Op == "autosave" })
	e.Clear()
	id := until(t, e, func(h History) bool { return h.Op == "kept" }).ID
	until(t, e, anyOf[Cleared])
	return id, []reload{
		{"history", func() { e.ResumeHistory(id) }},
		{"checkpoint", func() { e.LoadCheckpoint(name) }},
		{"autosave", func() { e.LoadCheckpoint(checkpoints.Autosave) }},
	}
}

// TestDropOldestKeepsTheRecord: under drop-oldest a full context moves
// what the model sees, never the record: the history, the autosave and a
// checkpoint keep every turn, and resuming any of them (the history with
// its cache or as text) continues token for token as the conversation
// that never left.
func TestDropOldestKeepsTheRecord(t *testing.T) {
	texts := orchardQuestions
	const last = "Last one."
	// The history as text (a prefill from the ids) on r1; with its cache on
	// stateful3, whose sliding ring cannot rewind past the window.
	for _, tc := range []struct {
		fam  string
		keep int
	}{{"r1", 0}, {"stateful3", 1}} {
		fam, keep := tc.fam, tc.keep
		t.Run(fmt.Sprintf("%s/keep%d", fam, keep), func(t *testing.T) {
			t.Parallel()
			set := Settings{MaxTokens: 10, ContextPolicy: ContextDropOldest, System: "Be brief.", Speculation: SpecModeOff}
			u := newSession(t, testbundle.Tiny(t, fam), set)
			u.stops = nil
			for _, x := range texts {
				reply(t, u, x)
			}
			want, _ := reply(t, u, last)

			e, hist := historyEngine(t, fam, set, HistoryPolicy{KeepKV: keep, KVBudget: 1 << 30})
			store := tempStore(t)
			e.UseStore(store, 0)
			dropped := 0
			for _, x := range texts {
				_, m := sendWait(t, e, x)
				dropped += m.DroppedTurns
			}
			if dropped == 0 || e.sess.window == 0 {
				t.Fatalf("the context never filled (window at %d)", e.sess.window)
			}
			all := e.Messages()
			if len(all) != 2*len(texts) || all[0].Content != texts[0] {
				t.Fatalf("the conversation holds %d messages after %d turns", len(all), len(texts))
			}
			id, back := keptEverywhere(t, e, "full")
			for _, name := range []string{"full", checkpoints.Autosave} {
				cp, err := store.Load(name, e.sess.b.Identity)
				if err != nil || len(cp.Conversation.Messages) != len(all) {
					t.Fatalf("checkpoint %s: %v, %d messages", name, err, len(cp.Conversation.Messages))
				}
			}
			if cp, err := hist.Show(id); err != nil || len(cp.Conversation.Messages) != len(all) {
				t.Fatalf("history entry: %v, %d messages", err, len(cp.Conversation.Messages))
			}

			for _, from := range back {
				from.do()
				cl := until(t, e, anyOf[Cleared])
				if !reflect.DeepEqual(cl.Messages, all) {
					t.Fatalf("%s: resumed %d messages, want all %d", from.name, len(cl.Messages), len(all))
				}
				got, _ := sendWait(t, e, last)
				if !slices.Equal(got, want) {
					t.Fatalf("%s: %v, uninterrupted %v", from.name, got, want)
				}
			}
		})
	}
}

// TestVersionsSurviveDropOldest: moving the window renumbers nothing, so
// the other versions of a message the model no longer sees are kept (they
// used to be thrown away); switching to one and back continues token for
// token, and a greedy regenerate after the drop repeats its reply.
func TestVersionsSurviveDropOldest(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := Settings{MaxTokens: 10, ContextPolicy: ContextDropOldest, Speculation: SpecModeOff}
	texts := orchardQuestions[:5]
	u := newSession(t, b, set)
	u.stops = nil
	for _, x := range texts {
		reply(t, u, x)
	}
	want, _ := reply(t, u, "Last one.")

	s := newSession(t, b, set)
	s.stops = nil
	reply(t, s, texts[0])
	if again, _ := turnOf(t, s.Regenerate); len(again) == 0 {
		t.Fatal("no regenerated reply")
	}
	for _, x := range texts[1:] {
		reply(t, s, x)
	}
	if s.window < 2 {
		t.Fatalf("the window is at %d: the first turn is still seen", s.window)
	}
	if m := s.Messages(); len(m) != 2*len(texts) || m[1].Versions != 2 {
		t.Fatalf("after the drop: %d messages, the first reply has %d versions", len(m), m[1].Versions)
	}
	prev, _ := reply(t, s, "Last one.")
	if !slices.Equal(prev, want) {
		t.Fatalf("%v, uninterrupted %v", prev, want)
	}
	if again, _ := turnOf(t, s.Regenerate); !slices.Equal(again, want) {
		t.Fatalf("regenerated after the drop %v, the reply was %v", again, want)
	}
	if err := s.SelectVersion(1, 0, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages(); len(m) != 2 {
		t.Fatalf("version 1 of the first reply holds %d messages", len(m))
	}
	if err := s.SelectVersion(1, 1, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages(); len(m) != 2*len(texts)+2 {
		t.Fatalf("back on version 2: %d messages", len(m))
	}
	got, _ := reply(t, s, "And then?")
	u.Regenerate(func(Event) {})
	wantNext, _ := reply(t, u, "And then?")
	if !slices.Equal(got, wantNext) {
		t.Fatalf("after switching versions %v, uninterrupted %v", got, wantNext)
	}
}

// TestWindowInEvents: the events that show a conversation say where the
// model's view of it starts — a turn's Started, Cleared after a load or
// a resume, Branched — and Engine.Window agrees, so a front end can mark
// the line.
func TestWindowInEvents(t *testing.T) {
	set := Settings{MaxTokens: 10, ContextPolicy: ContextDropOldest, Speculation: SpecModeOff}
	e, _ := historyEngine(t, "r1", set, HistoryPolicy{KeepKV: 0, KVBudget: 1 << 30})
	store := tempStore(t)
	e.UseStore(store, 0)
	var started Started
	dropped := 0
	for _, x := range orchardQuestions {
		e.Send(x)
		for _, ev := range collect(t, e, isEnd) {
			switch ev := ev.(type) {
			case Started:
				started = ev
			case Finished:
				dropped += ev.Metrics.DroppedTurns
			case Failed:
				t.Fatal(ev.Err)
			}
		}
	}
	w := e.Window()
	if w == 0 || started.Window != w || dropped != w {
		t.Fatalf("window %d, the last Started's %d, %d messages dropped", w, started.Window, dropped)
	}
	_, back := keptEverywhere(t, e, "full")
	for _, from := range back {
		from.do()
		if cl := until(t, e, anyOf[Cleared]); cl.Window != w || e.Window() != w {
			t.Fatalf("%s: Cleared says %d, the engine %d, want %d", from.name, cl.Window, e.Window(), w)
		}
	}
	e.Regenerate()
	if br := until(t, e, anyOf[Branched]); br.Window != w {
		t.Fatalf("Branched says %d, want %d", br.Window, w)
	}
	collect(t, e, isEnd)
	e.Clear()
	if cl := until(t, e, anyOf[Cleared]); cl.Window != 0 || e.Window() != 0 {
		t.Fatalf("after a clear: Cleared says %d, the engine %d", cl.Window, e.Window())
	}
}
