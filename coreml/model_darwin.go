//go:build darwin && cgo

package coreml

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	ml "github.com/progrium/darwinkit/macos/coreml"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

// maxPrealloc caps the output buffer sized for the largest shape a flexible
// output can take; beyond it buffers grow on demand.
const maxPrealloc = 256 << 20

// model is one loaded function of one compiled chunk.
type model struct {
	path string
	opts LoadOptions
	desc Description
	mem  *arena
	res  *modelResources
	obj  ml.Model

	// mu serializes predictions: Core ML does not document concurrent
	// synchronous predictions on one MLModel, and outputs are reused.
	mu         sync.Mutex
	closed     bool
	outputs    map[string]*output
	scratch    map[string]*buffer // C copies of inputs that live in Go memory
	noBackings bool               // Core ML refused output backings once
}

// buffer is model-owned C memory from the runtime's arena.
type buffer struct {
	p    unsafe.Pointer
	size int
}

// output is the reused destination of one output feature.
type output struct {
	buf buffer
	t   *Tensor // returned by every Predict, rewritten in place
}

// modelResources is what a model must give back: its MLModel and its C
// buffers. It is released by Close, or by the GC if Close is never called.
type modelResources struct {
	once sync.Once
	ref  objcRef
	mem  *arena
	bufs []unsafe.Pointer
}

func (r *modelResources) release() {
	r.once.Do(func() {
		r.ref.release()
		for _, p := range r.bufs {
			r.mem.free(p)
		}
		r.bufs = nil
	})
}

func (m *model) Description() Description {
	return Description{Inputs: cloneSpecs(m.desc.Inputs), Outputs: cloneSpecs(m.desc.Outputs), States: cloneSpecs(m.desc.States)}
}

// Close releases the MLModel and every buffer of the model, including the
// memory of the tensors Predict returned. States made by the model stay
// valid until they are closed or collected.
func (m *model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.res.release()
	return nil
}

func (m *model) errorf(op string, format string, args ...any) error {
	return &Error{Op: op, Path: m.path, Function: m.opts.Function, Err: fmt.Errorf(format, args...)}
}

// grow makes b hold at least n bytes. Old memory is kept until Close when
// keep is set, because a returned tensor may still point into it.
func (m *model) grow(b *buffer, n int, keep bool) error {
	if b.p != nil && b.size >= n {
		return nil
	}
	p, err := m.mem.alloc(n)
	if err != nil {
		return err
	}
	if b.p != nil && !keep {
		m.res.bufs = slices.DeleteFunc(m.res.bufs, func(q unsafe.Pointer) bool { return q == b.p })
		m.mem.free(b.p)
	}
	m.res.bufs = append(m.res.bufs, p)
	*b = buffer{p: p, size: n}
	return nil
}

// inputPointer returns memory Core ML may keep a pointer to for t: its own
// data when it came from Alloc or an earlier output, else a C copy.
func (m *model) inputPointer(name string, t *Tensor) (unsafe.Pointer, error) {
	if m.mem.owns(t.Data) {
		return unsafe.Pointer(unsafe.SliceData(t.Data)), nil
	}
	b := m.scratch[name]
	if b == nil {
		b = &buffer{}
		m.scratch[name] = b
	}
	if err := m.grow(b, len(t.Data), false); err != nil {
		return nil, err
	}
	copy(bytesAt(b.p, len(t.Data)), t.Data)
	return b.p, nil
}

// outputFor returns the reused destination of output name, sized for n bytes.
func (m *model) outputFor(name string, spec TensorSpec, n int) (*output, error) {
	o := m.outputs[name]
	if o == nil {
		o = &output{t: &Tensor{DType: spec.DType}}
		m.outputs[name] = o
		if c := maxBytes(spec, maxPrealloc); c > n {
			n = c
		}
	}
	if err := m.grow(&o.buf, n, true); err != nil {
		return nil, err
	}
	return o, nil
}

