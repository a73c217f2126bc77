package chain_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

// formCases are the plausible forms of the published bundles that the
// reference docs leave open (issue 11): orchard opens each and gives the
// tokens the documented form gives.
var formCases = []struct {
	name   string
	family string
	form   reference.Form
	check  func(t *testing.T, b *bundle.Bundle, c chain.Chain)
	quick  bool // only the 33-token prompt (the suite stays fast)
}{
	{name: "r1 metadata per function", family: "r1", form: reference.Form{Metadata: reference.MetaPerFunction}},
	{name: "r1 no metadata", family: "r1", form: reference.Form{Metadata: reference.MetaNone}},
	{name: "r1 widths found by name", family: "r1", form: reference.Form{R1UnnamedWidths: true, Metadata: reference.MetaNone},
		check: func(t *testing.T, b *bundle.Bundle, c chain.Chain) {
			if w := c.Capabilities().PrefillWidths; !slices.Contains(w, 16) || !slices.Contains(w, 32) {
				t.Errorf("prefill widths %v: the chunks' prefill16/prefill32 were not found", w)
			}
		}},
	{name: "r1 a listed width the chunks lack", family: "r1", form: reference.Form{R1MissingWidth: 24},
		check: func(t *testing.T, b *bundle.Bundle, c chain.Chain) {
			caps := c.Capabilities()
			if slices.Contains(caps.PrefillWidths, 24) {
				t.Errorf("prefill widths %v include 24, which no chunk has", caps.PrefillWidths)
			}
			if !hasNote(caps.Notes, "24") {
				t.Errorf("no note says width 24 is unused: %q", caps.Notes)
			}
		}},
	{name: "v2 metadata per function", family: "v2", form: reference.Form{Metadata: reference.MetaPerFunction}},
	{name: "v2 no metadata, rank-4 states", family: "v2", form: reference.Form{Metadata: reference.MetaNone, V2StateRank4: true}},
	{name: "v2 no store_layers", family: "v2", form: reference.Form{V2NoStoreLayers: true}},
	{name: "stateful3 metadata per function", family: "stateful3", form: reference.Form{Metadata: reference.MetaPerFunction}},
	{name: "stateful3 no metadata", family: "stateful3", form: reference.Form{Metadata: reference.MetaNone}},
	{name: "stateful3 single-function chunks named main", family: "stateful3", form: reference.Form{S3Default: "main", S3Batch: -1},
		check: func(t *testing.T, b *bundle.Bundle, c chain.Chain) {
			if w := c.Capabilities().PrefillWidths; !slices.Equal(w, []int{1}) {
				t.Errorf("prefill widths %v, want token by token", w)
			}
		}},
	{name: "stateful3 prefill_b4", family: "stateful3", form: reference.Form{S3Batch: 4},
		check: func(t *testing.T, b *bundle.Bundle, c chain.Chain) {
			if w := c.Capabilities().PrefillWidths; !slices.Equal(w, []int{4, 1}) {
				t.Errorf("prefill widths %v, want [4 1]", w)
			}
		}},
	{name: "cardbud metadata per function", family: "stateful3-logits", form: reference.Form{Metadata: reference.MetaPerFunction}},
	{name: "cardbud no metadata, fp32 logits", family: "stateful3-logits", form: reference.Form{Metadata: reference.MetaNone, LogitsF32: true},
		check: func(t *testing.T, b *bundle.Bundle, c chain.Chain) {
			if b.Family != bundle.Stateful3Logits || !c.Capabilities().Logits {
				t.Errorf("family %s, logits %v: the loaded chunk_3 declares logits", b.Family, c.Capabilities().Logits)
			}
		}},
	{name: "cardbud single-function chunk_3", family: "stateful3-logits", form: reference.Form{S3Default: "main", S3Batch: -1, Metadata: reference.MetaPerFunction}},
	// Issue 20: what a real Mac bundle declares.
	{name: "cardbud logits under another name", family: "stateful3-logits", form: reference.Form{LogitsOutput: "output_logits", Metadata: reference.MetaNone},
		check: func(t *testing.T, b *bundle.Bundle, c chain.Chain) {
			if b.Family != bundle.Stateful3Logits || !c.Capabilities().Logits || len(c.Logits()) != b.Geometry.Vocab {
				t.Errorf("family %s, logits %v (%d): chunk_3's one vocabulary-wide output is the logits", b.Family, c.Capabilities().Logits, len(c.Logits()))
			}
		}},
	{name: "cardbud renamed shapeless logits", family: "stateful3-logits", form: reference.Form{LogitsOutput: "var_2291", AllShapeless: true}},
	{name: "r1 a width prefill.N does not list", family: "r1", form: reference.Form{R1ExtraWidth: 24},
		check: func(t *testing.T, b *bundle.Bundle, c chain.Chain) {
			caps := c.Capabilities()
			if slices.Contains(caps.PrefillWidths, 24) || !hasNote(caps.Notes, "prefill24") {
				t.Errorf("prefill widths %v, notes %q: prefill24 must stay unused (prefill.N names functions)", caps.PrefillWidths, caps.Notes)
			}
		}},
}

