package chain

import (
	"fmt"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
)

func TestReshaped(t *testing.T) {
	fixed := coreml.TensorSpec{DType: coreml.Float16, Shape: []int{1, 1, 64}}
	ranged := coreml.TensorSpec{DType: coreml.Float16, Shape: []int{1, 1, 64}, Ranges: [][2]int{{1, 1}, {1, 16}, {64, 64}}}
	cases := []struct {
		spec coreml.TensorSpec
		have []int
		want string
		ok   bool
	}{
		{fixed, []int{64}, "[1 1 64]", true},
		{fixed, []int{1, 1, 1, 64}, "[1 1 64]", true},
		{fixed, []int{2, 64}, "", false},
		{ranged, []int{5, 64}, "[1 5 64]", true},
		{ranged, []int{17, 64}, "", false},
		{coreml.TensorSpec{DType: coreml.Float16, Shape: []int{2, 64}}, []int{64}, "", false}, // a 2 cannot be added
	}
	for i, c := range cases {
		got, ok := reshaped(c.spec, c.have)
		if ok != c.ok || ok && fmt.Sprint(got) != c.want {
			t.Errorf("case %d: %v %v, want %s %v", i, got, ok, c.want, c.ok)
		}
	}
}
