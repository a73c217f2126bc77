//go:build darwin && cgo

package darwin

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/orchard-llm/orchard/coreml"
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
	opts coreml.LoadOptions
	desc coreml.Description
	mem  *arena
	res  *modelResources
	obj  ml.Model

	// mu serializes predictions: Core ML does not document concurrent
	// synchronous predictions on one MLModel, and outputs are reused.
	mu       sync.Mutex
	closed   bool
	outputs  map[string]*output
	scratch  map[string]*buffer       // C copies of inputs that live in Go memory
	kept     map[string]ml.MultiArray // outputs kept for later calls (retained until the next Predict)
	plan     coreml.Plan
	meter    *coreml.Meter
	backings *coreml.Backings // which outputs Core ML takes a backing for
}

// buffer is model-owned C memory from the runtime's arena.
type buffer struct {
	p    unsafe.Pointer
	size int
}

// output is the reused destination of one output feature.
type output struct {
	buf buffer
	t   *coreml.Tensor // returned by every Predict, rewritten in place
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

func (m *model) Description() coreml.Description {
	return coreml.Description{Inputs: cloneSpecs(m.desc.Inputs), Outputs: cloneSpecs(m.desc.Outputs), States: cloneSpecs(m.desc.States)}
}

// Close releases the MLModel and every buffer of the model, including the
// memory of the tensors Predict returned. States made by the model stay
// valid until they are closed or collected.
func (m *model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.releaseKept()
	m.res.release()
	return nil
}

// releaseKept gives up the outputs the last prediction kept: they are valid
// only until this model's next Predict.
func (m *model) releaseKept() {
	for name, arr := range m.kept {
		objc.WithAutoreleasePool(arr.Release)
		delete(m.kept, name)
	}
}

func (m *model) errorf(op string, format string, args ...any) error {
	return &coreml.Error{Op: op, Path: m.path, Function: m.opts.Function, Err: fmt.Errorf(format, args...)}
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
func (m *model) inputPointer(name string, t *coreml.Tensor) (unsafe.Pointer, error) {
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
func (m *model) outputFor(name string, spec coreml.TensorSpec, n int) (*output, error) {
	o := m.outputs[name]
	if o == nil {
		o = &output{t: &coreml.Tensor{DType: spec.DType}}
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

func (m *model) NewState() (coreml.State, error) {
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

// Predict runs the model on in, and on st for stateful models, placing the
// outputs as o says (see Plan, shared with the reference runtime). Inputs
// from Alloc or from an earlier Predict are wrapped in place, kept outputs
// are passed as the very MLMultiArrays Core ML made, and others are copied
// to C memory first. Outputs go into the caller's tensors (Into), stay in
// Core ML memory (Keep), or land in the model's reused buffers, which are
// offered to Core ML as output backings when their shape is fixed. Every
// host copy is counted on the runtime's meter. Predictions on one model,
// and on one state, are serialized.
func (m *model) Predict(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer runtime.KeepAlive(in) // Alloc'd memory must outlive the prediction
	if m.closed {
		return nil, m.errorf("predict", "model is closed")
	}
	// Core ML validates the shapes itself; orchard never refuses a call on
	// a range's upper bound, whose reading from an NSRange is not certain.
	if err := m.desc.PrecheckInputs(in); err != nil {
		return nil, &coreml.Error{Op: "predict", Path: m.path, Function: m.opts.Function, Err: err}
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
	plan := func(b *coreml.Backings) error {
		if err := m.plan.Make(m.desc, in, o, m.mem, b, m); err != nil {
			return &coreml.Error{Op: "predict", Path: m.path, Function: m.opts.Function, Err: err}
		}
		return nil
	}
	var ptrs map[string]unsafe.Pointer // the inputs' memory, made once (backings do not change it)
	var out coreml.Features
	predict := func() error {
		if ptrs == nil {
			var err error
			if ptrs, err = m.inputPointers(in); err != nil {
				return &coreml.Error{Op: "predict", Path: m.path, Function: m.opts.Function, Err: err}
			}
		}
		return withPool(func() error {
			var err error
			out, err = m.predictOnce(in, o, ptrs, s)
			return err
		})
	}
	// Core ML checks backings when it predicts: a call refused with
	// backings runs again without, and only the refused output's backing
	// is given up (Backings).
	if err := m.plan.Run(m.backings, plan, predict); err != nil {
		return nil, asError(err, "predict", m.path, m.opts.Function)
	}
	return out, nil
}

// inputPointers returns the memory each planned input is wrapped over:
// its own when Core ML can wrap it, else a C copy (counted).
func (m *model) inputPointers(in coreml.Features) (map[string]unsafe.Pointer, error) {
	ptrs := make(map[string]unsafe.Pointer, len(in))
	for _, step := range m.plan.In {
		t := in[step.Name]
		switch step.How {
		case coreml.InPlace:
			ptrs[step.Name] = unsafe.Pointer(unsafe.SliceData(t.Data))
		case coreml.CopyIn:
			p, err := m.inputPointer(step.Name, t)
			if err != nil {
				return nil, err
			}
			m.meter.Add(len(t.Data))
			ptrs[step.Name] = p
		}
	}
	return ptrs, nil
}

// OutputBuffer is the model's reused buffer of an output (coreml.Reuser).
func (m *model) OutputBuffer(name string) []byte {
	if o := m.outputs[name]; o != nil && o.buf.p != nil {
		return bytesAt(o.buf.p, o.buf.size)
	}
	return nil
}

// stateFor checks that st belongs to this backend and fits this model.
func (m *model) stateFor(st coreml.State) (*state, error) {
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

// inputArray returns the MLMultiArray to feed for one planned input.
func (m *model) inputArray(name string, t *coreml.Tensor, p unsafe.Pointer) (ml.MultiArray, error) {
	if h := t.KeptHandle(); h != nil {
		arr, ok := h.(ml.MultiArray)
		if !ok || arr.IsNil() {
			return ml.MultiArray{}, fmt.Errorf("kept by another runtime")
		}
		if l := layoutOf(arr); !slices.Equal(l.shape, t.Shape) {
			return reshapeKept(arr, l, t.Shape)
		}
		return arr, nil
	}
	return wrapArray(p, len(t.Data), t.Shape, t.DType)
}

// reshapeKept presents a kept array under another shape of the same size (a
// view with more or fewer leading unit dimensions) over the same memory. The
// kept array stays retained by the model that made it for this call.
func reshapeKept(arr ml.MultiArray, l layout, shape []int) (ml.MultiArray, error) {
	if coreml.NumElements(shape) != coreml.NumElements(l.shape) || !slices.Equal(l.strides, contiguousStrides(l.shape)) {
		return ml.MultiArray{}, fmt.Errorf("cannot view a kept %v array (strides %v) as %v", l.shape, l.strides, shape)
	}
	dt, err := dtypeOf(l.raw)
	if err != nil {
		return ml.MultiArray{}, err
	}
	return wrapArray(objc.Call[unsafe.Pointer](arr, objc.Sel("dataPointer")), coreml.NumElements(l.shape)*dt.Size(), shape, dt)
}

// predictOnce runs one prediction inside the caller's pool.
func (m *model) predictOnce(in coreml.Features, o *coreml.Outputs, ptrs map[string]unsafe.Pointer, s *state) (coreml.Features, error) {
	dict := make(map[string]objc.IObject, len(in))
	for name, t := range in {
		arr, err := m.inputArray(name, t, ptrs[name])
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
	if err := m.bindBackings(in, o, opts, backings); err != nil {
		return nil, err
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

	m.releaseKept() // the previous call's kept outputs end here
	out := make(coreml.Features, len(m.desc.Outputs))
	for _, step := range m.plan.Out {
		spec := m.desc.Outputs[step.Name]
		fv := res.FeatureValueForName(step.Name)
		if fv.IsNil() {
			return nil, fmt.Errorf("output %s: missing from the prediction", step.Name)
		}
		arr := fv.MultiArrayValue()
		if arr.IsNil() {
			return nil, fmt.Errorf("output %s: not a multi-array", step.Name)
		}
		var t *coreml.Tensor
		var err error
		if b := backings[step.Name]; !b.IsNil() && arr.Ptr() != b.Ptr() {
			// Core ML wrote its own buffer: copy this output from now on.
			m.backings.Decline(step.Name)
		}
		switch {
		case step.How == coreml.Kept:
			arr.Retain() // past this pool, until the next Predict or Close
			m.kept[step.Name] = arr
			t = coreml.NewKept(layoutOf(arr).shape, spec.DType, arr)
		case step.Into:
			t, err = m.readInto(o.Into[step.Name], arr, backings[step.Name])
		default:
			t, err = m.readOutput(step.Name, spec, arr, backings[step.Name])
		}
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", step.Name, err)
		}
		out[step.Name] = t
	}
	return out, nil
}

// bindBackings offers Core ML the caller's destinations (Into) and the
// model's own buffers for fixed-shape outputs (MLPredictionOptions
// outputBackings), so results land in place, as the plan says. A buffer an
// input points into (an output fed back as this model's input) is not
// offered: Core ML could write it before reading the input.
func (m *model) bindBackings(in coreml.Features, o *coreml.Outputs, opts ml.PredictionOptions, backings map[string]ml.MultiArray) error {
	bind := make(map[string]objc.IObject)
	for _, step := range m.plan.Out {
		var p unsafe.Pointer
		var shape []int
		var n int
		spec := m.desc.Outputs[step.Name]
		switch step.How {
		case coreml.Backed:
			dst := o.Into[step.Name]
			p, shape, n = unsafe.Pointer(unsafe.SliceData(dst.Data)), dst.Shape, len(dst.Data)
		case coreml.Reused:
			need := coreml.NumElements(spec.Shape) * spec.DType.Size()
			out, err := m.outputFor(step.Name, spec, need)
			if err != nil {
				return err
			}
			if aliased(in, region{base: out.buf.p, size: out.buf.size}) {
				continue
			}
			p, shape, n = out.buf.p, spec.Shape, out.buf.size
		default:
			continue
		}
		arr, err := wrapArray(p, n, shape, spec.DType)
		if err != nil {
			return fmt.Errorf("output %s: %w", step.Name, err)
		}
		backings[step.Name] = arr
		bind[step.Name] = arr
	}
	if len(bind) > 0 {
		opts.SetOutputBackings(bind)
	}
	return nil
}

// readInto makes sure a Backed output is in its destination: nothing to do
// when Core ML wrote there, else a strided copy (counted).
func (m *model) readInto(dst *coreml.Tensor, arr, backing ml.MultiArray) (*coreml.Tensor, error) {
	if !backing.IsNil() && arr.Ptr() == backing.Ptr() {
		return dst, nil
	}
	l := layoutOf(arr)
	if coreml.NumElements(l.shape) != dst.Len() {
		return nil, fmt.Errorf("Core ML returned shape %v for a %v destination", l.shape, dst.Shape)
	}
	if err := readArray(arr, l, dst.Data, dst.DType); err != nil {
		return nil, err
	}
	m.meter.Add(len(dst.Data))
	return dst, nil
}

// readOutput moves one output into the model's reused tensor: nothing to do
// when Core ML wrote into the backing, else a strided copy.
func (m *model) readOutput(name string, spec coreml.TensorSpec, arr, backing ml.MultiArray) (*coreml.Tensor, error) {
	l := layoutOf(arr)
	n := coreml.NumElements(l.shape) * spec.DType.Size()
	o, err := m.outputFor(name, spec, n)
	if err != nil {
		return nil, err
	}
	if backing.IsNil() || arr.Ptr() != backing.Ptr() {
		if err := readArray(arr, l, bytesAt(o.buf.p, n), spec.DType); err != nil {
			return nil, err
		}
		m.meter.Add(n)
	}
	o.t.Shape = append(o.t.Shape[:0], l.shape...)
	o.t.DType = spec.DType
	o.t.Data = bytesAt(o.buf.p, n)
	return o.t, nil
}

// aliased reports whether any input shares memory with r.
func aliased(in coreml.Features, r region) bool {
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
