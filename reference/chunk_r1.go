package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
)

// r1Chunk executes one chunk of the coreml-corellm-r1 contract
// (okayuji doc §2.2): the KV cache lives on the host as one fp16
// [1, CTX, hd] buffer per own layer. decode returns whole updated caches;
// offset and plain prefill return only the block's new rows.
type r1Chunk struct {
	stateless
	m    *Model
	a, b int
	fn   Function
	own  bool
	desc coreml.Description
	out  outputs
}

func newR1Chunk(m *Model, t *Twin, fn Function) (*r1Chunk, error) {
	g := &t.Geometry
	c := &r1Chunk{m: m, a: t.Layers[0], b: t.Layers[1], fn: fn, out: outputs{}}
	fs := g.FirstShared()
	if c.a < fs && c.b > fs {
		return nil, fmt.Errorf("r1 chunk [%d,%d) straddles the first shared layer %d", c.a, c.b, fs)
	}
	c.own = c.a < fs
	c.desc = r1Description(g, c.a, c.b, fn)
	return c, nil
}

// r1Description lists the tensors of one r1 chunk function.
func r1Description(g *Geometry, a, b int, fn Function) coreml.Description {
	H, NL, P, ctx := g.Hidden, g.Layers, g.PLEDim, g.Context
	hd, ghd := g.HeadDim, g.GlobalHeadDim
	in := map[string]coreml.TensorSpec{}
	out := map[string]coreml.TensorSpec{}
	own := a < g.FirstShared()
	f16 := coreml.Float16
	if fn.Role == RoleDecode {
		in["hidden_in"], in["inputs_embeds"] = spec(f16, H), spec(f16, H)
		in["tokid"] = spec(f16, NL, P)
		in["cos_s"], in["sin_s"] = spec(f16, hd), spec(f16, hd)
		in["cos_f"], in["sin_f"] = spec(f16, ghd), spec(f16, ghd)
		in["mask_s"], in["mask_f"] = spec(f16, ctx), spec(f16, ctx)
		out["hidden"] = spec(f16, H)
		if own {
			in["onehot"] = spec(f16, ctx)
		}
	} else {
		N := fn.N
		in["hidden_in"], in["inputs_embeds"] = spec(f16, N, H), spec(f16, N, H)
		in["tokid"] = spec(f16, N, NL, P)
		in["cos_s"], in["sin_s"] = spec(f16, N, hd), spec(f16, N, hd)
		in["cos_f"], in["sin_f"] = spec(f16, N, ghd), spec(f16, N, ghd)
		w := ctx
		if fn.Role == RolePlain {
			w = N
		}
		in["mask_s"], in["mask_f"] = spec(f16, N, w), spec(f16, N, w)
		out["hidden"] = spec(f16, N, H)
		if own && fn.Role == RoleOffset {
			in["onehot"] = spec(f16, N, ctx)
		}
	}
	for l := a; l < b; l++ {
		if !own {
			break
		}
		d := g.HeadDimOf(l)
		if fn.Role != RolePlain {
			in[fmt.Sprintf("k_%d_in", l)], in[fmt.Sprintf("v_%d_in", l)] = spec(f16, 1, ctx, d), spec(f16, 1, ctx, d)
		}
		rows := ctx
		if fn.Role != RoleDecode {
			rows = fn.N
		}
		out[fmt.Sprintf("k_%d_out", l)], out[fmt.Sprintf("v_%d_out", l)] = spec(f16, 1, rows, d), spec(f16, 1, rows, d)
	}
	if !own {
		slots := ctx
		if fn.Role == RolePlain {
			slots = fn.N
		}
		in["sks"], in["svs"] = spec(f16, 1, slots, hd), spec(f16, 1, slots, hd)
		in["skf"], in["svf"] = spec(f16, 1, slots, ghd), spec(f16, 1, slots, ghd)
	}
	return coreml.Description{Inputs: in, Outputs: out}
}

func (c *r1Chunk) Description() coreml.Description { return c.desc }

