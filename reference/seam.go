package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
)

// kernel is one reference model kind: it computes outputs into its own
// buffers. model puts every call through the seam's shared Plan, as the
// Core ML backend does, so drivers see the same output placement (backed,
// kept, reused) and the same copy accounting on Linux as on a Mac.
type kernel interface {
	Description() coreml.Description
	NewState() (coreml.State, error)
	// predict computes the outputs; a kernel may write an output straight
	// into its destination in into (the plan's Backed outputs) and return it.
	predict(in coreml.Features, st coreml.State, into coreml.Features) (coreml.Features, error)
	Close() error
}

// model is a loaded reference function behind the coreml.Model interface.
type model struct {
	k    kernel
	desc coreml.Description
	rt   *Runtime
	plan coreml.Plan
	in   coreml.Features           // inputs with kept tensors resolved, reused
	res  coreml.Features           // results, reused
	kept map[string]*coreml.Tensor // the stand-ins returned for kept outputs
	last map[string][]byte         // the output buffers the last call returned (coreml.Reuser)
}

// hasKept reports whether the planned call passes a kept output through.
func (m *model) hasKept() bool {
	for _, s := range m.plan.In {
		if s.How == coreml.PassThrough {
			return true
		}
	}
	return false
}

// OutputBuffer is the buffer the last call returned for an output.
func (m *model) OutputBuffer(name string) []byte { return m.last[name] }

func newModel(rt *Runtime, k kernel) *model {
	return &model{k: k, desc: k.Description(), rt: rt, in: coreml.Features{}, res: coreml.Features{},
		kept: map[string]*coreml.Tensor{}, last: map[string][]byte{}}
}

func (m *model) Description() coreml.Description { return m.desc }
func (m *model) NewState() (coreml.State, error) { return m.k.NewState() }
func (m *model) Close() error                    { return m.k.Close() }

// Predict plans the call, resolves inputs that are kept outputs of an
// earlier call, runs the kernel and places its outputs as planned. Copies
// the Core ML backend would make under the same plan are counted, not made:
// here every buffer is Go memory already.
func (m *model) Predict(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	if err := m.plan.Make(m.desc, in, o, &m.rt.mem, true, m); err != nil {
		return nil, err
	}
	feed := in
	if m.hasKept() { // resolve kept outputs to their buffers
		clear(m.in)
		for name, t := range in {
			if h := t.KeptHandle(); h != nil {
				real, ok := h.(*coreml.Tensor)
				if !ok {
					return nil, fmt.Errorf("input %s: kept by another runtime", name)
				}
				t = real
			}
			m.in[name] = t
		}
		feed = m.in
	}
	for _, s := range m.plan.In {
		m.rt.meter.Add(s.Bytes)
	}
	var into coreml.Features
	if o != nil {
		into = o.Into
	}
	out, err := m.k.predict(feed, st, into)
	if err != nil {
		return nil, err
	}
	clear(m.res)
	for _, s := range m.plan.Out {
		t, ok := out[s.Name]
		if !ok {
			return nil, fmt.Errorf("output %s: not produced", s.Name)
		}
		m.rt.mem.Record(t.Data)
		if s.How == coreml.Reused || s.How == coreml.CopyOut {
			m.last[s.Name] = t.Data
		}
		switch s.How {
		case coreml.Backed:
			if dst := o.Into[s.Name]; t != dst {
				if err := m.desc.Outputs[s.Name].Check(s.Name, t); err != nil {
					return nil, err
				}
				if !m.rt.null {
					copy(dst.Data, t.Data) // the graph's own write, on a Mac
				}
				t = dst
			}
		case coreml.Kept:
			k := m.kept[s.Name]
			if k == nil || k.KeptHandle() != t {
				k = coreml.NewKept(t.Shape, t.DType, t)
				m.kept[s.Name] = k
			}
			k.Shape, k.DType = t.Shape, t.DType
			t = k
		case coreml.CopyOut:
			m.rt.meter.Add(len(t.Data))
		}
		m.res[s.Name] = t
	}
	return m.res, nil
}
