package reference

import (
	"math"

	"github.com/orchard-llm/orchard/f16"
)

// kvView addresses one layer's fp16 K and V cache: element (head h, slot s,
// dim d) sits at h*HeadStride + s*SlotStride + d. Host caches ([1,CTX,hd]),
// MLState buffers ([2n,HKV,slots,512]) and v2 states all map onto it.
type kvView struct {
	K, V                   []uint16
	Heads, Slots           int
	HeadStride, SlotStride int
}

func (v kvView) off(h, s int) int { return h*v.HeadStride + s*v.SlotStride }

// rowIn is what one row of a call carries besides its hidden state.
type rowIn struct {
	cosS, sinS, cosF, sinF []float32 // RoPE rows for the row's absolute position
	maskS, maskF           []uint16  // additive masks over the sliding / full views' slots
	slotS, slotF           int       // write slots of own sliding / full layers; −1 writes nothing
}

// batch is T rows moving through layers together (layer-major, as a graph
// runs them); each row's arithmetic depends only on that row's inputs and
// on the cache, so batching never changes a row's bits.
type batch struct {
	x    [][]float32 // [T][H] residual stream
	ple  [][]float32 // [T][L·P] combined per-layer inputs (only the chunk's layers filled)
	rows []rowIn
}

// masked reports whether an additive fp16 mask entry hides its slot.
// Entries at or below −30000 (−65504, −inf) contribute exp(−huge) = 0, so
// they are skipped rather than summed.
func masked(m uint16) bool { return m&0x8000 != 0 && m&0x7fff >= 0x7753 } // |m| ≥ 30000

// Model runs decoder layers with one set of weights.
type Model struct {
	G   Geometry
	W   *Weights
	f16 *f16Table
}

// NewModel wraps weights; layers the chunk does not hold may be nil.
func NewModel(g Geometry, w *Weights) *Model { return &Model{G: g, W: w, f16: newF16Table()} }

// runLayer moves every row of b through layer l. own layers first write
// their K/V rows into kv, then every row attends over kv.
func (m *Model) runLayer(l int, b *batch, kv kvView) {
	g := &m.G
	w := m.W.Layers[l]
	H, d, nq, nkv := g.Hidden, g.HeadDimOf(l), g.Heads, g.KVHeadsOf(l)
	full := g.IsFull(l)
	own := l < g.FirstShared()
	T := len(b.x)
	qs := make([][]float32, T)
	a := make([]float32, H)
	for t := range T {
		r := &b.rows[t]
		cos, sin := r.cosS, r.sinS
		if full {
			cos, sin = r.cosF, r.sinF
		}
		rmsNorm(a, b.x[t], w.InputNorm, g.Eps)
		q := make([]float32, nq*d)
		linear(q, w.Q, a)
		for h := range nq {
			qh := q[h*d : (h+1)*d]
			rmsNorm(qh, qh, w.QNorm, g.Eps)
			applyRope(qh, cos, sin)
		}
		qs[t] = q
		if !own {
			continue
		}
		k := make([]float32, nkv*d)
		v := make([]float32, nkv*d)
		linear(k, w.K, a)
		linear(v, w.V, a)
		slot := r.slotS
		if full {
			slot = r.slotF
		}
		if slot < 0 {
			continue // a padding row: an all-zero one-hot writes nothing
		}
		for h := range nkv {
			kh, vh := k[h*d:(h+1)*d], v[h*d:(h+1)*d]
			rmsNorm(kh, kh, w.KNorm, g.Eps)
			applyRope(kh, cos, sin)
			rmsNorm(vh, vh, nil, g.Eps)
			o := kv.off(h, slot)
			for i := range d {
				kv.K[o+i] = f16.FromF32(kh[i])
				kv.V[o+i] = f16.FromF32(vh[i])
			}
		}
	}
	P := g.PLEDim
	attn := make([]float32, nq*d)
	tmp := make([]float32, H)
	scores := make([]float64, kv.Slots)
	for t := range T {
		x := b.x[t]
		mask := b.rows[t].maskS
		if full {
			mask = b.rows[t].maskF
		}
		m.attend(attn, qs[t], kv, mask, nq, nkv, d, scores)
		linear(tmp, w.O, attn)
		rmsNorm(tmp, tmp, w.PostAttnNorm, g.Eps)
		for i := range x {
			x[i] += tmp[i]
		}
		f := g.FFNOf(l)
		mm := make([]float32, H)
		gate := make([]float32, f)
		up := make([]float32, f)
		rmsNorm(mm, x, w.PreFFNorm, g.Eps)
		linear(gate, w.Gate, mm)
		linear(up, w.Up, mm)
		for i := range gate {
			gate[i] = geluTanh(gate[i]) * up[i]
		}
		linear(tmp, w.Down, gate)
		rmsNorm(tmp, tmp, w.PostFFNorm, g.Eps)
		for i := range x {
			x[i] += tmp[i]
		}
		pg := make([]float32, P)
		linear(pg, w.PLGate, x)
		c := b.ple[t][l*P : (l+1)*P]
		for i := range pg {
			pg[i] = geluTanh(pg[i]) * c[i]
		}
		linear(tmp, w.PLProj, pg)
		rmsNorm(tmp, tmp, w.PostPLNorm, g.Eps)
		for i := range x {
			x[i] = f16.Round((x[i] + tmp[i]) * w.Scalar)
		}
	}
}

