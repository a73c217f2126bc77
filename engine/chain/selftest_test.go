package chain_test

import (
	"errors"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

func TestFirstDiff(t *testing.T) {
	if d := chain.FirstDiff([]int{1, 2, 3}, []int{1, 9, 3}); d != "token 1 is 9, want 2" {
		t.Fatal(d)
	}
	if d := chain.FirstDiff([]int{1, 2}, []int{1}); d == "" {
		t.Fatal("a shorter run passed")
	}
}

// TestVerdict: a check's verdict comes from what it returns — a Skip is a
// skip whatever its words, a difference is a failure even when it reads
// like a skip.
func TestVerdict(t *testing.T) {
	for _, tt := range []struct {
		name       string
		diff       string
		err        error
		pass, skip bool
		detail     string
	}{
		{"pass", "", nil, true, false, ""},
		{"difference", "token 3 is 9, want 2", nil, false, false, "token 3 is 9, want 2"},
		{"difference reading like a skip", "skip: no", nil, false, false, "skip: no"},
		{"skip", "", chain.Skip{Why: "not for this family"}, true, true, "not for this family"},
		{"wrapped skip", "", errors.Join(errors.New("context"), chain.Skip{Why: "macOS only"}), true, true, "macOS only"},
		{"error", "", errors.New("load failed"), false, false, "load failed"},
	} {
		g := chain.Check{Name: tt.name, Run: func() (string, error) { return tt.diff, tt.err }}.Verdict()
		if g.Name != tt.name || g.Pass != tt.pass || g.Skip != tt.skip || g.Detail != tt.detail {
			t.Errorf("%s: %+v", tt.name, g)
		}
	}
}

// TestChecksPassOnEveryFamily: the chain's own gates pass against its
// reference replies, in order, with a progress line each.
func TestChecksPassOnEveryFamily(t *testing.T) {
	for _, fam := range testbundle.Families() {
		b := testbundle.Tiny(t, fam)
		open := func(o chain.Options) (chain.Chain, error) { return chain.Open(b, reference.New(), o) }
		base := chaintest.Open(t, b, chain.Options{})
		prompts := chaintest.Prompts(b.Geometry.Vocab)[2:6]
		ref, err := chain.NewReference(base, prompts, 16)
		if err != nil {
			t.Fatal(err)
		}
		if ref.Decoded != 15*len(prompts) || ref.CopiedBytes < 0 {
			t.Errorf("%s: the reference metered %d decoded tokens, %d bytes", fam, ref.Decoded, ref.CopiedBytes)
		}
		var lines []string
		gates := chain.RunChecks(chain.Checks(base, open, ref), func(s string) { lines = append(lines, s) }, nil)
		if len(gates) != 3 || len(lines) != 3 || lines[2] != "gate 3 of 3: checkpoint restore == uninterrupted…" {
			t.Fatalf("%s: %d gates, progress %q", fam, len(gates), lines)
		}
		for _, g := range gates {
			if !g.Pass || g.Skip {
				t.Errorf("%s: %s: %s", fam, g.Name, g.Detail)
			}
		}
	}
}

// brokenRewind ignores rewinds, as a buggy backend might.
type brokenRewind struct{ chain.Chain }

func (brokenRewind) Rewind(int) error { return nil }

func TestChecksCatchABrokenRewind(t *testing.T) {
	b := testbundle.Tiny(t, "v2")
	open := func(o chain.Options) (chain.Chain, error) {
		c, err := chain.Open(b, reference.New(), o)
		return brokenRewind{c}, err
	}
	base, err := open(chain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	ref, err := chain.NewReference(base, chaintest.Prompts(b.Geometry.Vocab)[2:4], 16)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, g := range chain.RunChecks(chain.Checks(base, open, ref), nil, nil) {
		failed[g.Name] = !g.Pass
	}
	if !failed["rewind == fresh"] || failed["batched prefill == token by token"] {
		t.Fatalf("verdicts: %v", failed)
	}
}

// TestRopeCheckSkips: off macOS, or on families that take RoPE rows from
// a table, the RoPE gate is a skip that says why.
func TestRopeCheckSkips(t *testing.T) {
	g := chain.RopeCheck(testbundle.Tiny(t, "r1")).Verdict()
	if !g.Pass || !g.Skip || g.Detail != "only v2 computes RoPE with float32 cosf/sinf" {
		t.Fatalf("%+v", g)
	}
}
