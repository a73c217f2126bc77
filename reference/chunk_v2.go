package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
)

// v2Chunk executes one chunk of the coreml-stateful-chain-v2 contract
// (okayuji doc §2.3): one function with S = 1…MaxS rows serves decode,
// verify and prefill. Chunks holding own-KV layers are stateful (one
// k_cache_<l>/v_cache_<l> [NKV, CTX, hd] pair per layer); chunks of
// KV-shared layers are stateless and read sks/svs/skf/svf, the store
// layers' k_<l>_out/v_<l>_out emitted earlier in the same step.
type v2Chunk struct {
	m    *Model
	a, b int
	own  bool
	desc coreml.Description
	out  outputs
}

func newV2Chunk(m *Model, t *Twin, _ Function) *v2Chunk {
	g := &t.Geometry
	c := &v2Chunk{m: m, a: t.Layers[0], b: t.Layers[1], own: t.Layers[0] < g.FirstShared(), out: outputs{}}
	c.desc = v2Description(g, c.a, c.b, t.MaxS, t.StateRank4)
	return c
}

// v2Description lists the tensors of one v2 chunk. rank4 declares the
// states (and the store layers' outputs, and sks…) as [1, NKV, CTX, hd].
func v2Description(g *Geometry, a, b, maxS int, rank4 bool) coreml.Description {
	kv := func(sh ...int) []int {
		if rank4 {
			return append([]int{1}, sh...)
		}
		return sh
	}
	H, P, ctx := g.Hidden, g.PLEDim, g.Context
	f16 := coreml.Float16
	r := func(shape ...int) coreml.TensorSpec { return rangeSpec(f16, 0, 1, maxS, shape...) }
	in := map[string]coreml.TensorSpec{
		"hidden_in": r(1, H), "inputs_embeds": r(1, H), "tokid": r(1, b-a, P),
		"cos_s": r(1, g.HeadDim), "sin_s": r(1, g.HeadDim), "cos_f": r(1, g.GlobalHeadDim), "sin_f": r(1, g.GlobalHeadDim),
		"mask_s": r(1, ctx), "mask_f": r(1, ctx),
	}
	out := map[string]coreml.TensorSpec{"hidden": r(1, H)}
	states := map[string]coreml.TensorSpec{}
	if a < g.FirstShared() {
		in["onehot"] = r(1, ctx)
		for l := a; l < b; l++ {
			sh := kv(g.KVHeadsOf(l), ctx, g.HeadDimOf(l))
			states[fmt.Sprintf("k_cache_%d", l)] = spec(f16, sh...)
			states[fmt.Sprintf("v_cache_%d", l)] = spec(f16, sh...)
			if l == g.StoreLayer(g.LayerTypes[l]) {
				out[fmt.Sprintf("k_%d_out", l)] = spec(f16, sh...)
				out[fmt.Sprintf("v_%d_out", l)] = spec(f16, sh...)
			}
		}
	} else {
		sS := kv(g.KVHeads, ctx, g.HeadDim)
		sF := kv(g.KVHeadsOfFull(), ctx, g.GlobalHeadDim)
		in["sks"], in["svs"] = spec(f16, sS...), spec(f16, sS...)
		in["skf"], in["svf"] = spec(f16, sF...), spec(f16, sF...)
	}
	return coreml.Description{Inputs: in, Outputs: out, States: states}
}

func (c *v2Chunk) Description() coreml.Description { return c.desc }
func (c *v2Chunk) Close() error                    { return nil }

func (c *v2Chunk) NewState() (coreml.State, error) {
	if !c.own {
		return nil, fmt.Errorf("v2 chunk [%d,%d) is stateless", c.a, c.b)
	}
	return newState(c.desc.States), nil
}

func (c *v2Chunk) predict(in coreml.Features, st coreml.State, into coreml.Features) (coreml.Features, error) {
	if err := c.desc.CheckInputs(in); err != nil {
		return nil, fmt.Errorf("v2 chunk [%d,%d): %w", c.a, c.b, err)
	}
	g := &c.m.G
	H, P, LP, ctx := g.Hidden, g.PLEDim, g.Layers*g.PLEDim, g.Context
	hd, ghd := g.HeadDim, g.GlobalHeadDim
	S := in["hidden_in"].Shape[0]
	for name, t := range in {
		if t.Shape[0] != S && name != "sks" && name != "svs" && name != "skf" && name != "svf" {
			return nil, fmt.Errorf("v2 chunk [%d,%d): tensor %s has %d rows, hidden_in %d", c.a, c.b, name, t.Shape[0], S)
		}
	}
	views := map[int]kvView{}
	view := func(k, v *coreml.Tensor) kvView {
		r := len(k.Shape) // [NKV, CTX, hd] or [1, NKV, CTX, hd]
		h, slots, d := k.Shape[r-3], k.Shape[r-2], k.Shape[r-1]
		return kvView{K: f16s(k), V: f16s(v), Heads: h, Slots: slots, HeadStride: slots * d, SlotStride: d}
	}
	var s *state
	if c.own {
		var err error
		if s, err = stateOf(st, c.desc.States); err != nil {
			return nil, fmt.Errorf("v2 chunk [%d,%d): %w", c.a, c.b, err)
		}
		for l := c.a; l < c.b; l++ {
			views[l] = view(s.bufs[fmt.Sprintf("k_cache_%d", l)], s.bufs[fmt.Sprintf("v_cache_%d", l)])
		}
	} else {
		views[g.StoreLayer(Sliding)] = view(in["sks"], in["svs"])
		views[g.StoreLayer(Full)] = view(in["skf"], in["svf"])
	}
	b := &batch{x: make([][]float32, S), ple: make([][]float32, S), rows: make([]rowIn, S)}
	for t := range S {
		b.x[t] = rowF32(in["hidden_in"], t, H)
		x0 := rowF32(in["inputs_embeds"], t, H)
		raw := make([]float32, LP)
		widen(raw[c.a*P:c.b*P], rowU16(in["tokid"], t, (c.b-c.a)*P))
		b.ple[t] = make([]float32, LP)
		c.m.combinePLE(b.ple[t], x0, raw, c.a, c.b)
		slot := -1
		if c.own {
			if slot = oneHotSlot(in["onehot"], t, ctx); slot < 0 {
				return nil, fmt.Errorf("v2 chunk [%d,%d): onehot row %d is empty", c.a, c.b, t)
			}
		}
		b.rows[t] = rowIn{
			cosS: rowF32(in["cos_s"], t, hd), sinS: rowF32(in["sin_s"], t, hd),
			cosF: rowF32(in["cos_f"], t, ghd), sinF: rowF32(in["sin_f"], t, ghd),
			maskS: rowU16(in["mask_s"], t, ctx), maskF: rowU16(in["mask_f"], t, ctx),
			slotS: slot, slotF: slot,
		}
	}
	for l := c.a; l < c.b; l++ {
		c.m.runLayer(l, b, views[g.Producer(l)])
	}
	hid := c.out.get("hidden", coreml.Float16, S, H)
	for t := range S {
		putRow(hid, t, b.x[t])
	}
	out := coreml.Features{"hidden": hid}
	for name := range c.desc.Outputs {
		if name == "hidden" {
			continue
		}
		// k_<l>_out is the store layer's whole cache after this call's write.
		var l int
		var kv byte
		fmt.Sscanf(name, "%c_%d_out", &kv, &l)
		src := s.bufs[fmt.Sprintf("%c_cache_%d", kv, l)]
		dst := c.out.get(name, coreml.Float16, src.Shape...)
		copy(dst.Data, src.Data)
		out[name] = dst
	}
	return out, nil
}
