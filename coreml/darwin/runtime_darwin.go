//go:build darwin && cgo

package darwin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/orchard-llm/orchard/coreml"
	ml "github.com/progrium/darwinkit/macos/coreml"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

// coreMLBuilt reports whether this build has the Core ML backend.
const coreMLBuilt = true

// coreMLRuntime runs compiled models with Apple Core ML through darwinkit.
type coreMLRuntime struct {
	mem   *arena
	meter coreml.Meter // bytes copied across the seam (coreml.CopyMeter)
	// functionsTimeout bounds Functions (0: FunctionsTimeout).
	functionsTimeout time.Duration
}

// CopiedBytes is the total the host has copied into and out of Core ML
// memory: inputs in Go memory, outputs Core ML did not write in place.
func (r *coreMLRuntime) CopiedBytes() int64 { return r.meter.CopiedBytes() }

// NewCoreML returns the Core ML backend. Models are loaded with
// MLModelConfiguration (compute units, and a function name on macOS 15) and
// predicted with MLMultiArrays over memory outside the Go heap.
func NewCoreML() (coreml.Runtime, error) {
	var ok bool
	objc.WithAutoreleasePool(func() {
		ok = objc.GetClass("MLModel").Ptr() != nil && objc.GetClass("MLMultiArray").Ptr() != nil
	})
	if !ok {
		return nil, fmt.Errorf("coreml: the Core ML framework did not load: %w", coreml.ErrUnavailable)
	}
	return &coreMLRuntime{mem: &arena{}}, nil
}

// Alloc returns a zeroed tensor in page-aligned memory outside the Go heap,
// which Predict wraps without copying. The memory is freed once the *Tensor
// is unreachable: keep the *Tensor, not only its Data, for as long as Data
// is used. Allocation failure panics, as it does for Go memory.
func (r *coreMLRuntime) Alloc(shape []int, dt coreml.DType) *coreml.Tensor {
	if dt.Size() == 0 || slices.ContainsFunc(shape, func(d int) bool { return d < 0 }) {
		panic(fmt.Sprintf("coreml: Alloc(%v, %s): invalid shape or dtype", shape, dt))
	}
	n := coreml.NumElements(shape) * dt.Size()
	p, err := r.mem.alloc(n)
	if err != nil {
		panic(err)
	}
	t := &coreml.Tensor{Shape: slices.Clone(shape), DType: dt, Data: bytesAt(p, n)}
	runtime.AddCleanup(t, r.mem.free, p)
	return t
}

// Load loads one function of a compiled model folder (.mlmodelc). A function
// that fails to load is reported as an *Error wrapping ErrFunctionUnavailable.
func (r *coreMLRuntime) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	path = filepath.Clean(path)
	fail := func(err error) error { return &coreml.Error{Op: "load", Path: path, Function: o.Function, Err: err} }
	units, err := mlComputeUnits(o.ComputeUnits)
	if err != nil {
		return nil, fail(err)
	}
	switch fi, err := os.Stat(path); {
	case err != nil:
		return nil, fail(err)
	case strings.EqualFold(filepath.Ext(path), ".mlpackage"):
		return nil, fail(fmt.Errorf("a .mlpackage must be compiled first (it will be cached as %s)", CompiledPath(path)))
	case !fi.IsDir():
		return nil, fail(errors.New("not a compiled model folder (.mlmodelc)"))
	}

	var obj ml.Model
	var desc coreml.Description
	err = withPool(func() error {
		cfg := ml.NewModelConfiguration()
		cfg.SetComputeUnits(ml.ComputeUnits(units))
		if o.Function != "" {
			sel := objc.Sel("setFunctionName:")
			if !cfg.RespondsToSelector(sel) { // before macOS 15 the call would abort the process
				return fail(fmt.Errorf("%w: choosing a model function needs macOS 15 or later", coreml.ErrFunctionUnavailable))
			}
			objc.Call[objc.Void](cfg, sel, o.Function)
		}
		var e foundation.Error
		m := ml.Model_ModelWithContentsOfURLConfigurationError(foundation.URL_FileURLWithPath(path), cfg, unsafe.Pointer(&e))
		if m.IsNil() {
			var sentinel error
			if o.Function != "" {
				sentinel = coreml.ErrFunctionUnavailable
			}
			return nsError("load", path, o.Function, e, sentinel)
		}
		d, err := describe(m)
		if err != nil {
			return fail(err)
		}
		m.Retain() // the model outlives this pool; Close releases it
		obj, desc = m, d
		return nil
	})
	if err != nil {
		return nil, asError(err, "load", path, o.Function)
	}
	m := &model{
		path:     path,
		opts:     o,
		desc:     desc,
		mem:      r.mem,
		res:      &modelResources{ref: objcRef{obj: obj.Object}, mem: r.mem},
		obj:      obj,
		outputs:  make(map[string]*output),
		backings: &coreml.Backings{},
		scratch:  make(map[string]*buffer),
		kept:     make(map[string]ml.MultiArray),
		meter:    &r.meter,
	}
	runtime.AddCleanup(m, (*modelResources).release, m.res)
	return m, nil
}

