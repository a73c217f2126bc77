package reference

import (
	"maps"

	"github.com/orchard-llm/orchard/coreml"
)

// hostFed are the inputs a driver fills on the host (masks, RoPE rows,
// embeddings, per-layer rows, one-hots, positions), as opposed to tensors
// one chunk hands the next. coremltools declares inputs fp32 unless told
// otherwise, so a converted chunk may well take these as fp32 (the
// fp32-inputs form); the hand-over tensors keep the chunk's own dtype.
var hostFed = map[string]bool{
	"causal_mask_full": true, "causal_mask_sliding": true, "mask_s": true, "mask_f": true,
	"cos_s": true, "sin_s": true, "cos_f": true, "sin_f": true,
	"onehot": true, "per_layer_raw": true, "inputs_embeds": true, "tokid": true,
	"current_pos": true, "ring_pos": true,
}

// declared is how a twin presents a kernel: the description it declares
// and what maps it onto the kernel's own.
type declared struct {
	desc    coreml.Description
	convert map[string]coreml.DType // input → the kernel's dtype, where the declared one differs
	rename  map[string]string       // declared output name → the kernel's
}

// declare derives a twin's declared description from its kernel's:
//   - an output whose shape depends on a flexible input declares none, as
//     coremltools writes it (get_func_output: no shape when any dimension
//     is symbolic) — the v2 chunks' hidden and the heads' token, always;
//     with AllShapeless, every output;
//   - with F32Inputs, host-fed fp16 and int32 inputs are declared fp32;
//   - with LogitsName, chunk_3's logits output carries that name.
func declare(t *Twin, k coreml.Description) declared {
	d := declared{desc: coreml.Description{Inputs: maps.Clone(k.Inputs), Outputs: map[string]coreml.TensorSpec{},
		States: k.States, Notes: k.Notes}}
	for name, sp := range k.Outputs {
		if sp.Ranges != nil || t.AllShapeless {
			sp = coreml.TensorSpec{DType: sp.DType}
		}
		if name == "logits" && t.LogitsName != "" {
			if d.rename == nil {
				d.rename = map[string]string{}
			}
			d.rename[t.LogitsName] = name
			name = t.LogitsName
		}
		d.desc.Outputs[name] = sp
	}
	if t.F32Inputs {
		for name, sp := range k.Inputs {
			if hostFed[name] && sp.DType != coreml.Float32 {
				if d.convert == nil {
					d.convert = map[string]coreml.DType{}
				}
				d.convert[name] = sp.DType
				sp.DType = coreml.Float32
				d.desc.Inputs[name] = sp
			}
		}
	}
	return d
}

// kernelName is the kernel's name of a declared output.
func (d *declared) kernelName(name string) string {
	if k, ok := d.rename[name]; ok {
		return k
	}
	return name
}
