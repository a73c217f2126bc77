package chain

import (
	"fmt"
	"slices"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/sidecars"
)

// v2Chain drives a coreml-stateful-chain-v2 bundle (okayuji doc §2.3): one
// function per chunk with S = 1…maxS rows serves decode, verify and
// prefill; own-KV chunks keep their cache in an MLState, KV-shared chunks
// are stateless and get the store layers' k/v outputs of the same step.
type v2Chain struct {
	coldCount
	b    *bundle.Bundle
	c    *bundle.V2Config
	rt   coreml.Runtime
	host *Inputs
	o    Options

	H, P, ctx, hd, ghd, sliding, maxS int
	storeS, storeF                    int
	neg                               uint16

	chunks   []*graph
	stateful []bool
	states   []coreml.State
	head     *graph
	bufs     map[int]*v2Inputs // per S, allocated on first use
	pos      int
	storeOut [4]string    // k/v output names of the sliding and full store layers
	one      [1]int       // Decode's token, without allocating
	ids      []int        // head results, reused
	rowsOK   map[int]bool // row counts the graphs have accepted
	shrunk   bool         // the block size came down from S_range.upper
	notes    []string
}

// v2Inputs are the host tensors for one S.
type v2Inputs struct {
	embed, onehot          *coreml.Tensor
	tokid                  []*coreml.Tensor // per chunk [S, b−a, P]
	cosS, sinS, cosF, sinF *coreml.Tensor
	maskS, maskF           *coreml.Tensor
	headIn                 *coreml.Tensor // [1, H] last row for prefill
}

func openV2(b *bundle.Bundle, rt coreml.Runtime, host *Inputs, o Options) (*v2Chain, error) {
	c := b.V2
	g := b.Geometry
	ch := &v2Chain{b: b, c: c, rt: rt, host: host, o: o, H: g.Hidden, P: g.PLEDim, ctx: g.Context,
		hd: g.HeadDim, ghd: g.GlobalHeadDim, sliding: g.SlidingWindow, maxS: c.SRange.Upper, neg: host.Neg,
		bufs: map[int]*v2Inputs{}, rowsOK: map[int]bool{}}
	for _, chunk := range b.Chunks {
		gr, err := loadGraph(rt, chunk.Path, "", o.ComputeUnits, &ch.cold)
		if err != nil {
			ch.Close()
			return nil, fmt.Errorf("load %s: %w", chunk.Name, err)
		}
		ch.chunks = append(ch.chunks, gr)
		// A chunk that takes sks is stateless (shared KV); others own state.
		ch.stateful = append(ch.stateful, !gr.has("sks"))
	}
	if err := ch.storeLayers(); err != nil {
		ch.Close()
		return nil, err
	}
	for _, gr := range ch.chunks {
		// Hidden states and the store layers' caches only feed the next
		// chunks and the head: they stay in Core ML memory.
		gr.keep("hidden")
		gr.keep(ch.storeOut[:]...)
	}
	hu := o.HeadUnits
	if hu == coreml.DefaultUnits {
		hu = o.ComputeUnits
	}
	head, err := loadGraph(rt, b.Heads[0].Path, "", hu, &ch.cold)
	if err != nil {
		ch.Close()
		return nil, fmt.Errorf("load %s: %w", b.Heads[0].Name, err)
	}
	ch.head = head
	if err := ch.Reset(); err != nil {
		ch.Close()
		return nil, err
	}
	return ch, nil
}

// storeLayers finds the layers whose caches the KV-shared chunks read
// (okayuji doc §2.3): store_layers when the config has it; else the
// k_<l>_out outputs the loaded chunks declare, one per attention type; else
// the last layer of each type before the first KV-shared layer (from
// config.json's num_kv_shared_layers, or the first chunk that takes sks).
func (c *v2Chain) storeLayers() error {
	types := c.c.LayerTypes
	byType := map[string]int{}
	for _, t := range []string{"sliding_attention", "full_attention"} {
		if l, ok := c.c.StoreLayers[t]; ok {
			byType[t] = l
		}
	}
	if len(byType) < 2 {
		for _, g := range c.chunks {
			for name := range g.desc.Outputs {
				var l int
				if n, _ := fmt.Sscanf(name, "k_%d_out", &l); n == 1 && l >= 0 && l < len(types) && name == fmt.Sprintf("k_%d_out", l) {
					if _, set := byType[types[l]]; !set || l > byType[types[l]] {
						byType[types[l]] = l
					}
				}
			}
		}
	}
	if len(byType) < 2 {
		fs := c.b.Geometry.FirstShared
		if fs == 0 {
			for i, st := range c.stateful {
				if !st {
					fs = c.b.Chunks[i].Layers[0]
					break
				}
			}
		}
		for _, t := range []string{"sliding_attention", "full_attention"} {
			if _, ok := byType[t]; !ok {
				byType[t] = c.c.StoreLayer(t, fs)
			}
		}
	}
	c.storeS, c.storeF = byType["sliding_attention"], byType["full_attention"]
	if slices.Contains(c.stateful, false) && (c.storeS < 0 || c.storeF < 0) {
		return fmt.Errorf("bundle %s: cannot tell which layers' caches the KV-shared chunks read: no store_layers in %s, no k_<layer>_out outputs, no sliding and full layer before the first shared one", c.b.Dir, c.b.ConfigFile)
	}
	c.storeOut = [4]string{fmt.Sprintf("k_%d_out", c.storeS), fmt.Sprintf("v_%d_out", c.storeS),
		fmt.Sprintf("k_%d_out", c.storeF), fmt.Sprintf("v_%d_out", c.storeF)}
	return nil
}

