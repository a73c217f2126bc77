package reference

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
	"github.com/orchard-llm/orchard/safetensors"
)

// Runtime implements coreml.Runtime over twin folders. Weights are loaded
// once per folder and shared by every function loaded from it, as Core ML
// shares one weight file between a multifunction model's functions.
type Runtime struct {
	mu      sync.Mutex
	weights map[string]*Model
	mem     coreml.HeapMemory // what Alloc and the models' outputs hand out
	meter   coreml.Meter      // bytes the Core ML backend would copy under the same plans
	null    bool              // NewNull: contracts only, no weights, no compute
}

// New returns a reference runtime.
func New() *Runtime { return &Runtime{weights: map[string]*Model{}} }

// Alloc returns a zeroed Go-heap tensor (no cgo rules apply here), which
// the runtime's plans treat as backend memory, as Core ML treats its arena.
func (r *Runtime) Alloc(shape []int, dt coreml.DType) *coreml.Tensor {
	return r.mem.Alloc(shape, dt)
}

// CopiedBytes is what the Core ML backend would have copied across the seam
// so far under the same plans (coreml.CopyMeter).
func (r *Runtime) CopiedBytes() int64 { return r.meter.CopiedBytes() }

// Functions lists a twin folder's functions the way Core ML's MLModelAsset
// does: an empty list for a single-function model (coreml.FunctionLister).
func (r *Runtime) Functions(path string) ([]string, error) {
	t, err := ReadTwin(path)
	if err != nil {
		return nil, err
	}
	if len(t.Functions) == 1 {
		return nil, nil
	}
	return t.FunctionNames(), nil
}

// Load opens one function of a twin folder.
func (r *Runtime) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	t, err := ReadTwin(path)
	if err != nil {
		return nil, err
	}
	name := o.Function
	if name == "" {
		name = t.DefaultFunction
	}
	fn, ok := t.Functions[name]
	if !ok {
		return nil, fmt.Errorf("reference model %s: no function %q (has %v): %w", path, name, t.FunctionNames(), ErrNoFunction)
	}
	if t.Kind == KindVision || t.Kind == KindAudio {
		if r.null {
			return newModel(r, newNullKernel(encoderDescription(t.Kind, *t.Encoder)), t), nil
		}
		k, err := newEncoder(t)
		if err != nil {
			return nil, fmt.Errorf("reference model %s: %w", path, err)
		}
		return newModel(r, k, t), nil
	}
	if r.null {
		d, err := describeKernel(t, name)
		if err != nil {
			return nil, fmt.Errorf("reference model %s: %w", path, err)
		}
		return newModel(r, newNullKernel(d), t), nil
	}
	m, err := r.model(path, t)
	if err != nil {
		return nil, err
	}
	var k kernel
	switch t.Kind {
	case KindR1Chunk:
		k, err = newR1Chunk(m, t, fn)
	case KindR1Head, KindV2Head:
		k = newHead(m, t, fn)
	case KindV2Chunk:
		k = newV2Chunk(m, t, fn)
	case KindS3Chunk1, KindS3Chunk2, KindS3Chunk3:
		k, err = newS3Chunk(m, t, fn)
	default:
		return nil, fmt.Errorf("reference model %s: unknown kind %q", path, t.Kind)
	}
	if err != nil {
		return nil, err
	}
	return newModel(r, k, t), nil
}

// ErrNoFunction marks a function the model does not have; the engine
// treats it as a missing capability, as it treats a Core ML load failure.
var ErrNoFunction = fmt.Errorf("reference: %w", coreml.ErrFunctionUnavailable)

func (r *Runtime) model(path string, t *Twin) (*Model, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.weights[path]; ok {
		return m, nil
	}
	w, err := LoadWeights(filepath.Join(path, t.Weights), &t.Geometry, t.Layers[0], t.Layers[1])
	if err != nil {
		return nil, err
	}
	m := NewModel(t.Geometry, w)
	r.weights[path] = m
	return m, nil
}

// LoadWeights reads layers [a, b) and whatever model-level tensors the file
// holds from a safetensors file with Hugging Face Gemma 4 names.
func LoadWeights(path string, g *Geometry, a, b int) (*Weights, error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	get := func(name string, shape []int, dst *[]float32, optional bool) error {
		if _, ok := f.Tensors[name]; !ok {
			if optional {
				return nil
			}
			return fmt.Errorf("weights %s: tensor %s missing", path, name)
		}
		v, sh, err := f.Float32(name)
		if err != nil {
			return fmt.Errorf("weights %s: %w", path, err)
		}
		if coreml.NumElements(sh) != coreml.NumElements(shape) || len(sh) != len(shape) {
			return fmt.Errorf("weights %s: tensor %s has shape %v, want %v", path, name, sh, shape)
		}
		*dst = v
		return nil
	}
	w := &Weights{Layers: make([]*LayerWeights, g.Layers)}
	for _, t := range g.modelTensors(w) {
		if err := get(t.name, t.shape, t.ptr, true); err != nil {
			return nil, err
		}
	}
	for l := a; l < b; l++ {
		lw := &LayerWeights{}
		for _, t := range g.layerTensors(l, lw) {
			if err := get(t.name, t.shape, t.ptr, false); err != nil {
				return nil, err
			}
		}
		var s []float32
		if err := get(scalarName(l), []int{1}, &s, false); err != nil {
			return nil, err
		}
		lw.Scalar = s[0]
		w.Layers[l] = lw
	}
	return w, nil
}

