package engine

import (
	"slices"
	"testing"
)

// TestDeltaAfterChangesNeither: merging deltas makes a new one; the two
// merged are unchanged, though they share backing arrays with room to
// grow, since a sent Delta may be kept or seen by several consumers.
func TestDeltaAfterChangesNeither(t *testing.T) {
	rec := make([]int, 2, 8) // a turn's record, with spare capacity
	rec[0], rec[1] = 1, 2
	draft := make([]bool, 2, 8)
	a := &Delta{Text: "ab", Tokens: rec[:1], FromDraft: draft[:1], Live: Live{Generated: 1}}
	b := &Delta{Text: "c", Tokens: rec[1:2], FromDraft: draft[1:2], Live: Live{Generated: 2}}
	m := b.After(a)
	if m.Text != "abc" || !slices.Equal(m.Tokens, []int{1, 2}) || len(m.FromDraft) != 2 || m.Live.Generated != 2 {
		t.Fatalf("merged %+v", m)
	}
	m.Tokens[0], m.FromDraft[0] = 9, true
	if a.Text != "ab" || a.Tokens[0] != 1 || len(a.Tokens) != 1 || a.FromDraft[0] || b.Text != "c" || rec[1] != 2 {
		t.Errorf("a merge changed what it merged: a %+v, b %+v, record %v", a, b, rec)
	}
}
