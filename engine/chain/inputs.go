package chain

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/sidecars"
)

// Inputs are the rows the host (the CPU side of the seam) computes for a
// family's chunks: dequantized embedding and PLE rows and RoPE rows,
// computed exactly as that family's runtime does (okayuji doc §2.1, §3;
// stateful-3chunk doc §4.2, §5). It also serves the reference oracle, so
// the oracle is fed the same bits as the chunks.
type Inputs struct {
	Family     bundle.Family
	Hidden, LP int
	HeadDim    int
	GHeadDim   int
	Neg        uint16 // fp16 mask fill
	embed, ple *sidecars.Table
	invS, invF []float64
	ropeF32    bool             // v2: angles in float32
	npy        [4]*sidecars.NPY // stateful3: cos_s, sin_s, cos_f, sin_f
	// rope holds r1/v2 RoPE rows for every position, computed once at
	// load (about 6 MB at ctx 2048): a row is then a copy, not 384 cos/sin.
	rope [4][]uint16
	soft []SoftSpan // encoder rows at prompt positions (media turns)
}

// SoftSpan is an encoder's output standing in for the embeddings of the
// prompt positions [Start, Start+len(Rows)/H): raw fp16 rows of the hidden
// width, not scaled (text rows are, at dequant), whose per-layer input is
// token 0's (the pad token), as HF Gemma 4 and the published runtime do
// (multimodal doc §3.5).
type SoftSpan struct {
	Start int
	Rows  []uint16
}

// SetSoft replaces the soft spans the chain embeds; nil for none. Spans
// are kept by reference and must not change while they are set.
func (h *Inputs) SetSoft(spans []SoftSpan) { h.soft = spans }

// SoftRow returns the soft row set at position pos, or nil: what EmbedAt
// embeds there (an oracle fed by the host takes it with FeedRow).
func (h *Inputs) SoftRow(pos int) []uint16 {
	for _, sp := range h.soft {
		if n := len(sp.Rows) / h.Hidden; pos >= sp.Start && pos < sp.Start+n {
			i := pos - sp.Start
			return sp.Rows[i*h.Hidden : (i+1)*h.Hidden]
		}
	}
	return nil
}

// EmbedAt writes the x₀ row of position pos: its soft row when one is set
// there, else token tok's embedding.
func (h *Inputs) EmbedAt(pos, tok int, dst []uint16) error {
	if len(h.soft) > 0 {
		if r := h.SoftRow(pos); r != nil {
			copy(dst, r)
			return nil
		}
	}
	return h.embed.Row(tok, dst)
}

// PLEAt writes position pos's raw per-layer row: token 0's at a soft
// position, else token tok's.
func (h *Inputs) PLEAt(pos, tok int, dst []uint16) error {
	if len(h.soft) > 0 && h.SoftRow(pos) != nil {
		tok = 0
	}
	return h.PLE(tok, dst)
}

// PLESliceAt is PLESlice with PLEAt's rule for soft positions.
func (h *Inputs) PLESliceAt(pos, tok, a, b, P int, dst []uint16) error {
	if len(h.soft) > 0 && h.SoftRow(pos) != nil {
		tok = 0
	}
	return h.PLESlice(tok, a, b, P, dst)
}

