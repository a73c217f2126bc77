package engine

import (
	"strings"
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
		// stateful3 bundles have no verify function: the speculation gate is a
		// skip that says why.
		if spec := gates[0]; strings.HasPrefix(fam, "stateful3") != spec.Skip || spec.Skip && spec.Detail != "the bundle cannot verify drafts" {
			t.Errorf("%s: %+v", fam, spec)
		}
	}
}
