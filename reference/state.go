package reference

import (
	"fmt"
	"slices"

	"github.com/orchard-llm/orchard/coreml"
)

// state is a model's MLState twin: named, zero-initialised fp16 buffers
// (Core ML zero-fills new states; a NaN in a masked slot would still
// poison attention through 0·NaN).
type state struct {
	bufs map[string]*coreml.Tensor
}

func newState(specs map[string]coreml.TensorSpec) *state {
	s := &state{bufs: map[string]*coreml.Tensor{}}
	for name, sp := range specs {
		s.bufs[name] = coreml.NewTensor(sp.Shape, sp.DType)
	}
	return s
}

// Read returns a copy of the named buffer.
func (s *state) Read(name string) (*coreml.Tensor, error) {
	t, ok := s.bufs[name]
	if !ok {
		return nil, fmt.Errorf("state has no buffer %q", name)
	}
	return &coreml.Tensor{Shape: slices.Clone(t.Shape), DType: t.DType, Data: slices.Clone(t.Data)}, nil
}

// Write replaces the named buffer's contents; shape and dtype must match.
func (s *state) Write(name string, t *coreml.Tensor) error {
	dst, ok := s.bufs[name]
	if !ok {
		return fmt.Errorf("state has no buffer %q", name)
	}
	if err := (coreml.TensorSpec{DType: dst.DType, Shape: dst.Shape}).Check(name, t); err != nil {
		return fmt.Errorf("state write: %w", err)
	}
	copy(dst.Data, t.Data)
	return nil
}

// stateOf checks that st is a state made by this runtime with every buffer
// the model declares.
func stateOf(st coreml.State, specs map[string]coreml.TensorSpec) (*state, error) {
	s, ok := st.(*state)
	if !ok || s == nil {
		return nil, fmt.Errorf("stateful model called without a state from its NewState")
	}
	for name := range specs {
		if _, ok := s.bufs[name]; !ok {
			return nil, fmt.Errorf("state lacks buffer %q (made by another model?)", name)
		}
	}
	return s, nil
}

// Close releases nothing: the buffers are Go memory.
func (s *state) Close() error { return nil }
