package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
)

// s3Chunk executes the stateful 3-chunk contract (stateful-3chunk doc §3):
// chunk_1 and chunk_2 keep KV in two MLStates, kv_cache_sliding
// (2·ns, HKV, W, maxhd), a ring written at ring_pos, and kv_cache_full
// (2·nf, HKV, ctx, maxhd) written at current_pos; slot 2i is K and 2i+1 is V
// of the chunk's i-th own layer of that type. chunk_3 is stateless and reads
// the producers' caches as kv13_*/kv14_*. T = 1 (infer) or 8 (prefill_b8);
// all T rows are written before any row attends, exactly as the graph does.
type s3Chunk struct {
	m      *Model
	kind   string
	a, b   int
	T      int
	logits bool
	// logitsF32: the logits output is fp32, holding the fp16 values
	// widened (a graph computing in fp16 with an fp32 output).
	logitsF32 bool
	desc      coreml.Description
	slotOf    map[int]int // own layer → index among the chunk's own layers of its type
	ns, nf    int
	out       outputs
}

func newS3Chunk(m *Model, t *Twin, fn Function) (*s3Chunk, error) {
	g := &t.Geometry
	c := &s3Chunk{m: m, kind: t.Kind, a: t.Layers[0], b: t.Layers[1], T: fn.N, logits: t.Logits, logitsF32: t.LogitsF32, slotOf: map[int]int{}, out: outputs{}}
	if c.T < 1 || c.T > g.SlidingWindow {
		return nil, fmt.Errorf("stateful3 chunk: T=%d outside 1…%d", c.T, g.SlidingWindow)
	}
	for l := c.a; l < min(c.b, g.FirstShared()); l++ {
		if g.IsFull(l) {
			c.slotOf[l] = c.nf
			c.nf++
		} else {
			c.slotOf[l] = c.ns
			c.ns++
		}
	}
	c.desc = s3Description(g, t.Kind, c.T, c.ns, c.nf, t.Logits, t.LogitsF32)
	return c, nil
}

// s3Description lists one stateful3 chunk function's tensors.
func s3Description(g *Geometry, kind string, T, ns, nf int, logits, logitsF32 bool) coreml.Description {
	H, LP, ctx, W := g.Hidden, g.Layers*g.PLEDim, g.Context, g.SlidingWindow
	hkv, hd, ghd := g.KVHeads, g.HeadDim, g.GlobalHeadDim
	maxhd := max(hd, ghd)
	f16, i32 := coreml.Float16, coreml.Int32
	in := map[string]coreml.TensorSpec{
		"hidden_states":       spec(f16, 1, T, H),
		"causal_mask_full":    spec(f16, 1, 1, T, ctx),
		"causal_mask_sliding": spec(f16, 1, 1, T, W),
		"cos_s":               spec(f16, 1, 1, T, hd), "sin_s": spec(f16, 1, 1, T, hd),
		"cos_f": spec(f16, 1, 1, T, ghd), "sin_f": spec(f16, 1, 1, T, ghd),
	}
	out := map[string]coreml.TensorSpec{}
	states := map[string]coreml.TensorSpec{}
	switch kind {
	case KindS3Chunk1, KindS3Chunk2:
		in["current_pos"], in["ring_pos"] = spec(i32, 1), spec(i32, 1)
		states["kv_cache_sliding"] = spec(f16, 2*max(ns, 1), hkv, W, maxhd)
		states["kv_cache_full"] = spec(f16, 2*max(nf, 1), hkv, ctx, maxhd)
		out["hidden_states_out"] = spec(f16, 1, T, H)
		if kind == KindS3Chunk1 {
			in["per_layer_raw"] = spec(f16, 1, T, LP)
			out["per_layer_combined_out"] = spec(f16, 1, T, LP)
		} else {
			in["per_layer_combined"] = spec(f16, 1, T, LP)
			out["kv13_k"], out["kv13_v"] = spec(f16, 1, hkv, W, hd), spec(f16, 1, hkv, W, hd)
			out["kv14_k"], out["kv14_v"] = spec(f16, 1, hkv, ctx, ghd), spec(f16, 1, hkv, ctx, ghd)
		}
	case KindS3Chunk3:
		in["per_layer_combined"] = spec(f16, 1, T, LP)
		in["kv13_k"], in["kv13_v"] = spec(f16, 1, hkv, W, hd), spec(f16, 1, hkv, W, hd)
		in["kv14_k"], in["kv14_v"] = spec(f16, 1, hkv, ctx, ghd), spec(f16, 1, hkv, ctx, ghd)
		if logits {
			out["logits"] = spec(f16, 1, 1, g.Vocab)
			if logitsF32 {
				out["logits"] = spec(coreml.Float32, 1, 1, g.Vocab)
			}
		} else {
			out["token_id"], out["token_logit"] = spec(i32, 1), spec(f16, 1)
			out["hidden_normed"] = spec(f16, 1, 1, H)
		}
	}
	return coreml.Description{Inputs: in, Outputs: out, States: states}
}

