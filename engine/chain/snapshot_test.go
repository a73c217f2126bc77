package chain_test

import (
	"fmt"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestSnapshotRestoreContinues: restoring a snapshot into a fresh chain
// continues byte-identically to an uninterrupted run, on every family,
// including after the sliding window has wrapped.
func TestSnapshotRestoreContinues(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			for _, p := range [][]int{chaintest.Prompts(b.Geometry.Vocab)[2], chaintest.Prompts(b.Geometry.Vocab)[6]} { // 8 and 41 tokens (W = 16)
				a := chaintest.Open(t, b, chain.Options{})
				want := chaintest.Greedy(t, a, p, 40)
				// Interrupted run: 20 tokens, snapshot, restore elsewhere, 20 more.
				c1 := chaintest.Open(t, b, chain.Options{})
				first := chaintest.Greedy(t, c1, p, 20)
				snap, err := c1.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				if snap.Position != len(p)+19 {
					t.Fatalf("snapshot at %d, want %d", snap.Position, len(p)+19)
				}
				c2 := chaintest.Open(t, b, chain.Options{})
				if _, err := c2.Prefill([]int{2, 3, 4}); err != nil { // something to overwrite
					t.Fatal(err)
				}
				if err := c2.Restore(snap); err != nil {
					t.Fatal(err)
				}
				got := append([]int{}, first...)
				next := first[len(first)-1]
				for len(got) < 40 {
					if next, err = c2.Decode(next); err != nil {
						t.Fatal(err)
					}
					got = append(got, next)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("prompt of %d: restored run\n%v\nwant\n%v", len(p), got, want)
				}
			}
		})
	}
}

func TestRestoreRefusesForeignState(t *testing.T) {
	r1 := chaintest.Open(t, testbundle.Tiny(t, "r1"), chain.Options{})
	v2 := chaintest.Open(t, testbundle.Tiny(t, "v2"), chain.Options{})
	if _, err := v2.Prefill([]int{2, 9, 10}); err != nil {
		t.Fatal(err)
	}
	snap, _ := v2.Snapshot()
	if err := r1.Restore(snap); err == nil {
		t.Fatal("an r1 chain accepted a v2 cache state")
	}
	snap.Buffers = snap.Buffers[1:]
	if err := v2.Restore(snap); err == nil {
		t.Fatal("a cache state missing a buffer was accepted")
	}
	if v2.Position() != 3 {
		t.Fatalf("a refused restore changed the chain: position %d, want 3", v2.Position())
	}
}
