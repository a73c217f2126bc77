//go:build darwin && cgo

package darwin

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/orchard-llm/orchard/coreml"
	ml "github.com/progrium/darwinkit/macos/coreml"
	"github.com/progrium/darwinkit/objc"
)

// state is an MLState. It may be shared by the functions of one compiled
// model that declare the same states (infer and prefill_b8); predictions and
// buffer access on it are serialized by mu.
type state struct {
	mu     sync.Mutex
	closed bool
	ref    *objcRef
	specs  map[string]coreml.TensorSpec

	path, function string // the model that made it, for errors
}

// Close releases the MLState now instead of when the GC collects it; the
// buffers of a KV cache are large.
func (s *state) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.ref.release()
	return nil
}

func (s *state) errorf(op string, format string, args ...any) error {
	return &coreml.Error{Op: op, Path: s.path, Function: s.function, Err: fmt.Errorf(format, args...)}
}

func (s *state) spec(op, name string) (coreml.TensorSpec, error) {
	spec, ok := s.specs[name]
	if !ok { // an unknown name would raise an Objective-C exception
		return spec, s.errorf(op, "no state named %q (have %q)", name, slices.Sorted(maps.Keys(s.specs)))
	}
	return spec, nil
}

// Read returns a copy of the named state buffer.
func (s *state) Read(name string) (*coreml.Tensor, error) {
	spec, err := s.spec("read state", name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.errorf("read state", "state is closed")
	}
	t := coreml.NewTensor(spec.Shape, spec.DType)
	err = s.withBuffer(name, func(buf ml.MultiArray) error {
		l := layoutOf(buf)
		if !slices.Equal(l.shape, spec.Shape) {
			return fmt.Errorf("buffer shape %v, declared %v", l.shape, spec.Shape)
		}
		return readArray(buf, l, t.Data, t.DType)
	})
	if err != nil {
		return nil, asError(err, "read state "+name, s.path, s.function)
	}
	return t, nil
}

// Write replaces the named state buffer with t, which must have its shape
// and dtype.
func (s *state) Write(name string, t *coreml.Tensor) error {
	spec, err := s.spec("write state", name)
	if err != nil {
		return err
	}
	if err := spec.Check(name, t); err != nil {
		return s.errorf("write state", "%w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.errorf("write state", "state is closed")
	}
	err = s.withBuffer(name, func(buf ml.MultiArray) error {
		return writeArray(buf, t.Shape, t.Data, t.DType)
	})
	if err != nil {
		return asError(err, "write state "+name, s.path, s.function)
	}
	return nil
}

// withBuffer runs fn on the named state buffer
// (getMultiArrayForStateNamed:handler:), which is valid only during fn.
func (s *state) withBuffer(name string, fn func(ml.MultiArray) error) error {
	return withPool(func() error {
		var err error
		called := false
		objc.Call[objc.Void](s.ref.obj, objc.Sel("getMultiArrayForStateNamed:handler:"), name, func(buf ml.MultiArray) {
			called = true
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("state %s: %v", name, r)
				}
			}()
			err = fn(buf)
		})
		if !called && err == nil {
			err = errors.New("getMultiArrayForStateNamed:handler: did not call its handler")
		}
		return err
	})
}
