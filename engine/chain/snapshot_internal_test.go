package chain

import (
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
)

// TestSnapshotAxis: the context axis of a state is found from its shape.
func TestSnapshotAxis(t *testing.T) {
	for _, tt := range []struct {
		shape []int
		ctx   int
		want  int
	}{
		{[]int{2, 2048, 256}, 2048, 1},
		{[]int{1, 2, 2048, 256}, 2048, 2},
		{[]int{2, 512, 512}, 512, -1}, // the context equals another dimension: whole buffer
		{[]int{2, 4096, 256}, 2048, -1},
	} {
		if got := cacheAxis(tt.shape, tt.ctx); got != tt.want {
			t.Errorf("cacheAxis(%v, %d) = %d, want %d", tt.shape, tt.ctx, got, tt.want)
		}
	}
	tensor := coreml.NewTensor([]int{1, 2, 8, 4}, coreml.Float16)
	if _, err := prefixAlong(tensor, 2, 9); err == nil {
		t.Error("prefixAlong took 9 rows of 8")
	}
	if _, err := prefixAlong(tensor, 4, 1); err == nil {
		t.Error("prefixAlong used axis 4 of a rank-4 tensor")
	}
	b, err := prefixAlong(tensor, 2, 3)
	if err != nil || !slices.Equal(b.Shape, []int{1, 2, 3, 4}) || len(b.Data) != 2*3*4*2 {
		t.Errorf("prefixAlong: %v %v %d bytes", err, b.Shape, len(b.Data))
	}
}
