package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// fakeClock advances a fixed step on every reading, so a verify call and
// a decode call each appear to take one step: the policy then judges by
// the tokens a verify commits alone.
func fakeClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

// TestAdaptivePausesLosingDrafts: drafts that are always wrong commit one
// token per verify, below break-even, so the policy pauses drafting (and
// reports it); good drafts keep it on.
func TestAdaptivePausesLosingDrafts(t *testing.T) {
	b := testbundle.Tiny(t, "v2")
	// 40 tokens: the turn ends inside the pause (48 tokens from where it
	// starts), so the state it reports is paused.
	bad := newSession(t, b, Settings{Speculation: SpecModeAuto, MaxTokens: 40, DraftLen: 6})
	bad.stops, bad.now = nil, fakeClock()
	bad.Drafter = randomDrafter{rand.New(rand.NewPCG(1, 1))}
	_, end := reply(t, bad, "Go.")
	f := end.(Finished)
	if bad.policy.pauses == 0 || f.Metrics.Spec.Rounds > 10 {
		t.Fatalf("losing drafts: %d pauses, %d verify rounds", bad.policy.pauses, f.Metrics.Spec.Rounds)
	}
	if st := bad.specState(); st != SpecPaused {
		t.Fatalf("state %s, want paused", st)
	}

	ref := newSession(t, b, Settings{Speculation: SpecModeOff, MaxTokens: 60})
	ref.stops = nil
	reply(t, ref, "Go.")
	n := 0
	good := newSession(t, b, Settings{Speculation: SpecModeAuto, MaxTokens: 60, DraftLen: 6})
	good.stops, good.now = nil, fakeClock()
	good.Drafter = oracleDrafter{truth: append(ref.Committed(), ref.pending), rounds: &n}
	_, end = reply(t, good, "Go.")
	if g := end.(Finished).Metrics.Spec; good.policy.pauses != 0 || g.Rounds < 8 || g.MeanAccepted < 2 {
		t.Fatalf("winning drafts: %d pauses, %+v", good.policy.pauses, g)
	}
	if st := good.specState(); st != SpecAdaptive {
		t.Fatalf("state %s, want adaptive", st)
	}
}

// TestSpecMetricsDefinitions: both published acceptance rates.
func TestSpecMetricsDefinitions(t *testing.T) {
	s := SpecStats{Rounds: 2, Drafted: 3 + 4, Accepted: 1 + 3, pldCopied: 2 + 3, pldAccepted: 0 + 2}
	s.finish()
	if s.AcceptanceRate != 4.0/7 || s.PLDRate != 2.0/5 || s.MeanAccepted != 2 {
		t.Fatalf("%+v", s)
	}
}
