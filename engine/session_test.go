package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/tokenizer"
)

func newSession(t testing.TB, b *bundle.Bundle, set Settings) *Session {
	t.Helper()
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	c := chaintest.Open(t, b, chain.Options{})
	s, err := NewSession(b, c, tok, set)
	if err != nil {
		t.Fatal(err)
	}
	s.Memory = nil
	return s
}

// reply runs one turn and returns the generated ids and the final event.
func reply(t testing.TB, s *Session, text string) ([]int, Event) {
	t.Helper()
	var ids []int
	var last Event
	err := s.Send(text, func(e Event) {
		if d, ok := e.(*Delta); ok {
			ids = append(ids, d.Tokens...)
		}
		last = e
	})
	if err != nil && !errors.Is(err, ErrCancelled) {
		t.Fatalf("send %q: %v", text, err)
	}
	return ids, last
}

// specOn turns speculation on with the longest draft the bundle verifies
// (at most 8); a bundle without a verify function gets the auto mode, the
// only one it accepts besides off.
func specOn(b *bundle.Bundle, set Settings) Settings {
	switch b.Family {
	case bundle.R1:
		set.Speculation, set.DraftLen = SpecModeOn, 4 // verify width 4
	case bundle.V2:
		set.Speculation, set.DraftLen = SpecModeOn, 8
	default:
		set.Speculation, set.DraftLen = SpecModeAuto, 4
	}
	return set
}

// randomDrafter proposes random tokens, most of them wrong.
type randomDrafter struct{ rng *rand.Rand }

func (r randomDrafter) Draft(dst, _ []int, _ int, max int) []int {
	for range max {
		dst = append(dst, r.rng.IntN(512))
	}
	return dst
}

// oracleDrafter proposes the true continuation (looked up from a reference
// run) with an error injected every few rounds.
type oracleDrafter struct {
	truth  []int // committed tokens of the reference run, prompt included
	rounds *int
}

func (o oracleDrafter) Draft(dst, context []int, last, max int) []int {
	*o.rounds++
	at := len(context) + 1 // truth[at] follows context+[last]
	for i := 0; i < max && at+i < len(o.truth); i++ {
		tok := o.truth[at+i]
		if *o.rounds%3 == 0 && i == max/2 {
			tok = (tok + 1) % 512
		}
		dst = append(dst, tok)
	}
	return dst
}

var prompts3 = []string{
	"Say hello.",
	"Repeat after me: the quick brown fox jumps over the lazy dog, the quick brown fox jumps over the lazy dog.",
	"List: apples, pears, plums, apples, pears, plums, apples, pears.",
}

// TestSpeculationIsLossless: greedy output is byte-identical with
// speculation on and off, under the default drafter, a random drafter and
// an oracle drafter with errors, on every family that can verify —
// including caps, the context end and stop tokens inside drafts.
func TestSpeculationIsLossless(t *testing.T) {
	for _, fam := range []string{"r1", "v2"} {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			for _, capTokens := range []int{9, 40} { // TestContextEnd covers running to the end
				for pi, p := range prompts3 {
					off := newSession(t, b, Settings{Speculation: SpecModeOff, MaxTokens: capTokens})
					want, wantEnd := reply(t, off, p)
					truth := append(off.Committed(), off.pending)
					for di, mk := range []func() Drafter{
						func() Drafter { return PromptLookup{MinN: 1, MaxN: 3} },
						func() Drafter { return randomDrafter{rand.New(rand.NewPCG(uint64(pi), 9))} },
						func() Drafter { n := 0; return oracleDrafter{truth: truth, rounds: &n} },
					} {
						on := newSession(t, b, specOn(b, Settings{MaxTokens: capTokens}))
						on.Drafter = mk()
						got, gotEnd := reply(t, on, p)
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Fatalf("cap %d prompt %d drafter %d:\n spec %v\nplain %v", capTokens, pi, di, got, want)
						}
						fo, fw := gotEnd.(Finished), wantEnd.(Finished)
						if fo.Reply != fw.Reply || fo.Metrics.FinishReason != fw.Metrics.FinishReason {
							t.Fatalf("reply or finish differs: %q/%s vs %q/%s", fo.Reply, fo.Metrics.FinishReason, fw.Reply, fw.Metrics.FinishReason)
						}
						if di == 2 && fo.Metrics.Spec.Rounds == 0 {
							t.Fatal("the oracle drafter never drafted")
						}
						if !slices.Equal(on.Committed(), off.Committed()) || on.chain.Position() != len(on.Committed()) {
							t.Fatalf("cache differs after the turn: %d vs %d tokens", len(on.Committed()), len(off.Committed()))
						}
					}
				}
			}
		})
	}
}

// TestSpeculationStopsInsideDraft: a stop token accepted inside a draft
// ends the turn exactly where plain decoding ends it.
func TestSpeculationStopsInsideDraft(t *testing.T) {
	for _, fam := range []string{"r1", "v2"} {
		b := testbundle.Tiny(t, fam)
		ref := newSession(t, b, Settings{Speculation: SpecModeOff, MaxTokens: 30})
		gen, _ := reply(t, ref, prompts3[1])
		truth := append(ref.Committed(), ref.pending)
		for _, k := range []int{3, 7, 12} {
			stop := gen[k]
			if slices.Index(gen, stop) != k {
				continue // the token occurs earlier; pick another
			}
			off := newSession(t, b, Settings{Speculation: SpecModeOff})
			off.stops = []int{stop}
			want, _ := reply(t, off, prompts3[1])
			n := 0
			on := newSession(t, b, specOn(b, Settings{}))
			on.stops = []int{stop}
			on.Drafter = oracleDrafter{truth: truth, rounds: &n}
			got, end := reply(t, on, prompts3[1])
			if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != k {
				t.Fatalf("%s stop at %d: spec %v, plain %v", fam, k, got, want)
			}
			if f := end.(Finished); f.Metrics.FinishReason != "eos" || on.pending != stop {
				t.Fatalf("%s: finish %s pending %d", fam, f.Metrics.FinishReason, on.pending)
			}
			if on.chain.Position() != len(on.Committed()) {
				t.Fatalf("%s: the stop token was left in the cache", fam)
			}
		}
	}
}

// TestContextEnd: generation runs into the end of the context with and
// without speculation and stops identically with finish reason contextFull.
func TestContextEnd(t *testing.T) {
	for _, fam := range []string{"r1", "v2", "stateful3"} {
		b := testbundle.Tiny(t, fam)
		long := strings.Repeat("orchard apples and pears. ", 6) // most of the 128 positions
		off := newSession(t, b, Settings{Speculation: SpecModeOff})
		want, end := reply(t, off, long)
		if f := end.(Finished); f.Metrics.FinishReason != "contextFull" || f.Metrics.ContextUsed != 128 {
			t.Fatalf("%s: finish %s at %d, want contextFull at 128", fam, f.Metrics.FinishReason, f.Metrics.ContextUsed)
		}
		on := newSession(t, b, specOn(b, Settings{}))
		on.Drafter = PromptLookup{MinN: 1, MaxN: 3}
		got, _ := reply(t, on, long)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: at the context end spec %v, plain %v", fam, got, want)
		}
	}
}