// Forms every family can take (issue 20), added to formCases per family.
func init() {
	for _, fam := range testbundle.Families() {
		for _, f := range []struct {
			name  string
			form  reference.Form
			quick bool
		}{
			{"shapeless outputs", reference.Form{AllShapeless: true}, true},
			{"fp32 inputs", reference.Form{F32Inputs: true}, true},
			{"declines backings", reference.Form{Backings: reference.BackingsDecline}, true},
			{"refuses backings", reference.Form{Backings: reference.BackingsRefuse}, true},
			{"all of them, no metadata", reference.Form{AllShapeless: true, F32Inputs: true, Backings: reference.BackingsRefuse, Metadata: reference.MetaNone}, false},
		} {
			formCases = append(formCases, struct {
				name   string
				family string
				form   reference.Form
				check  func(t *testing.T, b *bundle.Bundle, c chain.Chain)
				quick  bool
			}{name: fam + " " + f.name, family: fam, form: f.form, quick: f.quick})
		}
	}
}

func hasNote(notes []string, sub string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, sub) })
}

// TestBundleForms: every family opens in every form and its greedy tokens
// equal those of the documented form, prompt by prompt.
func TestBundleForms(t *testing.T) {
	// Prompts of 8, 13 and 33 tokens: within a block, across the sliding
	// window, past r1's plain width.
	run := func(t *testing.T, c chain.Chain, b *bundle.Bundle, quick bool) [][]int {
		var out [][]int
		which := []int{2, 3, 5}
		if quick {
			which = []int{5}
		}
		for _, i := range which {
			if err := c.Reset(); err != nil {
				t.Fatal(err)
			}
			out = append(out, chaintest.Greedy(t, c, chaintest.Prompts(b.Geometry.Vocab)[i], 10))
		}
		return out
	}
	want := map[string][][]int{}
	for _, fam := range testbundle.Families() {
		b := testbundle.Tiny(t, fam)
		want[fam] = run(t, chaintest.Open(t, b, chain.Options{}), b, false)
	}
	for _, tt := range formCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, err := reference.Synthesize(reference.SynthOptions{Family: tt.family, Preset: "tiny", Seed: 7, Out: t.TempDir(), Form: tt.form})
			if err != nil {
				t.Fatal(err)
			}
			b, err := bundle.Open(dir)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			c := chaintest.Open(t, b, chain.Options{})
			got, ref := run(t, c, b, tt.quick), want[tt.family]
			if tt.quick {
				ref = ref[2:]
			}
			for i := range got {
				if !slices.Equal(got[i], ref[i]) {
					t.Errorf("prompt %d: tokens %v, the documented form gives %v", i, got[i], ref[i])
				}
			}
			if tt.check != nil {
				tt.check(t, b, c)
			}
		})
	}
}

// TestFormsOpenAtRealGeometry: the checks above at E2B/E4B geometry,
// where shapes are real: every form opens and decodes.
func TestFormsOpenAtRealGeometry(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, tt := range []struct {
		family, preset string
		form           reference.Form
	}{
		{"v2", "e4b", reference.Form{Metadata: reference.MetaNone, V2StateRank4: true, V2NoStoreLayers: true}},
	} {
		dir, err := reference.Synthesize(reference.SynthOptions{Family: tt.family, Preset: tt.preset, Out: t.TempDir(), NoWeights: true, Form: tt.form})
		if err != nil {
			t.Fatal(err)
		}
		b, err := bundle.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		c, err := chain.Open(b, reference.NewNull(), chain.Options{})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.family, tt.preset, err)
		}
		if _, err := c.Prefill([]int{2, 3, 4}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Decode(5); err != nil {
			t.Fatal(err)
		}
		s, err := c.Snapshot()
		if err != nil {
			t.Fatalf("%s snapshot: %v", tt.family, err)
		}
		if err := c.Restore(s); err != nil {
			t.Fatalf("%s restore: %v", tt.family, err)
		}
		c.Close()
	}
}
