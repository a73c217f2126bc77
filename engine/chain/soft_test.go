package chain_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/f16"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestSoftRowsMatchOracle: with encoder rows standing in for the
// embeddings of a span of prompt positions (raw rows, token 0's per-layer
// input), every family's chain gives the oracle's tokens, batched and token
// by token, and across two spans.
func TestSoftRowsMatchOracle(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			H := b.Geometry.Hidden
			rng := rand.New(rand.NewPCG(3, 4))
			row := func() []uint16 {
				r := make([]uint16, H)
				for i := range r {
					r[i] = f16.FromF32(float32(rng.NormFloat64()))
				}
				return r
			}
			// 40 tokens: a span of 9 soft rows at 3, another of 5 at 20.
			prompt := chaintest.Prompts(b.Geometry.Vocab)[6][:40]
			spans := []chain.SoftSpan{{Start: 3}, {Start: 20}}
			for i, n := range []int{9, 5} {
				for range n {
					spans[i].Rows = append(spans[i].Rows, row()...)
				}
			}
			want := chaintest.OracleGreedy(t, b, prompt, spans, 16)
			for _, opts := range []chain.Options{{}, {NoBatchedPrefill: true}} {
				c := chaintest.Open(t, b, opts)
				c.SetSoft(spans)
				got := chaintest.Greedy(t, c, prompt, 16)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("widths %v:\n got %v\nwant %v", c.Capabilities().PrefillWidths, got, want)
				}
				// Without the rows, the same ids give other tokens: the
				// rows were used.
				c.SetSoft(nil)
				c.Reset()
				if plain := chaintest.Greedy(t, c, prompt, 16); fmt.Sprint(plain) == fmt.Sprint(want) {
					t.Errorf("the soft rows changed nothing")
				}
			}
		})
	}
}
