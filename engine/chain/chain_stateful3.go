package chain

import (
	"errors"
	"fmt"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
	"github.com/orchard-llm/orchard/sidecars"
)

// s3Chain drives the stateful 3-chunk bundles (stateful-3chunk doc §3, §4).
// chunk_1 and chunk_2 keep KV in MLStates shared by their default (T=1)
// and batched prefill functions; chunk_3 is stateless and turns the last
// row into a token (or logits, cardbud). Differences from the published
// engine, all for exactness or speed:
//   - the batched prefill is used only while the batch stays below the
//     sliding window, so no row ever attends slots its own batch overwrote
//     (the published engine's causal leak past W, §3.4); with
//     Options.BatchPastWindow it goes on past W with the causal mask of
//     §3.4 (b), which is causal but sees a shorter window (not exact);
//   - after a misaligned resume it runs T=1 until aligned, then batches;
//   - chunk_3 runs only for the last prompt token (it has no side effects).
type s3Chain struct {
	coldCount
	b    *bundle.Bundle
	rt   coreml.Runtime
	host *Inputs
	o    Options

	H, LP, ctx, W, hd, ghd, vocab int
	logits                        bool

	logitsName string // chunk_3's logits output ("logits" on cardbud's card), "" for token_id

	infer  [3]*graph
	batch  [3]*graph // prefill_b<T> for chunk_1 and chunk_2 (nil: unavailable)
	T      int       // batch rows (16, 8 or 4), 0 when batching is off
	s1, s2 coreml.State
	in     [2]*s3Inputs // T=1 and T=batch host tensors
	out    []float32    // logits of the last prediction (logits bundles)
	pos    int
	notes  []string
}

// s3Inputs are the host tensors of one row count.
type s3Inputs struct {
	hidden, ple, maskF, maskS *coreml.Tensor
	cosS, sinS, cosF, sinF    *coreml.Tensor
	cur, ring                 *coreml.Tensor
}

