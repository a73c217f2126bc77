package coreml

import (
	"errors"
	"fmt"
	"sync"
)

// LoadFirst loads the first of functions that the model at path provides on
// this system, trying them in order: the way a family probes its batched
// prefill widths (prefill_b16, prefill_b8, prefill_b4). A function that
// fails with ErrFunctionUnavailable is skipped; any other error stops the
// search. When none loads, the error wraps ErrFunctionUnavailable and lists
// why each failed.
func LoadFirst(rt Runtime, path string, units ComputeUnits, functions ...string) (Model, string, error) {
	var errs []error
	for _, fn := range functions {
		m, err := rt.Load(path, LoadOptions{Function: fn, ComputeUnits: units})
		if err == nil {
			return m, fn, nil
		}
		if !errors.Is(err, ErrFunctionUnavailable) {
			return nil, "", err
		}
		errs = append(errs, err)
	}
	return nil, "", fmt.Errorf("coreml: none of the functions %q of %s loads: %w", functions, path, errors.Join(append([]error{ErrFunctionUnavailable}, errs...)...))
}

// Lazy is a model loaded on first use, for functions only some turns need
// (a prefill width, a verify head), as the published runtimes do. The
// outcome of the first load, model or error, is kept until Close.
type Lazy struct {
	rt   Runtime
	path string
	opts LoadOptions

	mu     sync.Mutex
	loaded bool
	m      Model
	err    error
}

// NewLazy returns a model that rt loads from path with o when first asked for.
func NewLazy(rt Runtime, path string, o LoadOptions) *Lazy {
	return &Lazy{rt: rt, path: path, opts: o}
}

// Model loads the model on the first call and returns the same result on
// every later one.
func (l *Lazy) Model() (Model, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.loaded {
		l.m, l.err = l.rt.Load(l.path, l.opts)
		l.loaded = true
	}
	return l.m, l.err
}

// Loaded reports whether a load was attempted.
func (l *Lazy) Loaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loaded
}

// Close closes a loaded model; a later Model call loads it again.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.m != nil {
		err = l.m.Close()
	}
	l.m, l.err, l.loaded = nil, nil, false
	return err
}

// Path is the model folder the Lazy loads.
func (l *Lazy) Path() string { return l.path }

// Options are the load options the Lazy uses.
func (l *Lazy) Options() LoadOptions { return l.opts }
