// Package coreml is the seam between orchard's engine and whatever executes
// chunk graphs: Apple Core ML on darwin (package coreml/darwin), or the
// pure-Go reference runtime (package reference) everywhere. The engine sees
// only these types, and the Plan every backend follows to move tensors
// across.
package coreml

import (
	"errors"
	"fmt"
	"strings"
)

// DType is the element type of a tensor crossing the seam. The real graphs
// only exchange fp16, fp32 and int32.
type DType uint8

const (
	Float16 DType = iota + 1
	Float32
	Int32
)

// Size is the byte width of one element.
func (d DType) Size() int {
	switch d {
	case Float16:
		return 2
	case Float32, Int32:
		return 4
	}
	return 0
}

func (d DType) String() string {
	switch d {
	case Float16:
		return "fp16"
	case Float32:
		return "fp32"
	case Int32:
		return "int32"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ComputeUnits selects where Core ML may run a model. The reference runtime
// accepts and ignores it.
type ComputeUnits uint8

const (
	DefaultUnits ComputeUnits = iota // let the bundle or backend decide
	CPUOnly
	CPUAndGPU
	CPUAndNeuralEngine
	All
)

func (c ComputeUnits) String() string {
	switch c {
	case CPUOnly:
		return "cpuOnly"
	case CPUAndGPU:
		return "cpuAndGPU"
	case CPUAndNeuralEngine:
		return "cpuAndNeuralEngine"
	case All:
		return "all"
	}
	return "default"
}

// ParseComputeUnits accepts the spellings of the published manifests and
// CLIs (all, cpuAndGPU, cpuAndNeuralEngine, cpuOnly) plus the short forms of
// CORELLM_VERIFY_HEAD_CU (cpu, gpu, ane) and stateful3's CPU_AND_NE.
func ParseComputeUnits(s string) (ComputeUnits, error) {
	switch strings.ToLower(strings.ReplaceAll(s, "_", "")) {
	case "", "default":
		return DefaultUnits, nil
	case "cpuonly", "cpu":
		return CPUOnly, nil
	case "cpuandgpu", "gpu":
		return CPUAndGPU, nil
	case "cpuandneuralengine", "cpuandne", "ane", "ne":
		return CPUAndNeuralEngine, nil
	case "all":
		return All, nil
	}
	return DefaultUnits, fmt.Errorf("unknown compute units %q (want all, cpuAndGPU, cpuAndNeuralEngine or cpuOnly)", s)
}

// Tensor is a dense, C-contiguous, little-endian array. A tensor a
// backend kept in its own memory (Outputs.Keep) has no Data: it can only be
// passed on as an input of a later Predict.
type Tensor struct {
	Shape []int
	DType DType
	Data  []byte

	kept any // the backend's handle of a kept output; nil for host tensors
}

// Features maps tensor names to tensors, as MLFeatureProvider does.
type Features map[string]*Tensor

// LoadOptions selects a function of a multifunction model and its compute units.
type LoadOptions struct {
	Function     string // "" = the model's default function
	ComputeUnits ComputeUnits
}

// TensorSpec describes one input, output or state. A dimension whose range
// has Lo < Hi is flexible (Core ML's RangeDim); Shape then holds its default.
// An enumerated-shape input lists its shapes in Shapes, and Ranges holds
// their per-dimension envelope.
type TensorSpec struct {
	DType  DType
	Shape  []int
	Ranges [][2]int // nil when every dimension is fixed; else one [lo, hi] per dimension
	Shapes [][]int  // enumerated shapes; nil otherwise
}

// Description is what a model declares, read from modelDescription on darwin.
// Notes carry what the backend read but could not put in a spec (the raw
// NSRange of a flexible dimension, say), for `bundle inspect --deep`.
type Description struct {
	Inputs, Outputs, States map[string]TensorSpec
	Notes                   []string
}

// Outputs says where the outputs of one prediction go. With nil, or for an
// output it does not name, an output lands in the model's own reused buffer
// (see Model.Predict), readable by the host.
type Outputs struct {
	// Into holds tensors from the runtime's Alloc that the named outputs are
	// written into directly (Core ML output backings). Each must have the
	// output's exact shape and dtype, and must not be an input of the same
	// call. The returned tensor is then that very tensor.
	Into Features
	// Keep names outputs left in the backend's memory: the returned tensor
	// has no Data and is valid only as an input of a later Predict, of this
	// model or another, until this model's next Predict. It is how one
	// chunk hands a cache or hidden state to the next without a host copy.
	Keep map[string]bool
}

// Runtime loads models and allocates tensors the backend can wrap without copying.
type Runtime interface {
	Load(path string, o LoadOptions) (Model, error)
	// Alloc returns zeroed memory the backend wraps without copying. It
	// lives as long as the returned *Tensor is reachable: keep the Tensor,
	// not only its Data.
	Alloc(shape []int, dt DType) *Tensor
}

// Model is one loaded function of one chunk.
type Model interface {
	Description() Description
	// NewState returns zero-initialised state buffers; an error for stateless models.
	NewState() (State, error)
	// Predict runs the model. st is nil for stateless models; o (nil for
	// the defaults) places the outputs. Output tensors are the model's own
	// buffers, rewritten by its next Predict (and freed by Close), unless o
	// puts them elsewhere: keep one across calls of the same model only by
	// copying it or by feeding it back as that model's input, which is safe
	// because results are written only after the inputs have been read.
	// Passing an output to another model needs no copy.
	Predict(in Features, st State, o *Outputs) (Features, error)
	Close() error
}

// FunctionLister is implemented by runtimes that can list the functions of
// a compiled model without loading one (Core ML's MLModelAsset on macOS 15,
// the reference runtime's twin folders). An empty list means a
// single-function model; ErrFunctionsUnknown means the runtime cannot tell
// here, and the caller learns by loading.
type FunctionLister interface {
	Functions(path string) ([]string, error)
}

// ErrFunctionsUnknown is returned by FunctionLister when the system cannot
// list a model's functions (before macOS 15).
var ErrFunctionsUnknown = errors.New("this system cannot list a model's functions")

// CopyMeter is implemented by runtimes that count the bytes the host copies
// across the seam (inputs copied into backend memory, outputs copied out).
type CopyMeter interface {
	CopiedBytes() int64
}

// State is a model's mutable state (MLState). Read returns a copy; Write
// replaces the named buffer with t (same shape and dtype). Used by
// checkpoints. Close releases the buffers now rather than at collection.
type State interface {
	Read(name string) (*Tensor, error)
	Write(name string, t *Tensor) error
	Close() error
}