func openS3(b *bundle.Bundle, rt coreml.Runtime, host *Inputs, o Options) (*s3Chain, error) {
	c := &s3Chain{b: b, rt: rt, host: host, o: o}
	// T=1 is each chunk's default function ("infer" in multifunction
	// builds, "main" otherwise), as the published engine loads it.
	for i, ch := range b.Chunks {
		gr, err := loadGraph(rt, ch.Path, "", o.ComputeUnits, &c.cold)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("load %s: %w", ch.Name, err)
		}
		c.infer[i] = gr
	}
	// The loaded models are the contract: chunk_1 for the geometry, chunk_3
	// for the head (token_id, or logits in whatever float dtype).
	notes, err := refineS3(b, c.infer[0].desc, host)
	c.notes = append(c.notes, notes...)
	if err != nil {
		c.Close()
		return nil, err
	}
	// chunk_3's head: token_id, else the one floating output whose last
	// dimension is the vocabulary, whatever its name (cardbud's card
	// never names it).
	logitsName, err := s3HeadOutput(c.infer[2].name, c.infer[2].desc, b.Geometry.Vocab)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("bundle %s: %w", b.Dir, err)
	}
	hasLogits := logitsName != ""
	if hasLogits != (b.Family == bundle.Stateful3Logits) {
		fam := bundle.Stateful3
		if hasLogits {
			fam = bundle.Stateful3Logits
		}
		note := fmt.Sprintf("%s declares %s: the bundle is %s (its metadata.json said otherwise or nothing)", c.infer[2].name, map[bool]string{true: "logits (" + logitsName + ")", false: "token_id"}[hasLogits], fam)
		if err := b.Refine(fam, b.Geometry, []string{note}); err != nil {
			c.Close()
			return nil, err
		}
		c.notes = append(c.notes, note)
	}
	g := b.Geometry
	c.H, c.LP, c.ctx, c.W, c.hd, c.ghd, c.vocab = g.Hidden, g.Layers*g.PLEDim, g.Context, g.SlidingWindow, g.HeadDim, g.GlobalHeadDim, g.Vocab
	c.logits, c.logitsName = hasLogits, logitsName
	c.in[0] = c.inputs(rt, 1)
	c.bind(c.infer[:], c.in[0])
	c.keepPassed(c.infer[:2])
	if !o.NoBatchedPrefill {
		c.probeBatch(rt)
	}
	if err := c.Reset(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// probeBatch loads the widest batched prefill function that chunk_1 and
// chunk_2 both have (prefill_b16, b8, b4 in the published engine's order),
// among those listed where the runtime or metadata.json lists functions. A
// failed load (iPhone, old OS) means token-by-token prefill, not an error
// (G20). A width above the sliding window is never usable.
func (c *s3Chain) probeBatch(rt coreml.Runtime) {
	sets := []functionSet{functionsOf(rt, c.b.Chunks[0]), functionsOf(rt, c.b.Chunks[1])}
	for _, s := range sets {
		if s.note != "" {
			c.notes = append(c.notes, s.note)
		}
	}
	for _, T := range s3BatchProbe {
		fn := fmt.Sprintf("prefill_b%d", T)
		if T > c.W || !allHave(sets, fn) {
			continue
		}
		var gs [2]*graph
		var err error
		for i := range 2 {
			if gs[i], err = loadGraph(rt, c.b.Chunks[i].Path, fn, c.o.ComputeUnits, &c.cold); err != nil {
				break
			}
		}
		if err != nil {
			gs[0].close()
			c.notes = append(c.notes, fmt.Sprintf("batched prefill %s unavailable: %v", fn, err))
			continue
		}
		c.batch[0], c.batch[1], c.T = gs[0], gs[1], T
		c.in[1] = c.inputs(rt, T)
		c.bind(c.batch[:2], c.in[1])
		c.keepPassed(c.batch[:2])
		return
	}
}

func (c *s3Chain) inputs(rt coreml.Runtime, T int) *s3Inputs {
	a := func(dt coreml.DType, shape ...int) *coreml.Tensor { return rt.Alloc(shape, dt) }
	f := coreml.Float16
	return &s3Inputs{hidden: a(f, 1, T, c.H), ple: a(f, 1, T, c.LP), maskF: a(f, 1, 1, T, c.ctx), maskS: a(f, 1, 1, T, c.W),
		cosS: a(f, 1, 1, T, c.hd), sinS: a(f, 1, 1, T, c.hd), cosF: a(f, 1, 1, T, c.ghd), sinF: a(f, 1, 1, T, c.ghd),
		cur: a(coreml.Int32, 1), ring: a(coreml.Int32, 1)}
}

// keepPassed leaves what chunk_1 and chunk_2 hand on (hidden states, the
// combined per-layer input, kv13/kv14) in Core ML memory: chunk_3 reads
// them there, so the host copies nothing of them (about 5 MB a step at E2B).
func (c *s3Chain) keepPassed(gs []*graph) {
	for _, g := range gs {
		if g != nil {
			g.keep("hidden_states_out", "per_layer_combined_out", "kv13_k", "kv13_v", "kv14_k", "kv14_v")
		}
	}
}

func (c *s3Chain) bind(gs []*graph, in *s3Inputs) {
	for _, g := range gs {
		if g == nil {
			continue
		}
		g.set("causal_mask_full", in.maskF)
		g.set("causal_mask_sliding", in.maskS)
		g.set("cos_s", in.cosS)
		g.set("sin_s", in.sinS)
		g.set("cos_f", in.cosF)
		g.set("sin_f", in.sinF)
		g.set("current_pos", in.cur)
		g.set("ring_pos", in.ring)
	}
	gs[0].set("hidden_states", in.hidden)
	gs[0].set("per_layer_raw", in.ple)
}

func (c *s3Chain) Position() int { return c.pos }

// Logits of the last prediction (logits bundles only).
func (c *s3Chain) Logits() []float32 { return c.out }

func (c *s3Chain) Capabilities() Capabilities {
	caps := Capabilities{Family: c.b.Family, Context: c.ctx, Logits: c.logits, Notes: c.notes, PrefillWidths: []int{1}}
	if c.T > 0 {
		caps.PrefillWidths = []int{c.T, 1}
	}
	caps.MinRewind = c.minRewind()
	return caps
}

// minRewind: while the ring has not wrapped every slot still holds its
// own position; after that, slots of positions below pos−W are gone and
// only one step back is exact.
func (c *s3Chain) minRewind() int {
	if c.pos <= c.W {
		return 0
	}
	return c.pos - 1
}

// Reset drops the states and makes fresh zero-filled ones.
func (c *s3Chain) Reset() error {
	c.closeStates()
	var err error
	if c.s1, err = c.infer[0].m.NewState(); err != nil {
		return fmt.Errorf("%s: new state: %w", c.infer[0].name, err)
	}
	if c.s2, err = c.infer[1].m.NewState(); err != nil {
		return fmt.Errorf("%s: new state: %w", c.infer[1].name, err)
	}
	c.pos = 0
	return nil
}

// ErrRewindRing is returned for a rewind the wrapped ring cannot honour.
var ErrRewindRing = errors.New("the sliding-window ring has wrapped past that position")

func (c *s3Chain) Rewind(pos int) error {
	if pos < 0 || pos > c.pos {
		return fmt.Errorf("rewind to %d: position is %d", pos, c.pos)
	}
	if pos < c.minRewind() {
		return fmt.Errorf("rewind from %d to %d: %w (at most to %d)", c.pos, pos, ErrRewindRing, c.minRewind())
	}
	c.pos = pos
	return nil
}

func (c *s3Chain) Verify([]int) ([]int, error) { return nil, ErrNoVerify }

func (c *s3Chain) Decode(tok int) (int, error) { return c.step([]int{tok}, true) }

// Prefill batches while the rows stay below W (exact) — and past W with
// BatchPastWindow — aligning first with T=1 steps, and leaves the last
// token to a T=1 step with chunk_3.
func (c *s3Chain) Prefill(tokens []int) (int, error) {
	n := len(tokens)
	if err := prefillFits(n, c.pos, c.ctx); err != nil {
		return 0, err
	}
	for idx := 0; idx < n-1; {
		if T := c.T; T > 0 && c.pos%T == 0 && c.batchable(c.pos) && idx+T <= n-1 {
			if _, err := c.step(tokens[idx:idx+T], false); err != nil {
				return 0, err
			}
			idx += T
			continue
		}
		if _, err := c.step(tokens[idx:idx+1], false); err != nil {
			return 0, err
		}
		idx++
	}
	return c.step(tokens[n-1:], true)
}

// batchable reports whether a batch of T rows may start at p: below the
// window, where it is exact; past it only with BatchPastWindow, and only
// where its T ring slots do not wrap.
func (c *s3Chain) batchable(p int) bool {
	if p+c.T <= c.W {
		return true
	}
	return c.o.BatchPastWindow && p >= c.W && sidecars.RingPos(p, c.W)+c.T <= c.W
}

// step feeds T rows at the current position; with head it also runs
// chunk_3 and returns its token.
func (c *s3Chain) step(toks []int, head bool) (int, error) {
	T, p := len(toks), c.pos
	if p+T > c.ctx {
		return 0, ErrContextFull
	}
	in, gs := c.in[0], c.infer[:]
	if T > 1 {
		in, gs = c.in[1], c.batch[:]
	}
	hid, ple := in.hidden.U16(), in.ple.U16()
	mf, ms := in.maskF.U16(), in.maskS.U16()
	cs, ss, cf, sf := in.cosS.U16(), in.sinS.U16(), in.cosF.U16(), in.sinF.U16()
	for t, tok := range toks {
		if err := c.host.EmbedAt(p+t, tok, hid[t*c.H:(t+1)*c.H]); err != nil {
			return 0, err
		}
		if err := c.host.PLEAt(p+t, tok, ple[t*c.LP:(t+1)*c.LP]); err != nil {
			return 0, err
		}
		sidecars.MaskFullRow(mf[t*c.ctx:(t+1)*c.ctx], p+t, c.host.Neg)
		sidecars.MaskSlidingRing(ms[t*c.W:(t+1)*c.W], p+t, c.host.Neg)
		if err := c.host.Rope(p+t, cs[t*c.hd:(t+1)*c.hd], ss[t*c.hd:(t+1)*c.hd], cf[t*c.ghd:(t+1)*c.ghd], sf[t*c.ghd:(t+1)*c.ghd]); err != nil {
			return 0, err
		}
	}
	if T > 1 && p >= c.W {
		// Past the window every ring slot holds a position, and this
		// call has written rows p…p+T−1 at ring…ring+T−1 before any row
		// attends: row t must not see the rows after it (§3.4 b).
		r := sidecars.RingPos(p, c.W)
		for t := range T {
			for s := r + t + 1; s < r+T; s++ {
				ms[t*c.W+s] = c.host.Neg
			}
		}
	}
	in.cur.SetI32(0, int32(p))
	in.ring.SetI32(0, int32(sidecars.RingPos(p, c.W)))
	out1, err := gs[0].predict(c.s1)
	if err != nil {
		return 0, err
	}
	h1, err := gs[0].output(out1, "hidden_states_out")
	if err != nil {
		return 0, err
	}
	plc, err := gs[0].output(out1, "per_layer_combined_out")
	if err != nil {
		return 0, err
	}
	gs[1].set("hidden_states", h1)
	gs[1].set("per_layer_combined", plc)
	out2, err := gs[1].predict(c.s2)
	if err != nil {
		return 0, err
	}
	c.pos = p + T
	if !head {
		return 0, nil
	}
	g3 := c.infer[2]
	for _, name := range []string{"kv13_k", "kv13_v", "kv14_k", "kv14_v", "hidden_states_out"} {
		t, err := gs[1].output(out2, name)
		if err != nil {
			return 0, err
		}
		if name == "hidden_states_out" {
			name = "hidden_states"
		}
		g3.set(name, t)
	}
	g3.set("per_layer_combined", plc)
	out3, err := g3.predict(nil)
	if err != nil {
		return 0, err
	}
	if c.logits {
		lt, err := g3.output(out3, c.logitsName)
		if err != nil {
			return 0, err
		}
		return c.argmax(g3.name, lt)
	}
	id, err := g3.output(out3, "token_id")
	if err != nil {
		return 0, err
	}
	return tokenAt(id, 0), nil
}

// argmax widens the logits, fp16 or fp32 as the model declares them, and
// picks the largest, lowest index on ties (as torch does; G17). A
// shapeless output is checked here, on what the call returned.
func (c *s3Chain) argmax(model string, t *coreml.Tensor) (int, error) {
	if n := len(t.Shape); n == 0 || t.Shape[n-1] != c.vocab || t.Len() != c.vocab {
		return 0, fmt.Errorf("%s: %s is %v, want the %d logits of the vocabulary", model, c.logitsName, t.Shape, c.vocab)
	}
	if len(c.out) != c.vocab {
		c.out = make([]float32, c.vocab)
	}
	if t.DType == coreml.Float32 {
		for i := range c.out {
			c.out[i] = t.F32(i)
		}
	} else {
		for i, h := range t.U16()[:c.vocab] {
			c.out[i] = f16.ToF32(h)
		}
	}
	best := 0
	for i, v := range c.out {
		if v > c.out[best] {
			best = i
		}
	}
	return best, nil
}

// closeStates releases the MLStates now (24 MiB on E2B).
func (c *s3Chain) closeStates() {
	for _, st := range []coreml.State{c.s1, c.s2} {
		if st != nil {
			st.Close()
		}
	}
	c.s1, c.s2 = nil, nil
}

func (c *s3Chain) Close() error {
	c.closeStates()
	for _, g := range c.infer {
		g.close()
	}
	for _, g := range c.batch {
		g.close()
	}
	return c.host.Close()
}

// SetSoft hands media rows to the host inputs (Chain).
func (c *s3Chain) SetSoft(spans []SoftSpan) { c.host.SetSoft(spans) }

func (c *s3Chain) seamRuntime() coreml.Runtime { return c.rt }
