package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
)

// head is the argmax lm head of r1 (lmhead, lmhead_v4) and v2: final norm,
// tied embedding, soft-cap, argmax per row. Input "hidden", output "token".
type head struct {
	stateless
	m    *Model
	desc coreml.Description
	out  outputs
}

func newHead(m *Model, t *Twin, fn Function) *head {
	H := t.Geometry.Hidden
	h := &head{m: m, out: outputs{}}
	switch {
	case t.Kind == KindV2Head:
		h.desc = coreml.Description{
			Inputs:  map[string]coreml.TensorSpec{"hidden": rangeSpec(coreml.Float16, 0, 1, t.MaxS, 1, H)},
			Outputs: map[string]coreml.TensorSpec{"token": rangeSpec(coreml.Int32, 0, 1, t.MaxS, 1)},
		}
	case fn.N == 1:
		h.desc = coreml.Description{
			Inputs:  map[string]coreml.TensorSpec{"hidden": spec(coreml.Float16, H)},
			Outputs: map[string]coreml.TensorSpec{"token": spec(coreml.Int32, 1)},
		}
	default:
		h.desc = coreml.Description{
			Inputs:  map[string]coreml.TensorSpec{"hidden": spec(coreml.Float16, fn.N, H)},
			Outputs: map[string]coreml.TensorSpec{"token": spec(coreml.Int32, fn.N)},
		}
	}
	return h
}

func (h *head) Description() coreml.Description { return h.desc }

func (h *head) predict(in coreml.Features, st coreml.State, into coreml.Features) (coreml.Features, error) {
	if err := h.desc.CheckInputs(in); err != nil {
		return nil, fmt.Errorf("lmhead: %w", err)
	}
	g := &h.m.G
	hid := in["hidden"]
	rows := hid.Len() / g.Hidden
	out := h.out.get("token", coreml.Int32, rows)
	logits := make([]float32, g.Vocab)
	for r := range rows {
		_, tok := h.m.head(rowF32(hid, r, g.Hidden), logits)
		out.SetI32(r, int32(tok))
	}
	return coreml.Features{"token": out}, nil
}
