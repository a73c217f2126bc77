// Package coreml is the seam between orchard's engine and whatever executes
// chunk graphs: Apple Core ML on darwin, or the pure-Go reference runtime
// (package reference) everywhere. The engine sees only these types.
package coreml

import (
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

// Tensor is a dense, C-contiguous, little-endian array.
type Tensor struct {
	Shape []int
	DType DType
	Data  []byte
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
type TensorSpec struct {
	DType  DType
	Shape  []int
	Ranges [][2]int // nil when every dimension is fixed; else one [lo, hi] per dimension
}

// Description is what a model declares, read from modelDescription on darwin.
type Description struct {
	Inputs, Outputs, States map[string]TensorSpec
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
	// Predict runs the model. st is nil for stateless models. Output
	// tensors are the model's own buffers, rewritten by its next Predict
	// (and freed by Close): keep one across calls of the same model only by
	// copying it or by feeding it back as that model's input, which is safe
	// because results are written only after the inputs have been read (r1
	// decode swaps its host caches this way). Passing an output to another
	// model needs no copy.
	Predict(in Features, st State) (Features, error)
	Close() error
}

// State is a model's mutable state (MLState). Read returns a copy; Write
// replaces the named buffer with t (same shape and dtype). Used by
// checkpoints. Close releases the buffers now rather than at collection.
type State interface {
	Read(name string) (*Tensor, error)
	Write(name string, t *Tensor) error
	Close() error
}