// WriteWeights stores layers [a, b) and the named model-level tensors.
func WriteWeights(path string, g *Geometry, w *Weights, a, b int, model []string, meta map[string]string) error {
	sw := safetensors.Create(path)
	for _, t := range g.modelTensors(w) {
		for _, want := range model {
			if t.name == prefix+want {
				sw.Add(t.name, "BF16", t.shape, *t.ptr)
			}
		}
	}
	for l := a; l < b; l++ {
		lw := w.Layers[l]
		for _, t := range g.layerTensors(l, lw) {
			sw.Add(t.name, "BF16", t.shape, *t.ptr)
		}
		sw.Add(scalarName(l), "BF16", []int{1}, []float32{lw.Scalar})
	}
	return sw.Close(meta)
}

// f16s views an fp16 tensor's bytes as uint16 values.
func f16s(t *coreml.Tensor) []uint16 { return t.U16() }

// spec is shorthand for a fixed-shape TensorSpec.
func spec(dt coreml.DType, shape ...int) coreml.TensorSpec {
	return coreml.TensorSpec{DType: dt, Shape: shape}
}

// rangeSpec is a spec whose dimension dim ranges over [lo, hi].
func rangeSpec(dt coreml.DType, dim, lo, hi int, shape ...int) coreml.TensorSpec {
	s := coreml.TensorSpec{DType: dt, Shape: shape, Ranges: make([][2]int, len(shape))}
	for i, d := range shape {
		s.Ranges[i] = [2]int{d, d}
	}
	s.Ranges[dim] = [2]int{lo, hi}
	return s
}

// stateless is embedded by models without state.
type stateless struct{}

func (stateless) NewState() (coreml.State, error) {
	return nil, fmt.Errorf("model is stateless")
}

func (stateless) Close() error { return nil }

// rowsOf reads the row count of an input whose dimension dim is the row axis.
func rowsOf(in coreml.Features, name string, dim int) int {
	if t := in[name]; t != nil && len(t.Shape) > dim {
		return t.Shape[dim]
	}
	return 0
}

// rowF32 widens row t (width n) of an fp16 tensor.
func rowF32(t *coreml.Tensor, row, n int) []float32 {
	out := make([]float32, n)
	widen(out, f16s(t)[row*n:(row+1)*n])
	return out
}

// rowU16 returns row t (width n) of an fp16 tensor without copying.
func rowU16(t *coreml.Tensor, row, n int) []uint16 { return f16s(t)[row*n : (row+1)*n] }

// putRow rounds a float32 row into row t of an fp16 tensor.
func putRow(t *coreml.Tensor, row int, x []float32) {
	d := f16s(t)[row*len(x) : (row+1)*len(x)]
	for i, v := range x {
		d[i] = f16.FromF32(v)
	}
}

// oneHotSlot returns the column holding 1.0 in row r of an [rows, n]
// one-hot tensor, or −1 for an all-zero (padding) row.
func oneHotSlot(t *coreml.Tensor, row, n int) int {
	for i, h := range f16s(t)[row*n : (row+1)*n] {
		if h == 0x3c00 {
			return i
		}
	}
	return -1
}

// LoadFull assembles the whole model from a bundle's twin folders (each
// holds its chunk's layers; heads hold the embedding and final norm), for
// the oracle.
func LoadFull(dirs []string) (Geometry, *Weights, error) {
	var full *Weights
	var g Geometry
	for _, d := range dirs {
		t, err := ReadTwin(d)
		if err != nil {
			return g, nil, err
		}
		w, err := LoadWeights(filepath.Join(d, t.Weights), &t.Geometry, t.Layers[0], t.Layers[1])
		if err != nil {
			return g, nil, err
		}
		if full == nil {
			g, full = t.Geometry, &Weights{Layers: make([]*LayerWeights, t.Geometry.Layers)}
		}
		for l, lw := range w.Layers {
			if lw != nil {
				full.Layers[l] = lw
			}
		}
		for _, p := range []struct{ dst, src *[]float32 }{{&full.Embed, &w.Embed}, {&full.PLModelProj, &w.PLModelProj},
			{&full.PLProjNorm, &w.PLProjNorm}, {&full.Norm, &w.Norm}} {
			if *p.src != nil {
				*p.dst = *p.src
			}
		}
	}
	if full == nil {
		return g, nil, fmt.Errorf("no model folders")
	}
	for l, lw := range full.Layers {
		if lw == nil {
			return g, nil, fmt.Errorf("layer %d is in none of the model folders", l)
		}
	}
	if full.Embed == nil || full.Norm == nil || full.PLModelProj == nil {
		return g, nil, fmt.Errorf("the model folders lack the embedding, final norm or PLE projection")
	}
	return g, full, nil
}