// NewHost memory-maps a bundle's sidecars.
func NewInputs(b *bundle.Bundle) (*Inputs, error) {
	g := b.Geometry
	h := &Inputs{Family: b.Family, Hidden: g.Hidden, LP: g.Layers * g.PLEDim, HeadDim: g.HeadDim, GHeadDim: g.GlobalHeadDim}
	var err error
	path := func(f string) string { return filepath.Join(b.Dir, f) }
	switch b.Family {
	case bundle.R1:
		c := b.R1
		h.invS, h.invF, h.Neg = c.HostIO.InvSlide, c.HostIO.InvFull, sidecars.NegF16(c.HostIO.NEG)
		stage, st := c.Stage(b.Manifest.SidecarStage)
		if st == nil || st.PLE == nil {
			return nil, fmt.Errorf("bundle %s: sidecar stage %q is absent", b.Dir, stage)
		}
		if h.embed, err = openTable(b.Dir, st.Embed, stage == "int8", float32(math.Sqrt(st.Embed.RuntimeMult(c.Hidden))), false); err != nil {
			return nil, err
		}
		if h.ple, err = openTable(b.Dir, *st.PLE, stage == "int8", float32(math.Sqrt(st.PLE.RuntimeMult(c.PLEDim))), true); err != nil {
			h.Close()
			return nil, err
		}
	case bundle.V2:
		c := b.V2
		h.invS, h.invF, h.Neg, h.ropeF32 = c.HostIO.InvSlide, c.HostIO.InvFull, sidecars.NegF16(c.NEG), true
		if h.embed, err = openTable(b.Dir, c.Sidecars.Embed, c.Sidecars.Embed.DType == "int8", 1, false); err != nil {
			return nil, err
		}
		if c.Sidecars.PLE != nil {
			if h.ple, err = openTable(b.Dir, *c.Sidecars.PLE, c.Sidecars.PLE.DType == "int8", 1, true); err != nil {
				h.Close()
				return nil, err
			}
		}
	case bundle.Stateful3, bundle.Stateful3Logits:
		c := b.S3
		h.Neg = 0xfbff // −65504, the stateful engine's fill
		if h.embed, err = sidecars.OpenInt8(path(bundle.S3Embed), path(bundle.S3EmbedScales), g.Vocab, g.Hidden, sidecars.ScaleF16, float32(c.EmbedMult())); err != nil {
			return nil, err
		}
		if h.ple, err = sidecars.OpenInt8(path(bundle.S3PLE), path(bundle.S3PLEScales), g.Vocab, h.LP, sidecars.ScaleF16, float32(c.PLEMult())); err != nil {
			h.Close()
			return nil, err
		}
		for i, n := range []string{bundle.S3CosSliding, bundle.S3SinSliding, bundle.S3CosFull, bundle.S3SinFull} {
			if h.npy[i], err = sidecars.OpenNPY(path(n)); err != nil {
				h.Close()
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("engine: no host inputs for family %q", b.Family)
	}
	if h.invS != nil {
		h.tabulateRope(g.Context)
	}
	return h, nil
}

// tabulateRope computes the family's RoPE rows for positions [0, ctx).
func (h *Inputs) tabulateRope(ctx int) {
	hd, ghd := h.HeadDim, h.GHeadDim
	h.rope = [4][]uint16{make([]uint16, ctx*hd), make([]uint16, ctx*hd), make([]uint16, ctx*ghd), make([]uint16, ctx*ghd)}
	for p := range ctx {
		h.ropeRow(p, h.rope[0][p*hd:(p+1)*hd], h.rope[1][p*hd:(p+1)*hd], h.rope[2][p*ghd:(p+1)*ghd], h.rope[3][p*ghd:(p+1)*ghd])
	}
}

// ropeRow computes one position's rows with the family's precision.
func (h *Inputs) ropeRow(pos int, cosS, sinS, cosF, sinF []uint16) {
	if h.ropeF32 {
		sidecars.RopeRowF32(h.invS, pos, cosS, sinS)
		sidecars.RopeRowF32(h.invF, pos, cosF, sinF)
		return
	}
	sidecars.RopeRowF64(h.invS, pos, cosS, sinS)
	sidecars.RopeRowF64(h.invF, pos, cosF, sinF)
}

// openTable opens an r1/v2 sidecar: int8 with f32 scales, or raw fp16.
func openTable(dir string, f bundle.SidecarFile, int8 bool, mult float32, ple bool) (*sidecars.Table, error) {
	if int8 {
		return sidecars.OpenInt8(filepath.Join(dir, f.File), filepath.Join(dir, f.ScaleFile(ple)), f.Shape[0], f.Shape[1], sidecars.ScaleF32, mult)
	}
	return sidecars.OpenF16(filepath.Join(dir, f.File), f.Shape[0], f.Shape[1])
}

// Embed writes token tok's x₀ row (fp16 bits).
func (h *Inputs) Embed(tok int, dst []uint16) error { return h.embed.Row(tok, dst) }

// PLE writes token tok's raw per-layer row [L·P] (zeros when the bundle has none).
func (h *Inputs) PLE(tok int, dst []uint16) error {
	if h.ple == nil {
		clear(dst)
		return nil
	}
	return h.ple.Row(tok, dst)
}

// PLESlice writes layers [a, b) of the per-layer row (v2 feeds per-chunk slices).
func (h *Inputs) PLESlice(tok, a, b, P int, dst []uint16) error {
	if h.ple == nil {
		clear(dst)
		return nil
	}
	return h.ple.RowSlice(tok, a*P, (b-a)*P, dst)
}

// Rope writes the RoPE rows of an absolute position.
func (h *Inputs) Rope(pos int, cosS, sinS, cosF, sinF []uint16) error {
	switch {
	case h.npy[0] != nil:
		for i, dst := range [][]uint16{cosS, sinS, cosF, sinF} {
			if err := h.npy[i].Row(pos, dst); err != nil {
				return fmt.Errorf("RoPE table row %d: %w", pos, err)
			}
		}
	case pos < len(h.rope[0])/max(h.HeadDim, 1):
		hd, ghd := h.HeadDim, h.GHeadDim
		copy(cosS, h.rope[0][pos*hd:(pos+1)*hd])
		copy(sinS, h.rope[1][pos*hd:(pos+1)*hd])
		copy(cosF, h.rope[2][pos*ghd:(pos+1)*ghd])
		copy(sinF, h.rope[3][pos*ghd:(pos+1)*ghd])
	default:
		h.ropeRow(pos, cosS, sinS, cosF, sinF)
	}
	return nil
}

// RopeRows is the number of positions the stateful3 .npy RoPE tables hold
// (the fewest of the four), 0 for families that compute RoPE.
func (h *Inputs) RopeRows() int {
	rows := 0
	for i, n := range h.npy {
		if n == nil {
			return 0
		}
		if i == 0 || n.Shape[0] < rows {
			rows = n.Shape[0]
		}
	}
	return rows
}

// Close unmaps every table.
func (h *Inputs) Close() error {
	var first error
	for _, t := range []*sidecars.Table{h.embed, h.ple} {
		if t != nil {
			if err := t.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	for _, n := range h.npy {
		if n != nil {
			if err := n.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
