package reference

import (
	"slices"

	"github.com/orchard-llm/orchard/coreml"
)

// outputs holds a model's output tensors and hands the same ones back on
// every call, as the Core ML backend does, so that tests on Linux catch a
// driver that keeps an output across calls without copying it.
type outputs map[string]*coreml.Tensor

// get returns the named output buffer, reallocated only when its shape
// changes (v2 calls vary S). The contents are left as they are: an output
// fed back as this model's input must still hold that input.
func (o outputs) get(name string, dt coreml.DType, shape ...int) *coreml.Tensor {
	if t, ok := o[name]; ok && t.DType == dt && slices.Equal(t.Shape, shape) {
		return t
	}
	t := coreml.NewTensor(shape, dt)
	o[name] = t
	return t
}