// attend computes softmax(q·Kᵀ + mask)·V per query head (scale 1.0, GQA).
// Exponentials and sums run in float64 so the result does not depend on
// the order slots are visited (ring order vs position order) beyond the
// final rounding.
func (m *Model) attend(out, q []float32, kv kvView, mask []uint16, nq, nkv, d int, scores []float64) {
	tab := m.f16
	group := nq / nkv
	for h := range nq {
		kh := h / group
		qh := q[h*d : (h+1)*d]
		best := math.Inf(-1)
		for s := range kv.Slots {
			if masked(mask[s]) {
				continue
			}
			o := kv.off(kh, s)
			krow := kv.K[o : o+d]
			var dot float32
			for i, kk := range krow {
				dot += qh[i] * tab[kk]
			}
			sc := float64(dot + tab[mask[s]])
			scores[s] = sc
			best = max(best, sc)
		}
		var sum float64
		acc := make([]float64, d)
		for s := range kv.Slots {
			if masked(mask[s]) {
				continue
			}
			e := math.Exp(scores[s] - best)
			sum += e
			o := kv.off(kh, s)
			for i, vv := range kv.V[o : o+d] {
				acc[i] += e * float64(tab[vv])
			}
		}
		oh := out[h*d : (h+1)*d]
		for i := range oh {
			if sum > 0 {
				oh[i] = float32(acc[i] / sum)
			} else {
				oh[i] = 0
			}
		}
	}
}

// combinePLE computes the per-layer inputs of layers [a, b) for one row:
// c_l = (RMSNorm(W_plmp·x0 · H^-½)[l] + raw_l) · 2^-½, rounded to fp16
// (they cross chunk boundaries as fp16). Each layer's slice is computed on
// its own so a chunk computing only its layers gets the same bits.
func (m *Model) combinePLE(dst, x0, raw []float32, a, b int) {
	g := &m.G
	P, H := g.PLEDim, g.Hidden
	scale := float32(1 / math.Sqrt(float64(H)))
	p := make([]float32, P)
	for l := a; l < b; l++ {
		linear(p, m.W.PLModelProj[l*P*H:(l+1)*P*H], x0)
		for i := range p {
			p[i] *= scale
		}
		rmsNorm(p, p, m.W.PLProjNorm, g.Eps)
		for i := range p {
			dst[l*P+i] = f16.Round((p[i] + raw[l*P+i]) * float32(math.Sqrt2/2))
		}
	}
}

// head returns the fp16 final-normed hidden state and writes soft-capped
// fp16 logits; the return value is the greedy token.
func (m *Model) head(x []float32, logits []float32) (normed []float32, token int) {
	g := &m.G
	normed = make([]float32, g.Hidden)
	rmsNorm(normed, x, m.W.Norm, g.Eps)
	roundF16Slice(normed)
	linear(logits, m.W.Embed, normed)
	return normed, softcapArgmax(logits, g.Softcap)
}
