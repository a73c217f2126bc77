package engine

import (
	"fmt"
	"testing"
)

func TestPromptLookup(t *testing.T) {
	cases := []struct {
		ctx        []int
		last, max  int
		minN, maxN int
		want       []int
	}{
		{[]int{1, 2, 3, 4, 5, 1, 2}, 3, 3, 2, 3, []int{4, 5, 1}}, // 3-gram 1 2 3 → 4 5 1
		{[]int{9, 1, 2, 7, 1, 2, 8, 1}, 2, 2, 2, 3, []int{8, 1}}, // most recent earlier match wins
		{[]int{5, 6, 7}, 8, 4, 2, 3, nil},                        // no match
		{[]int{1, 1, 1}, 1, 4, 2, 3, []int{1}},                   // overlapping match, bounded by the sequence
		{[]int{1, 2, 3, 9, 9, 2, 3}, 4, 3, 3, 3, nil},            // only 3-grams: "2 3 4" absent
		{[]int{4, 2, 3, 9, 2, 3}, 9, 5, 1, 1, []int{2, 3, 9}},    // 1-gram, copies up to the end
	}
	for i, c := range cases {
		got := PromptLookup{MinN: c.minN, MaxN: c.maxN}.Draft(nil, c.ctx, c.last, c.max)
		if fmt.Sprint(got) != fmt.Sprint(c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

// BenchmarkPromptLookup drafts at a full 2,048-token context with no
// match (the worst case: a full backwards scan for each n). Target < 5 µs.
func BenchmarkPromptLookup(b *testing.B) {
	ctx := make([]int, 2047)
	for i := range ctx {
		ctx[i] = i % 1000
	}
	dst := make([]int, 0, 16)
	d := PromptLookup{MinN: 2, MaxN: 3}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		dst = d.Draft(dst[:0], ctx, 5000, 8)
	}
}
