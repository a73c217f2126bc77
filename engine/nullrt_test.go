package engine

import (
	"os"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// BenchmarkSessionPerToken is the whole per-token path of a turn — host
// inputs, chain plumbing, stop checks, detokenizing, metrics and the
// event — over the null runtime at E2B geometry, per generated token.
func BenchmarkSessionPerToken(b *testing.B) {
	bd := testbundle.Shape(b, "r1", "e2b")
	tok, err := tokenizer.Load(bd.Tokenizer)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := chain.Open(bd, reference.NewNull(), chain.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close()
	const perTurn = 1024 // a new conversation (zeroing 36 MB of cache) only every 1,024 tokens
	s, err := NewSession(bd, ch, tok, Settings{MaxTokens: perTurn, Speculation: SpecModeOff})
	if err != nil {
		b.Fatal(err)
	}
	s.Memory, s.stops = nil, nil
	if err := s.Send("warm up", func(Event) {}); err != nil { // first-use buffers
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += perTurn {
		s.Clear()
		if err := s.Send("hi", func(Event) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSessionAllocatesNothingPerToken: a turn's allocations do not grow
// with its length — a token's Delta event comes from a slab, and the
// turn's records grow by doubling — so 384 more tokens cost a handful of
// allocations, not one or more each.
func TestSessionAllocatesNothingPerToken(t *testing.T) {
	if os.Getenv("ORCHARD_SKIP_SHAPE") != "" {
		t.Skip("ORCHARD_SKIP_SHAPE set")
	}
	bd := testbundle.Shape(t, "r1", "e2b")
	tok, err := tokenizer.Load(bd.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	perTurn := func(tokens int) float64 {
		ch, err := chain.Open(bd, reference.NewNull(), chain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
		s, err := NewSession(bd, ch, tok, Settings{MaxTokens: tokens, Speculation: SpecModeOff})
		if err != nil {
			t.Fatal(err)
		}
		s.Memory, s.stops = nil, nil
		n := 0
		sink := func(e Event) {
			if _, ok := e.(*Delta); ok {
				n++
			}
		}
		allocs := testing.AllocsPerRun(3, func() {
			s.Clear()
			if err := s.Send("hi", sink); err != nil {
				t.Fatal(err)
			}
		})
		if n < 4*tokens { // warm-up and three runs, a Delta per token
			t.Fatalf("%d deltas for %d turns of %d tokens", n, 4, tokens)
		}
		return allocs
	}
	short, long := perTurn(128), perTurn(512)
	if extra := long - short; extra > 32 {
		t.Errorf("a turn of 512 tokens makes %.0f allocations more than one of 128 (%.0f against %.0f): about one per token", extra, long, short)
	}
	t.Logf("allocations per turn: %.0f for 128 tokens, %.0f for 512", short, long)
}
