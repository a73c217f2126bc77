// Package chaintest is what the tests of chains and of the sessions over
// them share: chains over the reference runtime, greedy runs, and the
// full-recompute oracle's tokens to compare them with. Only tests import
// it.
package chaintest

import (
	"math/rand/v2"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// Prompts mixes lengths: shorter than a block, several blocks, past the
// sliding window (16 in the tiny preset), past the r1 plain width (32).
func Prompts(vocab int) [][]int {
	rng := rand.New(rand.NewPCG(1, 2))
	var out [][]int
	for _, n := range []int{1, 3, 8, 13, 17, 33, 41, 60} {
		p := []int{2}
		for len(p) < n {
			p = append(p, 5+rng.IntN(vocab-5))
		}
		out = append(out, p)
	}
	return out
}

// Open opens a bundle's chain over the reference runtime, closed when the
// test ends.
func Open(tb testing.TB, b *bundle.Bundle, o chain.Options) chain.Chain {
	tb.Helper()
	c, err := chain.Open(b, reference.New(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Greedy prefills prompt and decodes until it has n tokens.
func Greedy(tb testing.TB, c chain.Chain, prompt []int, n int) []int {
	tb.Helper()
	next, err := c.Prefill(prompt)
	if err != nil {
		tb.Fatal(err)
	}
	out := []int{next}
	for len(out) < n {
		if next, err = c.Decode(next); err != nil {
			tb.Fatal(err)
		}
		out = append(out, next)
	}
	return out
}

// OracleGreedy is the oracle's n greedy tokens after prompt, with the
// soft rows of spans (nil for none) standing in for their positions'
// embeddings.
func OracleGreedy(tb testing.TB, b *bundle.Bundle, prompt []int, spans []chain.SoftSpan, n int) []int {
	tb.Helper()
	o, host, err := chain.NewOracle(b)
	if err != nil {
		tb.Fatal(err)
	}
	defer host.Close()
	host.SetSoft(spans)
	var next int
	for p, tok := range prompt {
		if r := host.SoftRow(p); r != nil {
			_, next, err = o.FeedRow(r)
		} else {
			_, next, err = o.Feed(tok)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	out := []int{next}
	for len(out) < n {
		if _, next, err = o.Feed(next); err != nil {
			tb.Fatal(err)
		}
		out = append(out, next)
	}
	return out
}

// Scripted is the reference runtime playing script (a reference.Script's
// JSON) on bundle b, as `--script` sets it up.
func Scripted(tb testing.TB, b *bundle.Bundle, script string) *reference.Scripted {
	tb.Helper()
	sc, err := reference.ParseScript([]byte(script), "test-script.json")
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		tb.Fatal(err)
	}
	host, err := chain.NewInputs(b)
	if err != nil {
		tb.Fatal(err)
	}
	defer host.Close()
	rt, err := reference.NewScripted(reference.New(), reference.ScriptedOptions{Script: sc, Tokenizer: tok,
		Vocab: b.Geometry.Vocab, Hidden: b.Geometry.Hidden, Embed: host.Embed})
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}