func (m *model) NewState() (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, m.errorf("new state", "model is closed")
	}
	if len(m.desc.States) == 0 {
		return nil, m.errorf("new state", "model has no state")
	}
	var obj objc.Object
	err := withPool(func() error {
		sel := objc.Sel("newState")
		if !m.obj.RespondsToSelector(sel) {
			return errors.New("MLState needs macOS 15 or later")
		}
		obj = objc.Call[objc.Object](m.obj, sel) // new… family: owned (+1)
		if obj.IsNil() {
			return errors.New("newState returned nil")
		}
		return nil
	})
	if err != nil {
		return nil, asError(err, "new state", m.path, m.opts.Function)
	}
	s := &state{ref: &objcRef{obj: obj}, specs: cloneSpecs(m.desc.States), path: m.path, function: m.opts.Function}
	runtime.AddCleanup(s, (*objcRef).release, s.ref)
	return s, nil
}

// Predict runs the model on in, and on st for stateful models. Inputs from
// Alloc or from an earlier Predict are wrapped in place; others are copied
// to C memory first. Output tensors live in memory the model rewrites on its
// next Predict and frees on Close (or when the model is collected); they can
// be passed to another model's Predict without a copy. Stateless models
// offer Core ML their fixed-shape output buffers as output backings.
// Predictions on one model, and on one state, are serialized.
func (m *model) Predict(in Features, st State) (Features, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer runtime.KeepAlive(in) // Alloc'd memory must outlive the prediction
	if m.closed {
		return nil, m.errorf("predict", "model is closed")
	}
	if err := m.desc.CheckInputs(in); err != nil {
		return nil, &Error{Op: "predict", Path: m.path, Function: m.opts.Function, Err: err}
	}
	s, err := m.stateFor(st)
	if err != nil {
		return nil, err
	}
	if s != nil {
		s.mu.Lock() // predictions sharing an MLState must be serialized
		defer s.mu.Unlock()
		if s.closed {
			return nil, m.errorf("predict", "state is closed")
		}
	}
	ptrs := make(map[string]unsafe.Pointer, len(in))
	for name, t := range in {
		p, err := m.inputPointer(name, t)
		if err != nil {
			return nil, &Error{Op: "predict", Path: m.path, Function: m.opts.Function, Err: err}
		}
		ptrs[name] = p
	}

	backings := s == nil && !m.noBackings
	var out Features
	predict := func() error {
		var err error
		out, err = m.predictOnce(in, ptrs, s, backings)
		return err
	}
	err = withPool(predict)
	if err != nil && backings {
		// Core ML checks backings when it predicts. Retry without them; if
		// that works, stop offering them to this model.
		backings = false
		if err = withPool(predict); err == nil {
			m.noBackings = true
		}
	}
	if err != nil {
		return nil, asError(err, "predict", m.path, m.opts.Function)
	}
	return out, nil
}

// stateFor checks that st belongs to this backend and fits this model.
func (m *model) stateFor(st State) (*state, error) {
	if len(m.desc.States) == 0 {
		if st != nil {
			return nil, m.errorf("predict", "model is stateless, but a state was passed")
		}
		return nil, nil
	}
	if st == nil {
		return nil, m.errorf("predict", "model is stateful, but no state was passed (NewState)")
	}
	s, ok := st.(*state)
	if !ok {
		return nil, m.errorf("predict", "state %T was not made by the Core ML runtime", st)
	}
	if !equalSpecs(s.specs, m.desc.States) {
		return nil, m.errorf("predict", "state made by %s (function %q) does not fit this model's states", s.path, s.function)
	}
	return s, nil
}

