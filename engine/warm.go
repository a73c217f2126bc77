package engine

import (
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
)

// WarmTasks loads each encoder and runs it on zeros of its declared
// inputs: chain.Warm's extra tasks.
func (e *Encoders) WarmTasks() []chain.WarmTask {
	if e == nil {
		return nil
	}
	var tasks []chain.WarmTask
	for _, enc := range []struct {
		name string
		l    *coreml.Lazy
	}{{"vision encoder", e.vision}, {"audio encoder", e.audio}} {
		if enc.l == nil {
			continue
		}
		var in coreml.Features
		tasks = append(tasks, chain.WarmTask{Name: enc.name, Run: func() error {
			m, err := enc.l.Model()
			if err != nil {
				return err
			}
			if in == nil {
				in = coreml.Features{}
				for name, sp := range m.Description().Inputs {
					in[name] = e.rt.Alloc(sp.Shape, sp.DType)
				}
			}
			_, err = m.Predict(in, nil, nil)
			return err
		}})
	}
	return tasks
}
