package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/f16"
)

// HostInputs is the host-side work of a bundle family: dequantized
// embedding and PLE rows and RoPE rows, exactly as that family's driver
// computes them. The oracle uses it so it is fed the same bits as the chunks.
type HostInputs interface {
	Embed(tok int, dst []uint16) error // x₀, fp16, scaled as the family scales it
	PLE(tok int, dst []uint16) error   // raw per-layer row [L·P], fp16
	Rope(pos int, cosS, sinS, cosF, sinF []uint16) error
}

// Oracle is the ground truth: the whole decoder in one loop over
// position-indexed caches, no chunks, no rings, no host cache plumbing.
type Oracle struct {
	m     *Model
	host  HostInputs
	kv    []kvView // per own layer, Context slots
	n     int
	buf   []uint16
	cs    [4][]uint16
	maskS []uint16
	maskF []uint16
}

// NewOracle builds an oracle over a complete set of weights.
func NewOracle(g Geometry, w *Weights, host HostInputs) (*Oracle, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	o := &Oracle{m: NewModel(g, w), host: host}
	for l := range g.FirstShared() {
		d, h := g.HeadDimOf(l), g.KVHeadsOf(l)
		o.kv = append(o.kv, kvView{K: make([]uint16, h*g.Context*d), V: make([]uint16, h*g.Context*d),
			Heads: h, Slots: g.Context, HeadStride: g.Context * d, SlotStride: d})
	}
	o.buf = make([]uint16, max(g.Hidden, g.Layers*g.PLEDim))
	for i := range o.cs {
		o.cs[i] = make([]uint16, max(g.HeadDim, g.GlobalHeadDim))
	}
	o.maskS = make([]uint16, g.Context)
	o.maskF = make([]uint16, g.Context)
	return o, nil
}

// Len is the number of tokens fed.
func (o *Oracle) Len() int { return o.n }

// Feed appends one token and returns the soft-capped fp16 logits after it
// and their argmax.
func (o *Oracle) Feed(tok int) ([]float32, int, error) { return o.feed(tok, nil) }

// FeedRow appends a soft position: row (fp16, the hidden width) is its
// embedding as it is, and its per-layer input is token 0's, as a media
// span's rows enter the model (multimodal doc §3.5).
func (o *Oracle) FeedRow(row []uint16) ([]float32, int, error) {
	if len(row) != o.m.G.Hidden {
		return nil, 0, fmt.Errorf("oracle: a soft row of %d values, the hidden width is %d", len(row), o.m.G.Hidden)
	}
	return o.feed(0, row)
}

func (o *Oracle) feed(tok int, soft []uint16) ([]float32, int, error) {
	g := &o.m.G
	p := o.n
	if p >= g.Context {
		return nil, 0, fmt.Errorf("oracle: context of %d tokens is full", g.Context)
	}
	H, LP := g.Hidden, g.Layers*g.PLEDim
	x := make([]float32, H)
	if soft != nil {
		copy(o.buf[:H], soft)
	} else if err := o.host.Embed(tok, o.buf[:H]); err != nil {
		return nil, 0, err
	}
	widen(x, o.buf[:H])
	raw := make([]float32, LP)
	if err := o.host.PLE(tok, o.buf[:LP]); err != nil {
		return nil, 0, err
	}
	widen(raw, o.buf[:LP])
	ple := make([]float32, LP)
	o.m.combinePLE(ple, x, raw, 0, g.Layers)
	hd, ghd := g.HeadDim, g.GlobalHeadDim
	if err := o.host.Rope(p, o.cs[0][:hd], o.cs[1][:hd], o.cs[2][:ghd], o.cs[3][:ghd]); err != nil {
		return nil, 0, err
	}
	for s := range g.Context {
		o.maskF[s], o.maskS[s] = negMask, negMask
		if s <= p {
			o.maskF[s] = 0
			if p-s < g.SlidingWindow {
				o.maskS[s] = 0
			}
		}
	}
	r := rowIn{cosS: widened(o.cs[0][:hd]), sinS: widened(o.cs[1][:hd]), cosF: widened(o.cs[2][:ghd]),
		sinF: widened(o.cs[3][:ghd]), maskS: o.maskS, maskF: o.maskF, slotS: p, slotF: p}
	b := &batch{x: [][]float32{x}, ple: [][]float32{ple}, rows: []rowIn{r}}
	for l := range g.Layers {
		o.m.runLayer(l, b, o.kv[g.Producer(l)])
	}
	logits := make([]float32, g.Vocab)
	_, tok2 := o.m.head(x, logits)
	o.n++
	return logits, tok2, nil
}

// Forward recomputes the whole sequence from scratch and returns the
// logits after every position.
func Forward(g Geometry, w *Weights, host HostInputs, tokens []int) ([][]float32, error) {
	o, err := NewOracle(g, w, host)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(tokens))
	for i, t := range tokens {
		if out[i], _, err = o.Feed(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Greedy feeds the prompt, then n greedy tokens, and returns those n.
func Greedy(g Geometry, w *Weights, host HostInputs, prompt []int, n int) ([]int, error) {
	o, err := NewOracle(g, w, host)
	if err != nil {
		return nil, err
	}
	var next int
	for _, t := range prompt {
		if _, next, err = o.Feed(t); err != nil {
			return nil, err
		}
	}
	out := make([]int, 0, n)
	for len(out) < n {
		out = append(out, next)
		if len(out) == n {
			break
		}
		if _, next, err = o.Feed(next); err != nil {
			return out, err
		}
	}
	return out, nil
}

// negMask is −65504, the stateful engine's fill value.
const negMask uint16 = 0xfbff

func widen(dst []float32, src []uint16) {
	for i, h := range src {
		dst[i] = f16.ToF32(h)
	}
}

func widened(src []uint16) []float32 {
	out := make([]float32, len(src))
	widen(out, src)
	return out
}