// predictOnce runs one prediction inside the caller's pool.
func (m *model) predictOnce(in Features, ptrs map[string]unsafe.Pointer, s *state, useBackings bool) (Features, error) {
	dict := make(map[string]objc.IObject, len(in))
	for name, t := range in {
		arr, err := wrapArray(ptrs[name], t.Shape, t.DType)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", name, err)
		}
		fv := ml.FeatureValue_FeatureValueWithMultiArray(arr)
		if fv.IsNil() { // a nil dictionary value would raise an exception
			return nil, fmt.Errorf("input %s: no feature value", name)
		}
		dict[name] = fv
	}
	var e foundation.Error
	provider := ml.NewDictionaryFeatureProviderWithDictionaryError(dict, unsafe.Pointer(&e))
	if provider.IsNil() {
		return nil, nsError("predict", m.path, m.opts.Function, e, nil)
	}
	opts := ml.NewPredictionOptions()
	backings := make(map[string]ml.MultiArray)
	if useBackings {
		if err := m.bindBackings(in, opts, backings); err != nil {
			return nil, err
		}
	}

	var res ml.FeatureProviderObject
	if s != nil {
		res = objc.Call[ml.FeatureProviderObject](m.obj, objc.Sel("predictionFromFeatures:usingState:options:error:"),
			provider, s.ref.obj, opts, unsafe.Pointer(&e))
	} else {
		res = m.obj.PredictionFromFeaturesObjectOptionsError(provider, opts, unsafe.Pointer(&e))
	}
	if res.IsNil() {
		return nil, nsError("predict", m.path, m.opts.Function, e, nil)
	}

	out := make(Features, len(m.desc.Outputs))
	for name, spec := range m.desc.Outputs {
		fv := res.FeatureValueForName(name)
		if fv.IsNil() {
			return nil, fmt.Errorf("output %s: missing from the prediction", name)
		}
		arr := fv.MultiArrayValue()
		if arr.IsNil() {
			return nil, fmt.Errorf("output %s: not a multi-array", name)
		}
		t, err := m.readOutput(name, spec, arr, backings[name])
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// bindBackings offers Core ML the model's own buffers for fixed-shape
// outputs (MLPredictionOptions outputBackings), so results land in place.
// An output whose buffer an input points into is left unbound.
func (m *model) bindBackings(in Features, opts ml.PredictionOptions, backings map[string]ml.MultiArray) error {
	bind := make(map[string]objc.IObject)
	for name, spec := range m.desc.Outputs {
		if spec.Ranges != nil {
			continue
		}
		n := NumElements(spec.Shape) * spec.DType.Size()
		o, err := m.outputFor(name, spec, n)
		if err != nil {
			return err
		}
		if aliased(in, region{base: o.buf.p, size: o.buf.size}) {
			continue
		}
		arr, err := wrapArray(o.buf.p, spec.Shape, spec.DType)
		if err != nil {
			return fmt.Errorf("output %s: %w", name, err)
		}
		backings[name] = arr
		bind[name] = arr
	}
	if len(bind) > 0 {
		opts.SetOutputBackings(bind)
	}
	return nil
}

// readOutput moves one output into the model's reused tensor: nothing to do
// when Core ML wrote into the backing, else a strided copy.
func (m *model) readOutput(name string, spec TensorSpec, arr, backing ml.MultiArray) (*Tensor, error) {
	l := layoutOf(arr)
	n := NumElements(l.shape) * spec.DType.Size()
	o, err := m.outputFor(name, spec, n)
	if err != nil {
		return nil, err
	}
	if backing.IsNil() || arr.Ptr() != backing.Ptr() {
		if err := readArray(arr, l, bytesAt(o.buf.p, n), spec.DType); err != nil {
			return nil, err
		}
	}
	o.t.Shape = append(o.t.Shape[:0], l.shape...)
	o.t.DType = spec.DType
	o.t.Data = bytesAt(o.buf.p, n)
	return o.t, nil
}

// aliased reports whether any input shares memory with r.
func aliased(in Features, r region) bool {
	for _, t := range in {
		if len(t.Data) > 0 && overlaps(t.Data, r) {
			return true
		}
	}
	return false
}

// overlaps reports whether b shares any byte with r.
func overlaps(b []byte, r region) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(r.base)
	return p < base+uintptr(r.size) && base < p+uintptr(len(b))
}