func (c *r1Chunk) predict(in coreml.Features, st coreml.State, into coreml.Features) (coreml.Features, error) {
	if err := c.desc.CheckInputs(in); err != nil {
		return nil, fmt.Errorf("r1 chunk [%d,%d): %w", c.a, c.b, err)
	}
	g := &c.m.G
	H, LP, ctx := g.Hidden, g.Layers*g.PLEDim, g.Context
	hd, ghd := g.HeadDim, g.GlobalHeadDim
	N, maskW := 1, ctx
	if c.fn.Role != RoleDecode {
		N = c.fn.N
	}
	if c.fn.Role == RolePlain {
		maskW = N
	}
	out := coreml.Features{}
	// Working caches: decode/offset start from the host caches (k_in);
	// plain prefill attends over a block-local cache of N slots.
	views := map[int]kvView{}
	for l := c.a; l < c.b && c.own; l++ {
		d := g.HeadDimOf(l)
		slots := ctx
		if c.fn.Role == RolePlain {
			slots = N
		}
		var k, v *coreml.Tensor
		if c.fn.Role == RoleDecode {
			// decode returns the whole updated cache: into the driver's
			// destination when it gave one (an output backing), else into
			// the output buffers, which may be the very tensors it fed back
			// as k_in.
			kn, vn := fmt.Sprintf("k_%d_out", l), fmt.Sprintf("v_%d_out", l)
			if k, v = into[kn], into[vn]; k == nil || v == nil {
				k = c.out.get(kn, coreml.Float16, 1, slots, d)
				v = c.out.get(vn, coreml.Float16, 1, slots, d)
			}
		} else {
			k = coreml.NewTensor([]int{1, slots, d}, coreml.Float16)
			v = coreml.NewTensor([]int{1, slots, d}, coreml.Float16)
		}
		if c.fn.Role != RolePlain {
			copy(k.Data, in[fmt.Sprintf("k_%d_in", l)].Data)
			copy(v.Data, in[fmt.Sprintf("v_%d_in", l)].Data)
		}
		views[l] = kvView{K: f16s(k), V: f16s(v), Heads: 1, Slots: slots, HeadStride: slots * d, SlotStride: d}
		if c.fn.Role == RoleDecode {
			out[fmt.Sprintf("k_%d_out", l)], out[fmt.Sprintf("v_%d_out", l)] = k, v
		}
	}
	if !c.own {
		for _, p := range []struct{ k, v string }{{"sks", "svs"}, {"skf", "svf"}} {
			kt, vt := in[p.k], in[p.v]
			d, slots := kt.Shape[2], kt.Shape[1]
			view := kvView{K: f16s(kt), V: f16s(vt), Heads: 1, Slots: slots, HeadStride: slots * d, SlotStride: d}
			typ := Sliding
			if p.k == "skf" {
				typ = Full
			}
			views[g.StoreLayer(typ)] = view
		}
	}
	b := &batch{x: make([][]float32, N), ple: make([][]float32, N), rows: make([]rowIn, N)}
	for t := range N {
		b.x[t] = rowF32(in["hidden_in"], t, H)
		x0 := rowF32(in["inputs_embeds"], t, H)
		raw := rowF32(in["tokid"], t, LP)
		b.ple[t] = make([]float32, LP)
		c.m.combinePLE(b.ple[t], x0, raw, c.a, c.b)
		slot := t // plain: block-local slot = row
		if c.own && c.fn.Role != RolePlain {
			slot = oneHotSlot(in["onehot"], t, ctx)
		}
		b.rows[t] = rowIn{
			cosS: rowF32(in["cos_s"], t, hd), sinS: rowF32(in["sin_s"], t, hd),
			cosF: rowF32(in["cos_f"], t, ghd), sinF: rowF32(in["sin_f"], t, ghd),
			maskS: rowU16(in["mask_s"], t, maskW), maskF: rowU16(in["mask_f"], t, maskW),
			slotS: slot, slotF: slot,
		}
	}
	if c.own && c.fn.Role != RolePlain && b.rows[0].slotS < 0 {
		return nil, fmt.Errorf("r1 chunk [%d,%d): onehot row 0 is empty", c.a, c.b)
	}
	for l := c.a; l < c.b; l++ {
		view := views[g.Producer(l)]
		c.m.runLayer(l, b, view)
	}
	hid := c.out.get("hidden", coreml.Float16, c.desc.Outputs["hidden"].Shape...)
	for t := range N {
		putRow(hid, t, b.x[t])
	}
	out["hidden"] = hid
	if c.own && c.fn.Role != RoleDecode {
		for l := c.a; l < c.b; l++ {
			d := g.HeadDimOf(l)
			view := views[l]
			k := c.out.get(fmt.Sprintf("k_%d_out", l), coreml.Float16, 1, N, d)
			v := c.out.get(fmt.Sprintf("v_%d_out", l), coreml.Float16, 1, N, d)
			clear(k.Data)
			clear(v.Data)
			for t := range N {
				s := b.rows[t].slotS
				if s < 0 || s >= view.Slots {
					continue
				}
				copy(f16s(k)[t*d:(t+1)*d], view.K[s*d:(s+1)*d])
				copy(f16s(v)[t*d:(t+1)*d], view.V[s*d:(s+1)*d])
			}
			out[fmt.Sprintf("k_%d_out", l)], out[fmt.Sprintf("v_%d_out", l)] = k, v
		}
	}
	return out, nil
}
