package darwin

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/coreml"
)

// TestCheckWrap: what initWithDataPointer would be given is refused before
// it can raise an exception: rank 0, a zero dimension, too little memory.
func TestCheckWrap(t *testing.T) {
	for _, tt := range []struct {
		shape []int
		n     int
		mem   bool
		err   string
	}{
		{[]int{1, 4}, 8, true, ""},
		{[]int{}, 2, true, "rank-0"},
		{nil, 4, true, "rank-0"},
		{[]int{2, 0}, 8, true, "dimension 1 is 0"},
		{[]int{2, 4}, 15, true, "spans 16 bytes"},
		{[]int{2, 4}, 16, false, "no memory"},
	} {
		err := checkWrap(tt.mem, tt.n, tt.shape, contiguousStrides(tt.shape), coreml.Float16)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("checkWrap(%v, %d bytes) = %v, want %q", tt.shape, tt.n, err, tt.err)
		}
	}
	if err := checkWrap(true, 64, []int{2, 4}, []int{4}, coreml.Float16); err == nil {
		t.Error("strides of another rank accepted")
	}
	if maxBytes(coreml.TensorSpec{DType: coreml.Float16}, 1<<20) != 0 {
		t.Error("a shapeless output got a preallocated buffer")
	}
}

// TestAwaitFunctions: a listing that never answers ends at the timeout
// with an error naming the model, classified as "cannot list here".
func TestAwaitFunctions(t *testing.T) {
	never := make(chan listed, 1)
	_, err := awaitFunctions(never, 20*time.Millisecond, "/models/chunk_1.mlmodelc")
	if !errors.Is(err, coreml.ErrFunctionsUnknown) || !strings.Contains(err.Error(), "/models/chunk_1.mlmodelc") {
		t.Fatalf("timeout: %v", err)
	}
	ok := make(chan listed, 1)
	ok <- listed{names: []string{"infer", "prefill_b8"}}
	if names, err := awaitFunctions(ok, time.Second, "x"); err != nil || len(names) != 2 {
		t.Fatalf("answer: %v %v", names, err)
	}
}

func TestNewCoreMLOffDarwin(t *testing.T) {
	rt, err := NewCoreML()
	if coreMLBuilt {
		if err != nil {
			t.Fatalf("NewCoreML: %v", err)
		}
		return
	}
	if rt != nil || !errors.Is(err, coreml.ErrUnavailable) {
		t.Errorf("NewCoreML() = %v, %v; want ErrUnavailable", rt, err)
	}
}
