package chain

import (
	"slices"

	"github.com/orchard-llm/orchard/coreml"
)

// The published graphs are the contract, and where the reference docs
// leave a shape's rank open (an r1 row as [H], [1,H] or [1,1,H]) the
// driver's tensor may differ from the declaration only by leading unit
// dimensions. conform presents such a tensor under the declared shape,
// sharing its memory; anything else is left for the input check to name.

// conform returns t, or a view of it with the shape spec declares, kept in
// views under name so it is made once and re-pointed afterwards.
func conform(views map[string]*coreml.Tensor, name string, spec coreml.TensorSpec, t *coreml.Tensor) *coreml.Tensor {
	if t == nil || spec.Precheck(name, t) == nil {
		return t
	}
	shape, ok := reshaped(spec, t.Shape)
	if !ok || spec.DType != t.DType {
		return t
	}
	v := views[name]
	if v == nil {
		v = &coreml.Tensor{}
		views[name] = v
	}
	// Reuse the header: a view is made once and re-pointed, not allocated per token.
	return t.ViewAs(v, shape)
}

// reshaped adds or drops leading unit dimensions of have so that it fits
// spec (flexible dimensions keep have's sizes).
func reshaped(spec coreml.TensorSpec, have []int) ([]int, bool) {
	core := have
	for len(core) > 0 && core[0] == 1 && len(core) > len(spec.Shape) {
		core = core[1:]
	}
	if len(core) > len(spec.Shape) {
		return nil, false
	}
	pad := len(spec.Shape) - len(core)
	for i := range pad {
		if lo, hi := dimRange(spec, i); lo > 1 || hi < 1 {
			return nil, false
		}
	}
	out := append(slices.Repeat([]int{1}, pad), core...)
	return out, fitsDims(spec, out)
}

func dimRange(spec coreml.TensorSpec, i int) (int, int) {
	if spec.Ranges != nil {
		return spec.Ranges[i][0], spec.Ranges[i][1]
	}
	return spec.Shape[i], spec.Shape[i]
}

// fitsDims reports whether shape fits spec's dimensions and ranges.
func fitsDims(spec coreml.TensorSpec, shape []int) bool {
	if len(shape) != len(spec.Shape) {
		return false
	}
	for i, d := range shape {
		if lo, hi := dimRange(spec, i); d < lo || d > hi {
			return false
		}
	}
	return true
}

// converted is an input the host fills in one dtype and the model declares
// in another: dst (the declared dtype, from the runtime's Alloc) is
// refilled from src before every prediction.
type converted struct {
	src, dst *coreml.Tensor
}

// convert returns the declared-dtype tensor fed for src, made once per
// shape.
func (g *graph) convert(name string, src *coreml.Tensor, dt coreml.DType) *coreml.Tensor {
	c := g.conv[name]
	if c == nil || c.dst.DType != dt || !slices.Equal(c.dst.Shape, src.Shape) {
		c = &converted{dst: g.rt.Alloc(src.Shape, dt)}
		g.conv[name] = c
	}
	c.src = src
	return c.dst
}

// fill converts the host tensor into the declared dtype.
func (c *converted) fill() { coreml.Convert(c.dst, c.src) }