func (c *v2Chain) Position() int     { return c.pos }
func (c *v2Chain) Logits() []float32 { return nil }

func (c *v2Chain) Capabilities() Capabilities {
	caps := Capabilities{Family: bundle.V2, Context: c.ctx, PrefillWidths: []int{c.maxS, 1}, Notes: c.notes}
	for w := 2; w <= min(16, c.maxS); w++ {
		caps.VerifyWidths = append(caps.VerifyWidths, w)
	}
	if c.o.NoBatchedPrefill {
		caps.PrefillWidths = []int{1}
	}
	return caps
}

// Reset makes fresh, zero-filled states (as Core ML's newState does).
func (c *v2Chain) Reset() error {
	c.closeStates()
	c.states = make([]coreml.State, len(c.chunks))
	for i, g := range c.chunks {
		if !c.stateful[i] {
			continue
		}
		st, err := g.m.NewState()
		if err != nil {
			return fmt.Errorf("%s: new state: %w", g.name, err)
		}
		c.states[i] = st
	}
	c.pos = 0
	return nil
}

func (c *v2Chain) Rewind(pos int) error {
	if pos < 0 || pos > c.pos {
		return fmt.Errorf("rewind to %d: position is %d", pos, c.pos)
	}
	c.pos = pos // rejected rows are masked, then overwritten at the same slots
	return nil
}

func (c *v2Chain) inputs(S int) *v2Inputs {
	if in, ok := c.bufs[S]; ok {
		return in
	}
	a := func(shape ...int) *coreml.Tensor { return c.rt.Alloc(shape, coreml.Float16) }
	in := &v2Inputs{embed: a(S, c.H), onehot: a(S, c.ctx), cosS: a(S, c.hd), sinS: a(S, c.hd),
		cosF: a(S, c.ghd), sinF: a(S, c.ghd), maskS: a(S, c.ctx), maskF: a(S, c.ctx), headIn: a(1, c.H)}
	for _, ch := range c.b.Chunks {
		in.tokid = append(in.tokid, a(S, ch.Layers[1]-ch.Layers[0], c.P))
	}
	c.bufs[S] = in
	return in
}

// forward runs S tokens at the current position through every chunk and
// returns the last chunk's hidden [S, H]: kept in the backend unless read
// is set, for the host to take a row from.
func (c *v2Chain) forward(toks []int, read bool) (*coreml.Tensor, error) {
	S, p := len(toks), c.pos
	if p+S > c.ctx {
		return nil, ErrContextFull
	}
	in := c.inputs(S)
	emb := in.embed.U16()
	for i, t := range toks {
		if err := c.host.EmbedAt(p+i, t, emb[i*c.H:(i+1)*c.H]); err != nil {
			return nil, err
		}
		for ci, ch := range c.b.Chunks {
			a, b := ch.Layers[0], ch.Layers[1]
			w := (b - a) * c.P
			if err := c.host.PLESliceAt(p+i, t, a, b, c.P, in.tokid[ci].U16()[i*w:(i+1)*w]); err != nil {
				return nil, err
			}
		}
	}
	cs, ss, cf, sf := in.cosS.U16(), in.sinS.U16(), in.cosF.U16(), in.sinF.U16()
	ms, mf := in.maskS.U16(), in.maskF.U16()
	for r := range S {
		if err := c.host.Rope(p+r, cs[r*c.hd:(r+1)*c.hd], ss[r*c.hd:(r+1)*c.hd], cf[r*c.ghd:(r+1)*c.ghd], sf[r*c.ghd:(r+1)*c.ghd]); err != nil {
			return nil, err
		}
		sidecars.MaskRow(ms[r*c.ctx:(r+1)*c.ctx], p+r, c.sliding, c.neg)
		sidecars.MaskRow(mf[r*c.ctx:(r+1)*c.ctx], p+r, 0, c.neg)
	}
	sidecars.OneHot(in.onehot.U16(), p, S, S, c.ctx)
	hidden := in.embed // chunk 0's hidden_in is the very embedding buffer
	var sks, svs, skf, svf *coreml.Tensor
	last := c.chunks[len(c.chunks)-1]
	last.setKeep("hidden", !read)
	for i, g := range c.chunks {
		g.set("hidden_in", hidden)
		g.set("inputs_embeds", in.embed)
		g.set("tokid", in.tokid[i])
		g.set("onehot", in.onehot)
		g.set("cos_s", in.cosS)
		g.set("sin_s", in.sinS)
		g.set("cos_f", in.cosF)
		g.set("sin_f", in.sinF)
		g.set("mask_s", in.maskS)
		g.set("mask_f", in.maskF)
		if !c.stateful[i] {
			if sks == nil || skf == nil {
				return nil, fmt.Errorf("%s: the store layers %d/%d were not emitted by an earlier chunk", g.name, c.storeS, c.storeF)
			}
			g.set("sks", sks)
			g.set("svs", svs)
			g.set("skf", skf)
			g.set("svf", svf)
		}
		out, err := g.predict(c.states[i])
		if err != nil {
			return nil, err
		}
		if t, ok := out[c.storeOut[0]]; ok {
			sks, svs = t, out[c.storeOut[1]]
		}
		if t, ok := out[c.storeOut[2]]; ok {
			skf, svf = t, out[c.storeOut[3]]
		}
		if hidden, err = g.output(out, "hidden"); err != nil {
			return nil, err
		}
	}
	c.pos = p + S
	return hidden, nil
}

