package engine

import (
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestStoppedReplyKeepsItsFigures: a reply stopped with esc stays
// "stopped", with its figures (tokens, tok/s, TTFT, acceptance), after a
// load, a resume from the history (with its cache or as text) and
// --continue (the autosave) — it used to come back as "interrupted" with
// none. A finished reply keeps its figures too; a checkpoint from before
// orchard kept them loads as it did (interrupted, no figures).
func TestStoppedReplyKeepsItsFigures(t *testing.T) {
	for _, keep := range []int{1, 0} {
		set := Settings{MaxTokens: 16, Speculation: SpecModeOn, DraftLen: 4}
		e, hist := historyEngine(t, "r1", set, HistoryPolicy{KeepKV: keep, KVBudget: 1 << 30})
		store := tempStore(t)
		e.UseStore(store, 0)
		// The stop comes from the engine's own goroutine, a few clock
		// readings into the second reply: an esc from the reader would race
		// a turn that, on a loaded machine, reaches its cap first.
		var armed atomic.Bool
		var readings atomic.Int32
		e.sess.now = func() time.Time {
			if armed.Load() && readings.Add(1) == 8 {
				e.sess.Cancel()
			}
			return time.Now()
		}
		_, done := sendWait(t, e, "Repeat: plums, pears, plums, pears, plums, pears.")
		armed.Store(true)
		e.Send("Tell me everything about plums and pears, plums and pears.")
		var stopped Cancelled
		collect(t, e, func(ev Event) bool {
			switch x := ev.(type) {
			case Cancelled:
				stopped = x
				return true
			case Failed, Finished:
				t.Fatalf("the turn ended with %#v", ev)
			}
			return false
		})
		if stopped.Metrics.GeneratedTokens == 0 || stopped.Metrics.TTFTSeconds <= 0 {
			t.Fatalf("the stopped turn's figures: %+v", stopped.Metrics)
		}
		check := func(from string, msgs []Message) {
			t.Helper()
			if len(msgs) != 4 {
				t.Fatalf("%s: %d messages", from, len(msgs))
			}
			if m := msgs[1]; m.Stopped || m.Interrupted || m.Metrics == nil || !reflect.DeepEqual(*m.Metrics, *done.Kept()) {
				t.Fatalf("%s: the finished reply %+v, figures %+v, want %+v", from, m, m.Metrics, done.Kept())
			}
			if m := msgs[3]; !m.Stopped || !m.Interrupted || m.Metrics == nil || !reflect.DeepEqual(*m.Metrics, *stopped.Metrics.Kept()) {
				t.Fatalf("%s: the stopped reply %+v, figures %+v, want %+v", from, m, m.Metrics, stopped.Metrics.Kept())
			}
		}
		check("the session", e.Messages())
		id, back := keptEverywhere(t, e, "stopped")
		for _, load := range back {
			load.do()
			check(load.name, until(t, e, anyOf[Cleared]).Messages)
		}

		// A checkpoint written before orchard kept them: interrupted,
		// without figures, as it always showed.
		cp, err := hist.Show(id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cp.Conversation.Messages {
			cp.Conversation.Messages[i].Stopped, cp.Conversation.Messages[i].Figures = false, nil
		}
		old := newSession(t, testbundle.Tiny(t, "r1"), set)
		if err := old.Restore(cp); err != nil {
			t.Fatal(err)
		}
		if m := old.Messages(); !m[3].Interrupted || m[3].Stopped || m[3].Metrics != nil || m[1].Metrics != nil {
			t.Fatalf("an older checkpoint: %+v", m)
		}
	}
}

// TestClosingInterruptsWithoutStopping: a reply the engine cuts short by
// closing (the connection dropped, the chat quit) is interrupted, not
// stopped by the user, and keeps its figures.
func TestClosingInterruptsWithoutStopping(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{MaxTokens: 40})
	s.stops = nil
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.Send("Tell me everything.")
	collect(t, e, func(ev Event) bool { _, ok := ev.(*Delta); return ok })
	e.Close()
	m := e.Messages()
	if len(m) != 2 || !m[1].Interrupted || m[1].Stopped || m[1].Metrics == nil || m[1].Metrics.FinishReason != "cancelled" {
		t.Fatalf("after Close mid-reply: %+v", m)
	}
}
