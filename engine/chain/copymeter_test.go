package chain_test

import (
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

// decodeCopies runs a prompt and n decode steps and returns the tokens and
// the bytes the runtime's own meter counted per decode step, from the
// third step on (the first calls learn which backings are declined).
func decodeCopies(t *testing.T, b *bundle.Bundle, n int) ([]int, float64) {
	t.Helper()
	c := chaintest.Open(t, b, chain.Options{})
	next, err := c.Prefill(chaintest.Prompts(b.Geometry.Vocab)[3])
	if err != nil {
		t.Fatal(err)
	}
	out := []int{next}
	var start int64
	for i := range n {
		if i == 2 {
			start, _ = chain.SeamCopies(c)
		}
		if next, err = c.Decode(next); err != nil {
			t.Fatal(err)
		}
		out = append(out, next)
	}
	end, ok := chain.SeamCopies(c)
	if !ok {
		t.Fatal("the reference runtime keeps no meter")
	}
	return out, float64(end-start) / float64(n-2)
}

// TestCopyMeterCountsDeclinedBackings: r1's decode writes each updated
// cache straight into the host's other buffer (an output backing). A
// backend that declines the backings writes its own buffers instead, and
// the host copies: the executor's meter rises by the whole cache per
// token, and the replies stay the same. (Before, the reference executor
// assumed every offered backing was used, so the meter could not rise.)
func TestCopyMeterCountsDeclinedBackings(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	want, base := decodeCopies(t, b, 12)
	cache := 0
	for l := range b.R1.FirstShared {
		d := b.Geometry.HeadDim
		if b.R1.HostIO.LayerTypes[l] == "full_attention" {
			d = b.Geometry.GlobalHeadDim
		}
		cache += 2 * b.Geometry.Context * d * 2 // K and V, fp16
	}
	for _, how := range []string{reference.BackingsDecline, reference.BackingsRefuse} {
		dir, err := reference.Synthesize(reference.SynthOptions{Family: "r1", Preset: "tiny", Seed: 7, Out: t.TempDir(), Form: reference.Form{Backings: how}})
		if err != nil {
			t.Fatal(err)
		}
		db, err := bundle.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		got, per := decodeCopies(t, db, 12)
		if !slices.Equal(got, want) {
			t.Errorf("%s: tokens %v, want %v", how, got, want)
		}
		// Each chunk's hidden row and the head's token are a few bytes more.
		rest := float64(len(db.Chunks)*db.Geometry.Hidden*2 + 4)
		if per != base+float64(cache)+rest {
			t.Errorf("%s: %.0f B copied per token, want the %d B of the cache (and %.0f B of hidden rows and token) over the %.0f B with backings", how, per, cache, rest, base)
		}
		t.Logf("%s: %.0f B/token copied (with backings taken: %.0f B; cache %d B)", how, per, base, cache)
	}
}