func (c *s3Chunk) Description() coreml.Description { return c.desc }
func (c *s3Chunk) Close() error                    { return nil }

func (c *s3Chunk) NewState() (coreml.State, error) {
	if c.kind == KindS3Chunk3 {
		return nil, fmt.Errorf("stateful3 chunk_3 is stateless")
	}
	return newState(c.desc.States), nil
}

// layerView maps own layer l onto its slots of the chunk's state.
func (c *s3Chunk) layerView(s *state, l int) kvView {
	g := &c.m.G
	name, slots := "kv_cache_sliding", g.SlidingWindow
	if g.IsFull(l) {
		name, slots = "kv_cache_full", g.Context
	}
	buf := f16s(s.bufs[name])
	maxhd := max(g.HeadDim, g.GlobalHeadDim)
	per := g.KVHeads * slots * maxhd
	i := c.slotOf[l]
	return kvView{K: buf[2*i*per : (2*i+1)*per], V: buf[(2*i+1)*per : (2*i+2)*per],
		Heads: g.KVHeads, Slots: slots, HeadStride: slots * maxhd, SlotStride: maxhd}
}

func (c *s3Chunk) predict(in coreml.Features, st coreml.State, into coreml.Features) (coreml.Features, error) {
	name := c.kind
	if err := c.desc.CheckInputs(in); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	g := &c.m.G
	H, LP, ctx, W, T := g.Hidden, g.Layers*g.PLEDim, g.Context, g.SlidingWindow, c.T
	hd, ghd := g.HeadDim, g.GlobalHeadDim
	views := map[int]kvView{}
	cur, ring := 0, 0
	var s *state
	if c.kind != KindS3Chunk3 {
		var err error
		if s, err = stateOf(st, c.desc.States); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cur, ring = int(in["current_pos"].I32(0)), int(in["ring_pos"].I32(0))
		// slice_update of T rows: the real graph fails when a write runs
		// past the end of a buffer; it never wraps.
		if cur < 0 || cur+T > ctx {
			return nil, fmt.Errorf("%s: current_pos %d + %d rows exceeds the %d-slot full cache", name, cur, T, ctx)
		}
		if ring < 0 || ring+T > W {
			return nil, fmt.Errorf("%s: ring_pos %d + %d rows wraps the %d-slot sliding ring", name, ring, T, W)
		}
		for l := range c.slotOf {
			views[l] = c.layerView(s, l)
		}
	} else {
		v := func(k, vv string, slots, d int) kvView {
			return kvView{K: f16s(in[k]), V: f16s(in[vv]), Heads: g.KVHeads, Slots: slots, HeadStride: slots * d, SlotStride: d}
		}
		views[g.StoreLayer(Sliding)] = v("kv13_k", "kv13_v", W, hd)
		views[g.StoreLayer(Full)] = v("kv14_k", "kv14_v", ctx, ghd)
	}
	b := &batch{x: make([][]float32, T), ple: make([][]float32, T), rows: make([]rowIn, T)}
	for t := range T {
		b.x[t] = rowF32(in["hidden_states"], t, H)
		if c.kind == KindS3Chunk1 {
			b.ple[t] = make([]float32, LP)
			c.m.combinePLE(b.ple[t], b.x[t], rowF32(in["per_layer_raw"], t, LP), 0, g.Layers)
		} else {
			b.ple[t] = rowF32(in["per_layer_combined"], t, LP)
		}
		b.rows[t] = rowIn{
			cosS: rowF32(in["cos_s"], t, hd), sinS: rowF32(in["sin_s"], t, hd),
			cosF: rowF32(in["cos_f"], t, ghd), sinF: rowF32(in["sin_f"], t, ghd),
			maskS: rowU16(in["causal_mask_sliding"], t, W), maskF: rowU16(in["causal_mask_full"], t, ctx),
			slotS: ring + t, slotF: cur + t,
		}
	}
	for l := c.a; l < c.b; l++ {
		c.m.runLayer(l, b, views[g.Producer(l)])
	}
	out := coreml.Features{}
	switch c.kind {
	case KindS3Chunk1, KindS3Chunk2:
		hid := c.out.get("hidden_states_out", coreml.Float16, 1, T, H)
		for t := range T {
			putRow(hid, t, b.x[t])
		}
		out["hidden_states_out"] = hid
		if c.kind == KindS3Chunk1 {
			ple := c.out.get("per_layer_combined_out", coreml.Float16, 1, T, LP)
			for t := range T {
				putRow(ple, t, b.ple[t])
			}
			out["per_layer_combined_out"] = ple
		} else {
			out["kv13_k"], out["kv13_v"] = c.sliceView(views[g.StoreLayer(Sliding)], hd, "kv13")
			out["kv14_k"], out["kv14_v"] = c.sliceView(views[g.StoreLayer(Full)], ghd, "kv14")
		}
	case KindS3Chunk3:
		// The head reads only the last row (prefill_b8 emits one token).
		logits := make([]float32, g.Vocab)
		normed, tok := c.m.head(b.x[T-1], logits)
		if c.logits {
			lt := c.out.get("logits", coreml.Float16, 1, 1, g.Vocab)
			putRow(lt, 0, logits)
			if c.logitsF32 {
				wide := c.out.get("logits_f32", coreml.Float32, 1, 1, g.Vocab)
				for i, h := range f16s(lt) {
					wide.SetF32(i, f16.ToF32(h))
				}
				lt = wide
			}
			out["logits"] = lt
		} else {
			id := c.out.get("token_id", coreml.Int32, 1)
			id.SetI32(0, int32(tok))
			tl := c.out.get("token_logit", coreml.Float16, 1)
			tl.SetF16(0, f16.FromF32(logits[tok]))
			hn := c.out.get("hidden_normed", coreml.Float16, 1, 1, H)
			putRow(hn, 0, normed)
			out["token_id"], out["token_logit"], out["hidden_normed"] = id, tl, hn
		}
	}
	return out, nil
}

// sliceView copies a producer's cache, dropping the padding past d, into a
// contiguous [1, HKV, slots, d] tensor (kv13 is sliced to 256 on E2B).
func (c *s3Chunk) sliceView(v kvView, d int, name string) (*coreml.Tensor, *coreml.Tensor) {
	k := c.out.get(name+"_k", coreml.Float16, 1, v.Heads, v.Slots, d)
	vv := c.out.get(name+"_v", coreml.Float16, 1, v.Heads, v.Slots, d)
	kd, vd := f16s(k), f16s(vv)
	for h := range v.Heads {
		for s := range v.Slots {
			o := v.off(h, s)
			dst := (h*v.Slots + s) * d
			copy(kd[dst:dst+d], v.K[o:o+d])
			copy(vd[dst:dst+d], v.V[o:o+d])
		}
	}
	return k, vv
}
