package chain_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestVerifyEqualsDecode: verifying the true continuation returns exactly
// the tokens sequential decoding produces, and a draft with an error is
// accepted up to the error, after which a rewind and decode continue as
// if no speculation had happened.
func TestVerifyEqualsDecode(t *testing.T) {
	for _, fam := range []string{"r1", "v2"} {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			c := chaintest.Open(t, b, chain.Options{})
			width := c.Capabilities().MaxVerify()
			all := chaintest.Prompts(b.Geometry.Vocab)
			for i, p := range [][]int{all[0], all[4], all[6]} {
				c.Reset()
				want := chaintest.Greedy(t, c, p, 24) // want[k] = k-th generated token
				for _, S := range []int{2, width} {
					for _, base := range []int{0, 5, 22 - S} {
						// Feed prompt + want[:base], then verify want[base:base+S].
						c.Reset()
						if _, err := c.Prefill(append(append([]int{}, p...), want[:base]...)); err != nil {
							t.Fatal(err)
						}
						pos := c.Position()
						got, err := c.Verify(want[base : base+S])
						if err != nil {
							t.Fatal(err)
						}
						if fmt.Sprint(got) != fmt.Sprint(want[base+1:base+S+1]) {
							t.Fatalf("prompt %d, S=%d at %d: verify %v, decode %v", i, S, base, got, want[base+1:base+S+1])
						}
						if c.Position() != pos+S {
							t.Fatalf("position %d after verifying %d at %d", c.Position(), S, pos)
						}
						// A wrong draft at row 1: only row 0's target is valid;
						// rewind to keep one token and decode on.
						bad := append([]int{}, want[base:base+S]...)
						bad[1] = (bad[1] + 1) % b.Geometry.Vocab
						if err := c.Rewind(pos); err != nil {
							t.Fatal(err)
						}
						got, err = c.Verify(bad)
						if err != nil {
							t.Fatal(err)
						}
						if got[0] != want[base+1] {
							t.Fatalf("row 0 target %d, want %d", got[0], want[base+1])
						}
						if err := c.Rewind(pos + 1); err != nil {
							t.Fatal(err)
						}
						next, err := c.Decode(want[base+1])
						if err != nil {
							t.Fatal(err)
						}
						if next != want[base+2] {
							t.Fatalf("after a rejected draft: decode %d, want %d", next, want[base+2])
						}
					}
				}
			}
		})
	}
}

// TestVerifyRefused: families without a verify function say so.
func TestVerifyRefused(t *testing.T) {
	b := testbundle.Tiny(t, "stateful3")
	c := chaintest.Open(t, b, chain.Options{})
	if _, err := c.Prefill([]int{2, 10, 11}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Verify([]int{1, 2}); !errors.Is(err, chain.ErrNoVerify) {
		t.Fatalf("stateful3 verify: %v, want ErrNoVerify", err)
	}
	if len(c.Capabilities().VerifyWidths) != 0 {
		t.Fatal("stateful3 claims verify widths")
	}
}

// TestRewindRedecode: rewinding and decoding again reproduces the first
// run, on every family, as far back as the cache allows.
func TestRewindRedecode(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			W := b.Geometry.SlidingWindow
			c := chaintest.Open(t, b, chain.Options{})
			for _, p := range [][]int{chaintest.Prompts(b.Geometry.Vocab)[1], chaintest.Prompts(b.Geometry.Vocab)[5]} {
				c.Reset()
				gen := chaintest.Greedy(t, c, p, 30) // position = len(p)+29
				end := c.Position()
				for _, back := range []int{1, 3, 9, 20} {
					target := end - back
					err := c.Rewind(target)
					if fam == "stateful3" || fam == "stateful3-logits" {
						if end > W && back > 1 {
							if !errors.Is(err, chain.ErrRewindRing) {
								t.Fatalf("rewind %d→%d past the wrapped ring: %v", end, target, err)
							}
							continue
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					// Position target holds gen[k] with k = target-len(p)+... :
					// the token fed at position q ≥ len(p) is gen[q-len(p)].
					k := target - len(p)
					if k < 0 {
						t.Fatalf("test rewinds into the prompt")
					}
					next := gen[k]
					for q := target; q < end; q++ {
						var err error
						if next, err = c.Decode(next); err != nil {
							t.Fatal(err)
						}
						if next != gen[q-len(p)+1] {
							t.Fatalf("rewind %d→%d: at %d got %d, want %d", end, target, q, next, gen[q-len(p)+1])
						}
					}
				}
			}
		})
	}
}

// TestContextFull: a call past the context fails with ErrContextFull and
// leaves the position unchanged.
func TestContextFull(t *testing.T) {
	for _, fam := range testbundle.Families() {
		b := testbundle.Tiny(t, fam)
		c := chaintest.Open(t, b, chain.Options{})
		ctx := c.Capabilities().Context
		long := make([]int, ctx+1)
		for i := range long {
			long[i] = 5 + i%100
		}
		if _, err := c.Prefill(long); !errors.Is(err, chain.ErrContextFull) {
			t.Fatalf("%s: prefill of %d: %v", fam, len(long), err)
		}
		if c.Position() != 0 {
			t.Fatalf("%s: position %d after a refused prefill", fam, c.Position())
		}
		if _, err := c.Prefill(long[:ctx]); err != nil {
			t.Fatalf("%s: prefill of exactly the context: %v", fam, err)
		}
		if _, err := c.Decode(7); !errors.Is(err, chain.ErrContextFull) {
			t.Fatalf("%s: decode at the end: %v", fam, err)
		}
	}
}