// Functions lists the functions of a compiled model without loading one,
// through MLModelAsset (macOS 15): an empty list for a single-function
// model. Before macOS 15 it returns ErrFunctionsUnknown and the engine
// learns which functions exist by loading them.
func (r *coreMLRuntime) Functions(path string) ([]string, error) {
	path = filepath.Clean(path)
	var names []string
	err := withPool(func() error {
		cls := objc.GetClass("MLModelAsset")
		sel := objc.Sel("modelAssetWithURL:error:")
		if cls.Ptr() == nil || !objc.ObjectFrom(cls.Ptr()).RespondsToSelector(sel) {
			return coreml.ErrFunctionsUnknown
		}
		var e foundation.Error
		asset := objc.Call[objc.Object](cls, sel, foundation.URL_FileURLWithPath(path), unsafe.Pointer(&e))
		if asset.IsNil() {
			return nsError("list functions", path, "", e, nil)
		}
		fsel := objc.Sel("functionNamesWithCompletionHandler:")
		if !asset.RespondsToSelector(fsel) {
			return coreml.ErrFunctionsUnknown
		}
		done := make(chan listed, 1) // buffered: a late answer must not block Core ML's queue
		objc.Call[objc.Void](asset, fsel, func(arr objc.Object, e foundation.Error) {
			var res listed // built here and sent whole: nothing is shared with a caller that gave up
			defer func() {
				if r := recover(); r != nil { // runs on a Core ML queue; a panic must not cross it
					res.err = fmt.Errorf("listing functions: %v", r)
				}
				done <- res
			}()
			if arr.IsNil() {
				res.err = nsError("list functions", path, "", e, nil)
				return
			}
			n := objc.Call[int](arr, objc.Sel("count"))
			for i := range n {
				item := objc.Call[objc.Object](arr, objc.Sel("objectAtIndex:"), i)
				res.names = append(res.names, objc.Call[string](item, objc.Sel("description")))
			}
		})
		var herr error
		names, herr = awaitFunctions(done, r.listTimeout(), path)
		return herr
	})
	if err != nil {
		if errors.Is(err, coreml.ErrFunctionsUnknown) {
			return nil, err
		}
		return nil, asError(err, "list functions", path, "")
	}
	return names, nil
}

// asError gives err the operation and model context of an *Error, unless
// it is one already.
func asError(err error, op, path, function string) error {
	if e, ok := err.(*coreml.Error); ok && e.Op != "" {
		return err
	}
	return &coreml.Error{Op: op, Path: path, Function: function, Err: err}
}

// listTimeout is how long Functions waits for Core ML's answer.
func (r *coreMLRuntime) listTimeout() time.Duration {
	if r.functionsTimeout > 0 {
		return r.functionsTimeout
	}
	return FunctionsTimeout
}
