package chain_test

import (
	"os"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

// hostCases run on reference.NewNull: contracts without weights, zero
// outputs; with it a chain measures only orchard's own work between graph
// calls and the bytes it makes the host copy across the seam.
var hostCases = []struct{ name, family, preset string }{
	{"r1-e2b", "r1", "e2b"}, {"v2-e4b", "v2", "e4b"}, {"stateful3-e2b", "stateful3", "e2b"},
}

// BenchmarkHostOverhead is everything orchard does per decoded token
// between graph calls — embedding and PLE dequant, masks, RoPE rows, KV
// hand-over, feature plumbing — at real E2B/E4B geometry with a null
// runtime, and copied-B/token, the bytes the host copies across the seam
// per token under the plans the Core ML backend executes. Targets: under
// 100 µs, zero allocations and at most 1 MiB copied per token.
func BenchmarkHostOverhead(b *testing.B) {
	for _, c := range hostCases {
		b.Run(c.name, func(b *testing.B) {
			bd := testbundle.Shape(b, c.family, c.preset)
			rt := reference.NewNull()
			ch, err := chain.Open(bd, rt, chain.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer ch.Close()
			if _, err := ch.Prefill([]int{2, 3}); err != nil {
				b.Fatal(err)
			}
			ctx := ch.Capabilities().Context
			var copied int64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if ch.Position() >= ctx-1 {
					b.StopTimer()
					ch.Reset()
					ch.Prefill([]int{2, 3})
					b.StartTimer()
				}
				before := rt.CopiedBytes()
				if _, err := ch.Decode(5 + i%400); err != nil {
					b.Fatal(err)
				}
				copied += rt.CopiedBytes() - before
			}
			b.ReportMetric(float64(copied)/float64(b.N), "copied-B/token")
		})
	}
}

// TestHostPathAllocatesNothing: a decode step of every family allocates
// nothing on orchard's side once warm.
func TestHostPathAllocatesNothing(t *testing.T) {
	if os.Getenv("ORCHARD_SKIP_SHAPE") != "" {
		t.Skip("ORCHARD_SKIP_SHAPE set")
	}
	for _, c := range hostCases {
		bd := testbundle.Shape(t, c.family, c.preset)
		ch, err := chain.Open(bd, reference.NewNull(), chain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Prefill([]int{2, 3}); err != nil {
			t.Fatal(err)
		}
		i := 0
		allocs := testing.AllocsPerRun(50, func() {
			i++
			if _, err := ch.Decode(5 + i); err != nil {
				t.Fatal(err)
			}
		})
		ch.Close()
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per decoded token", c.name, allocs)
		}
	}
}

// TestHostPathCopiesLittle: under the plans the Core ML backend executes, a
// decoded token makes the host copy at most 1 MiB across the seam in every
// family (r1 once copied its whole 36 MB cache back every token).
func TestHostPathCopiesLittle(t *testing.T) {
	if os.Getenv("ORCHARD_SKIP_SHAPE") != "" {
		t.Skip("ORCHARD_SKIP_SHAPE set")
	}
	for _, c := range hostCases {
		bd := testbundle.Shape(t, c.family, c.preset)
		rt := reference.NewNull()
		ch, err := chain.Open(bd, rt, chain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Prefill([]int{2, 3}); err != nil {
			t.Fatal(err)
		}
		const steps = 8
		before := rt.CopiedBytes()
		for i := range steps {
			if _, err := ch.Decode(5 + i); err != nil {
				t.Fatal(err)
			}
		}
		ch.Close()
		if per := (rt.CopiedBytes() - before) / steps; per > 1<<20 {
			t.Errorf("%s: %d bytes copied across the seam per decoded token, want ≤ 1 MiB", c.name, per)
		}
	}
}
