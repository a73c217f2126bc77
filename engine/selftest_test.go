package engine

import (
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

func TestSelfTestPassesOnEveryFamily(t *testing.T) {
	for _, fam := range testbundle.Families() {
		b := testbundle.Tiny(t, fam)
		tok, err := tokenizer.Load(b.Tokenizer)
		if err != nil {
			t.Fatal(err)
		}
		open := func(o chain.Options) (chain.Chain, error) { return chain.Open(b, reference.New(), o) }
		gates, err := SelfTest(b, open, tok, SelfTestOptions{Prompts: []string{"Copy: a b c a b c.", "Why?"}, Steps: 16})
		if err != nil {
			t.Fatal(err)
		}
		if len(gates) != 5 {
			t.Fatalf("%d gates", len(gates))
		}
		for _, g := range gates {
			if !g.Pass {
				t.Errorf("%s: %s: %s", fam, g.Name, g.Detail)
			}
		}
	}
}

func TestFirstDiff(t *testing.T) {
	if d := firstDiff([]int{1, 2, 3}, []int{1, 9, 3}); d != "token 1 is 9, want 2" {
		t.Fatal(d)
	}
	if d := firstDiff([]int{1, 2}, []int{1}); d == "" {
		t.Fatal("a shorter run passed")
	}
}

// brokenRewind ignores rewinds, as a buggy backend might.
type brokenRewind struct{ chain.Chain }

func (brokenRewind) Rewind(int) error { return nil }

func TestSelfTestCatchesABrokenChain(t *testing.T) {
	b := testbundle.Tiny(t, "v2")
	tok, _ := tokenizer.Load(b.Tokenizer)
	open := func(o chain.Options) (chain.Chain, error) {
		c, err := chain.Open(b, reference.New(), o)
		return brokenRewind{c}, err
	}
	gates, err := SelfTest(b, open, tok, SelfTestOptions{Prompts: []string{"Copy: a b c a b c.", "Why?"}, Steps: 16})
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, g := range gates {
		if !g.Pass {
			failed[g.Name] = true
		}
	}
	if !failed["rewind == fresh"] {
		t.Fatalf("a chain that ignores rewinds passed: %+v", gates)
	}
}
