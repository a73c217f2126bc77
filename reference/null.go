package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
)

// NewNull returns a runtime that loads a twin's contract without weights
// and computes nothing: every output is a zero tensor of its declared shape
// (flexible rows sized from the call). It goes through the same plans as
// the reference and Core ML backends, so a chain over it measures orchard's
// own work between graph calls, and the bytes it makes the host copy.
func NewNull() *Runtime { return &Runtime{weights: map[string]*Model{}, null: true} }

// nullKernel is the contract of one function, with outputs of zeros.
type nullKernel struct {
	stateless
	d   coreml.Description
	out map[string]*coreml.Tensor
	res coreml.Features // reused: the null runtime allocates nothing per call
}

func newNullKernel(d coreml.Description) *nullKernel {
	return &nullKernel{d: d, out: map[string]*coreml.Tensor{}, res: coreml.Features{}}
}

func (m *nullKernel) Description() coreml.Description { return m.d }

func (m *nullKernel) NewState() (coreml.State, error) {
	if len(m.d.States) == 0 {
		return nil, fmt.Errorf("model is stateless")
	}
	return newState(m.d.States), nil
}

func (m *nullKernel) predict(in coreml.Features, st coreml.State, into coreml.Features) (coreml.Features, error) {
	rows := 0
	if h := in["hidden_in"]; h != nil {
		rows = h.Shape[0]
	} else if h := in["hidden"]; h != nil && len(h.Shape) == 2 {
		rows = h.Shape[0]
	}
	for name, sp := range m.d.Outputs {
		t := m.out[name]
		if t == nil || (sp.Ranges != nil && t.Shape[0] != rows) {
			shape := append([]int(nil), sp.Shape...)
			if sp.Ranges != nil {
				shape[0] = rows
			}
			t = coreml.NewTensor(shape, sp.DType)
			m.out[name] = t
		}
		m.res[name] = t
	}
	return m.res, nil
}
