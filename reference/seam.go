package reference

import (
	"fmt"
	"slices"

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
	k        kernel
	decl     declared // the twin's form: declared description, conversions, names
	desc     coreml.Description
	rt       *Runtime
	plan     coreml.Plan
	backings *coreml.Backings          // which outputs take a backing (learnt, as on a Mac)
	treat    string                    // the twin's BackingsDecline / BackingsRefuse, or ""
	in       coreml.Features           // inputs with kept tensors resolved and dtypes converted, reused
	conv     coreml.Features           // the kernel-dtype copies of converted inputs
	into     coreml.Features           // destinations the kernel may write directly (Backed), reused
	res      coreml.Features           // results, reused
	kept     map[string]*coreml.Tensor // the stand-ins returned for kept outputs
	last     map[string][]byte         // the output buffers the last call returned (coreml.Reuser)
}

// OutputBuffer is the buffer the last call returned for an output.
func (m *model) OutputBuffer(name string) []byte { return m.last[name] }

func newModel(rt *Runtime, k kernel, t *Twin) *model {
	d := declare(t, k.Description())
	return &model{k: k, decl: d, desc: d.desc, rt: rt, backings: &coreml.Backings{}, treat: t.Backings,
		in: coreml.Features{}, conv: coreml.Features{}, into: coreml.Features{}, res: coreml.Features{},
		kept: map[string]*coreml.Tensor{}, last: map[string][]byte{}}
}

func (m *model) Description() coreml.Description { return m.desc }
func (m *model) NewState() (coreml.State, error) { return m.k.NewState() }
func (m *model) Close() error                    { return m.k.Close() }

// Declined lists the outputs whose backings this model stopped offering.
func (m *model) Declined() []string { return m.backings.Declined() }

// feed resolves inputs that are kept outputs of an earlier call to their
// buffers and converts inputs declared in another dtype than the kernel
// computes in (the fp32-inputs form), as a graph casts its inputs.
func (m *model) feed(in coreml.Features) (coreml.Features, error) {
	clear(m.in)
	for name, t := range in {
		if h := t.KeptHandle(); h != nil {
			real, ok := h.(*coreml.Tensor)
			if !ok {
				return nil, fmt.Errorf("input %s: kept by another runtime", name)
			}
			t = real
		}
		if kdt, ok := m.decl.convert[name]; ok {
			if err := m.desc.Inputs[name].Precheck(name, t); err != nil {
				return nil, err
			}
			c := m.conv[name]
			if c == nil || c.Len() != t.Len() || !slices.Equal(c.Shape, t.Shape) {
				c = coreml.NewTensor(t.Shape, kdt)
				m.conv[name] = c
			}
			coreml.Convert(c, t)
			t = c
		}
		m.in[name] = t
	}
	return m.in, nil
}

// Predict plans the call, resolves and converts its inputs, runs the
// kernel and places its outputs as planned, counting on the runtime's
// meter every copy the host makes: inputs in Go memory a Mac would copy
// in, and outputs not written in place — those Core ML returns in its own
// memory and those whose backing was declined. A twin that declines
// backings writes its own buffers (the host copies and stops offering);
// one that refuses them fails the call (run again without, and the
// refused backing is given up), both through the shared coreml.Backings.
func (m *model) Predict(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	plan := func(b *coreml.Backings) error { return m.plan.Make(m.desc, in, o, &m.rt.mem, b, m) }
	var out coreml.Features
	run := func() error {
		if m.treat == BackingsRefuse && len(m.plan.Offered()) > 0 {
			return fmt.Errorf("output backing for %s refused", m.plan.Offered()[0])
		}
		feed, err := m.feed(in)
		if err != nil {
			return err
		}
		clear(m.into)
		if m.treat != BackingsDecline {
			for _, s := range m.plan.Out {
				if s.How == coreml.Backed {
					m.into[m.decl.kernelName(s.Name)] = o.Into[s.Name]
				}
			}
		}
		out, err = m.k.predict(feed, st, m.into)
		return err
	}
	if err := m.plan.Run(m.backings, plan, run); err != nil {
		return nil, err
	}
	for _, s := range m.plan.In {
		m.rt.meter.Add(s.Bytes)
	}
	clear(m.res)
	for _, s := range m.plan.Out {
		t, ok := out[m.decl.kernelName(s.Name)]
		if !ok {
			return nil, fmt.Errorf("output %s: not produced", s.Name)
		}
		m.rt.mem.Record(t.Data)
		if !s.Into && (s.How == coreml.Reused || s.How == coreml.CopyOut) {
			m.last[s.Name] = t.Data
		}
		switch s.How {
		case coreml.Backed:
			dst := o.Into[s.Name]
			if t != dst {
				if err := m.desc.Outputs[s.Name].Check(s.Name, t); err != nil {
					return nil, err
				}
				if !m.rt.null {
					copy(dst.Data, t.Data) // the graph's own write, on a Mac
				}
				if m.treat == BackingsDecline {
					m.rt.meter.Add(len(dst.Data)) // it wrote its own buffer: the host copies
					m.backings.Decline(s.Name)
				}
			}
			t = dst
		case coreml.Reused:
			if m.treat == BackingsDecline {
				m.rt.meter.Add(len(t.Data))
				m.backings.Decline(s.Name)
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
			if s.Into {
				dst := o.Into[s.Name]
				if len(dst.Data) != len(t.Data) || dst.DType != t.DType {
					return nil, fmt.Errorf("output %s: the call returned %v %s for a %v %s destination", s.Name, t.Shape, t.DType, dst.Shape, dst.DType)
				}
				copy(dst.Data, t.Data)
				t = dst
			}
			m.rt.meter.Add(len(t.Data))
		}
		m.res[s.Name] = t
	}
	return m.res, nil
}