// heads runs the argmax head on hidden [rows, H]; the ids are reused by
// the next call.
func (c *v2Chain) heads(hidden *coreml.Tensor, rows int) ([]int, error) {
	var err error
	c.ids, err = c.head.headTokens(hidden, rows, c.ids[:0])
	return c.ids, err
}

func (c *v2Chain) Decode(tok int) (int, error) {
	c.one[0] = tok
	hidden, err := c.forward(c.one[:], false)
	if err != nil {
		return 0, err
	}
	ids, err := c.heads(hidden, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// Prefill feeds blocks of up to maxS rows (the tail block is the remainder,
// no padding); the head runs once, on the last row.
func (c *v2Chain) Prefill(tokens []int) (int, error) {
	n := len(tokens)
	if err := prefillFits(n, c.pos, c.ctx); err != nil {
		return 0, err
	}
	block := c.maxS
	if c.o.NoBatchedPrefill {
		block = 1
	}
	var hidden *coreml.Tensor
	var last int
	for idx := 0; idx < n; {
		S := min(block, n-idx)
		var err error
		if hidden, err = c.forward(tokens[idx:idx+S], idx+S == n); err != nil {
			if S == 1 || c.rowsOK[S] {
				return 0, err
			}
			// The graphs refused S rows the config promised (S_range says
			// more than the model was built with). Rows a failed call may
			// have written are rewritten identically by the retry: same
			// tokens, same slots.
			block = S / 2
			if S == c.maxS && !c.shrunk {
				block = S - 1 // first an off-by-one upper bound, then halves
			}
			c.maxS, c.shrunk = block, true
			c.notes = append(c.notes, fmt.Sprintf("the chunks refused %d rows at once; prefilling in blocks of %d: %v", S, block, err))
			continue
		}
		c.rowsOK[S] = true
		idx += S
		last = S
	}
	in := c.inputs(last)
	copy(in.headIn.Data, hidden.Data[(last-1)*c.H*2:last*c.H*2])
	ids, err := c.heads(in.headIn, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// Verify runs the drafts as one S-row call and reads every row's argmax.
func (c *v2Chain) Verify(tokens []int) ([]int, error) {
	S := len(tokens)
	if S < 1 || S > min(16, c.maxS) {
		return nil, fmt.Errorf("verify: %d tokens, widths are 1…%d", S, min(16, c.maxS))
	}
	hidden, err := c.forward(tokens, false)
	if err != nil {
		return nil, err
	}
	ids, err := c.heads(hidden, S)
	return slices.Clone(ids), err // the caller keeps them
}

// closeStates releases the MLStates now (they hold the whole KV cache).
func (c *v2Chain) closeStates() {
	for _, st := range c.states {
		if st != nil {
			st.Close()
		}
	}
	c.states = nil
}

func (c *v2Chain) Close() error {
	c.closeStates()
	for _, g := range c.chunks {
		g.close()
	}
	c.head.close()
	return c.host.Close()
}

// SetSoft hands media rows to the host inputs (Chain).
func (c *v2Chain) SetSoft(spans []SoftSpan) { c.host.SetSoft(spans) }

func (c *v2Chain) seamRuntime() coreml.Runtime { return c.rt }
