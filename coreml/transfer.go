package coreml

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// How one tensor crosses the seam in one prediction. Every backend (Core ML,
// the reference runtime, the tests' null runtime) decides it with the same
// Plan, so the bytes a driver makes the host copy per token can be measured
// on any machine.
type Transfer uint8

const (
	InPlace     Transfer = iota + 1 // input in backend memory, wrapped as it is
	CopyIn                          // input in host (Go) memory, copied into backend memory first
	PassThrough                     // input that is an earlier kept output: no host copy
	Backed                          // output written straight into a caller's tensor (Outputs.Into)
	Reused                          // output written into the model's own buffer (a backing it offers)
	Kept                            // output left in backend memory (Outputs.Keep)
	CopyOut                         // output the backend allocates, copied into the model's buffer
)

func (t Transfer) String() string {
	switch t {
	case InPlace:
		return "in place"
	case CopyIn:
		return "copied in"
	case PassThrough:
		return "passed through"
	case Backed:
		return "backed"
	case Reused:
		return "reused"
	case Kept:
		return "kept"
	case CopyOut:
		return "copied out"
	}
	return fmt.Sprintf("transfer(%d)", uint8(t))
}

// Copies reports whether the transfer is a host copy.
func (t Transfer) Copies() bool { return t == CopyIn || t == CopyOut }

// Step is how one named tensor crosses. Bytes is the copy size where it is
// known before the call (CopyIn, fixed-shape CopyOut), else 0. Into marks
// an output bound for the caller's tensor (Outputs.Into): Backed when it is
// offered as the output's backing, CopyOut when it is copied there.
type Step struct {
	Name  string
	How   Transfer
	Bytes int
	Into  bool
}

// Owner tells backend memory (wrapped without a copy) from host memory.
type Owner interface {
	Owns(b []byte) bool
}

// Plan is how every input and output of one prediction crosses the seam.
// Make reuses its slices, so planning a call allocates nothing once warm.
type Plan struct {
	In, Out []Step
	spans   [][2]uintptr // the inputs' memory, for alias checks without re-walking the map
	offered []string     // outputs offered as backings (Backed, Reused)
}

// Reuser is a model's own output buffers: what its last call returned for
// each output (nil before the first). An output whose buffer is fed back as
// an input of the same call cannot be offered as a backing: Core ML might
// write it before it has read the input, so that output is copied out.
type Reuser interface {
	OutputBuffer(name string) []byte
}

// Make plans a call of a model described by d on inputs in, with outputs
// placed by o. mem says which memory the backend can wrap; b says which
// outputs may be offered to the backend as output backings (Core ML output
// backings; nil offers none); own (may be nil) gives the model's reused
// output buffers. An output whose shape the model does not declare (a
// shapeless output, Core ML's answer for one that depends on a flexible
// input) is always copied out: no buffer can be sized for it beforehand.
func (p *Plan) Make(d Description, in Features, o *Outputs, mem Owner, b *Backings, own Reuser) error {
	p.In, p.Out, p.spans, p.offered = p.In[:0], p.Out[:0], p.spans[:0], p.offered[:0]
	for name, t := range in {
		if t != nil && len(t.Data) > 0 {
			lo, hi := span(t.Data)
			p.spans = append(p.spans, [2]uintptr{lo, hi})
		}
		switch {
		case t == nil:
			return fmt.Errorf("input %s: nil tensor", name)
		case t.kept != nil:
			p.In = append(p.In, Step{Name: name, How: PassThrough})
		case mem != nil && mem.Owns(t.Data):
			p.In = append(p.In, Step{Name: name, How: InPlace})
		default:
			p.In = append(p.In, Step{Name: name, How: CopyIn, Bytes: len(t.Data)})
		}
	}
	for name, spec := range d.Outputs {
		shapeless := spec.Shapeless()
		if o != nil {
			if dst := o.Into[name]; dst != nil {
				if err := spec.checkDestination(name, dst); err != nil {
					return fmt.Errorf("output destination: %w", err)
				}
				if mem != nil && !mem.Owns(dst.Data) {
					return fmt.Errorf("output %s: its destination was not allocated by this runtime (use Runtime.Alloc)", name)
				}
				if p.aliases(dst.Data) {
					return fmt.Errorf("output %s: its destination is also an input of the same call", name)
				}
				if shapeless || !b.Offer(name) {
					p.Out = append(p.Out, Step{Name: name, How: CopyOut, Bytes: len(dst.Data), Into: true})
					continue
				}
				p.Out = append(p.Out, Step{Name: name, How: Backed, Into: true})
				p.offered = append(p.offered, name)
				continue
			}
			if o.Keep[name] {
				p.Out = append(p.Out, Step{Name: name, How: Kept})
				continue
			}
		}
		if !shapeless && spec.Ranges == nil && b.Offer(name) && (own == nil || !p.aliases(own.OutputBuffer(name))) {
			p.Out = append(p.Out, Step{Name: name, How: Reused})
			p.offered = append(p.offered, name)
			continue
		}
		n := 0
		if spec.Ranges == nil && !shapeless {
			n = NumElements(spec.Shape) * spec.DType.Size()
		}
		p.Out = append(p.Out, Step{Name: name, How: CopyOut, Bytes: n})
	}
	return nil
}

// Offered lists the outputs the plan offers the backend as backings. The
// slice is the plan's own, valid until the next Make.
func (p *Plan) Offered() []string { return p.offered }

// Input returns the plan of a named input.
func (p *Plan) Input(name string) (Step, bool) { return find(p.In, name) }

// Output returns the plan of a named output.
func (p *Plan) Output(name string) (Step, bool) { return find(p.Out, name) }

func find(steps []Step, name string) (Step, bool) {
	for _, s := range steps {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

// aliases reports whether b shares memory with any input's data.
func (p *Plan) aliases(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo, hi := span(b)
	for _, s := range p.spans {
		if s[0] < hi && lo < s[1] {
			return true
		}
	}
	return false
}

// span is the address range of b.
func span(b []byte) (lo, hi uintptr) {
	lo = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return lo, lo + uintptr(len(b))
}

// Meter counts the bytes a backend copies across the seam. Safe for
// concurrent use.
type Meter struct{ n atomic.Int64 }

// Add records n copied bytes.
func (m *Meter) Add(n int) { m.n.Add(int64(n)) }

// CopiedBytes is the total so far.
func (m *Meter) CopiedBytes() int64 { return m.n.Load() }

// NewKept returns the tensor that stands for an output a backend kept in its
// own memory: shape and dtype, no Data, and the backend's handle.
func NewKept(shape []int, dt DType, handle any) *Tensor {
	return &Tensor{Shape: shape, DType: dt, kept: handle}
}

// KeptHandle returns the backend's handle of a kept tensor, or nil for a
// tensor in host memory.
func (t *Tensor) KeptHandle() any { return t.kept }

// InBackend reports whether the tensor's data stays in backend memory (a
// kept output): it has no Data to read.
func (t *Tensor) InBackend() bool { return t != nil && t.kept != nil }

// ViewAs makes v a view of t under another shape of the same element count,
// sharing its memory (or its kept handle), and returns v. v is reused, so
// re-pointing a view allocates nothing.
func (t *Tensor) ViewAs(v *Tensor, shape []int) *Tensor {
	v.Shape = append(v.Shape[:0], shape...)
	v.DType, v.Data, v.kept = t.DType, t.Data, t.kept
	return v
}
