package chain

import (
	"fmt"
	"maps"
	"slices"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/sidecars"
)

// r1Chain drives a coreml-corellm-r1 bundle (okayuji doc §2.2): the KV
// cache lives on the host as one fp16 [1, CTX, hd] buffer per own layer.
// decode returns whole updated caches, offset and plain prefill return only
// the block's rows (copied in at the base position). Each cache is double
// buffered: decode reads one buffer and Core ML writes the updated cache
// straight into the other (an output backing), then the two swap — no host
// copy of the cache per token, as upstream swaps array references.
type r1Chain struct {
	coldCount
	b    *bundle.Bundle
	c    *bundle.R1Config
	rt   coreml.Runtime
	host *Inputs
	o    Options

	H, LP, P, ctx, hd, ghd, sliding, fs int
	storeS, storeF                      int
	neg                                 uint16

	k, v    map[int]*coreml.Tensor // own layer → [1, CTX, hd], the cache now
	k2, v2  map[int]*coreml.Tensor // the other buffer of each pair: decode's output
	names   map[int][4]string      // own layer → k_in, v_in, k_out, v_out (made once: no per-token formatting)
	decode  []*graph
	blocks  map[int]*r1Block // width → lazily loaded block functions
	fns     map[int]string   // width → the function that runs it
	widths  []int            // offset widths, descending, still available
	plainN  int
	plainOK bool
	head    *graph
	headV   *graph // lmhead_v4, lazily
	verifyN int
	dec     r1Inputs
	headIn  *coreml.Tensor // [H] row for the single-row head
	pos     int
	onehotP int    // slot currently set in the decode one-hot
	one     [1]int // the head's token, without allocating
	notes   []string
}

// r1Inputs are the host tensors of one function width.
type r1Inputs struct {
	embed, hidden0, tokid, onehot *coreml.Tensor
	cosS, sinS, cosF, sinF        *coreml.Tensor
	maskS, maskF                  *coreml.Tensor
}

// r1Block is one prefill/verify function across all chunks.
type r1Block struct {
	n      int
	plain  bool
	graphs []*graph
	in     r1Inputs
}

func openR1(b *bundle.Bundle, rt coreml.Runtime, host *Inputs, o Options) (*r1Chain, error) {
	c := b.R1
	g := b.Geometry
	ch := &r1Chain{b: b, c: c, rt: rt, host: host, o: o,
		H: g.Hidden, P: g.PLEDim, LP: g.Layers * g.PLEDim, ctx: g.Context, hd: g.HeadDim, ghd: g.GlobalHeadDim,
		sliding: g.SlidingWindow, fs: c.FirstShared, neg: host.Neg,
		storeS: c.StoreLayers["sliding_attention"], storeF: c.StoreLayers["full_attention"],
		k: map[int]*coreml.Tensor{}, v: map[int]*coreml.Tensor{}, k2: map[int]*coreml.Tensor{}, v2: map[int]*coreml.Tensor{},
		blocks: map[int]*r1Block{}, names: map[int][4]string{},
		plainN: c.CoreLLM.Prefill.PlainWidth(), onehotP: -1}
	for l := range c.FirstShared {
		ch.names[l] = [4]string{fmt.Sprintf("k_%d_in", l), fmt.Sprintf("v_%d_in", l), fmt.Sprintf("k_%d_out", l), fmt.Sprintf("v_%d_out", l)}
		d := ch.headDim(l)
		ch.k[l] = rt.Alloc([]int{1, ch.ctx, d}, coreml.Float16)
		ch.v[l] = rt.Alloc([]int{1, ch.ctx, d}, coreml.Float16)
		ch.k2[l] = rt.Alloc([]int{1, ch.ctx, d}, coreml.Float16)
		ch.v2[l] = rt.Alloc([]int{1, ch.ctx, d}, coreml.Float16)
	}
	ch.discover(rt)
	if o.NoBatchedPrefill {
		ch.widths, ch.plainOK = nil, false
	}
	ch.dec = ch.inputs(1, false)
	fn := ch.fns[1]
	for _, chunk := range b.Chunks {
		gr, err := loadGraph(rt, chunk.Path, fn, o.ComputeUnits, &ch.cold)
		if err != nil {
			ch.Close()
			return nil, fmt.Errorf("load %s: %w", chunk.Name, err)
		}
		ch.decode = append(ch.decode, gr)
		ch.bind(gr, &ch.dec)
	}
	head, err := loadGraph(rt, b.Heads[0].Path, "", o.ComputeUnits, &ch.cold)
	if err != nil {
		ch.Close()
		return nil, fmt.Errorf("load %s: %w", b.Heads[0].Name, err)
	}
	ch.head = head
	ch.headIn = rt.Alloc([]int{ch.H}, coreml.Float16)
	return ch, nil
}

// discover decides which function runs each width from what the chunks
// have (contract.go): the config's names where the model has them, else a
// function whose name encodes the width (prefill64, prefill_64, …); when
// nothing lists the functions, the documented convention prefill<N>, to be
// confirmed by loading. A width without a function is not used; the decode
// function falls back to the default one. fns[1] is decode.
func (c *r1Chain) discover(rt coreml.Runtime) {
	sets := make([]functionSet, len(c.b.Chunks))
	for i, chunk := range c.b.Chunks {
		sets[i] = functionsOf(rt, chunk)
		if sets[i].note != "" {
			c.notes = append(c.notes, sets[i].note)
		}
	}
	found := discoveredWidths(sets)
	c.fns = map[int]string{}
	name := func(n int) (string, bool) {
		if f, ok := c.c.PrefillFunction(n); ok && allHave(sets, f) {
			return f, true
		}
		if f, ok := found[n]; ok {
			return f, true
		}
		if !sets[0].known {
			return fmt.Sprintf("prefill%d", n), true
		}
		return "", false
	}
	if dn := c.c.CoreLLM.DecodeFunctionName(); allHave(sets, dn) {
		c.fns[1] = dn
	} else {
		c.fns[1] = "" // the default function
		c.notes = append(c.notes, fmt.Sprintf("the chunks have no function %q (%s lists %v); decoding with their default function", dn, sets[0].source, sets[0].names))
	}
	// The widths are prefill.N's, as the Swift runtime uses only those; a
	// width the chunks' function names encode joins them only when no
	// width of prefill.N has a function at all.
	widths := slices.Clone(c.c.CoreLLM.Prefill.N)
	named := slices.ContainsFunc(widths, func(n int) bool {
		_, ok := name(n)
		return n > 1 && n <= c.ctx && ok
	})
	for _, n := range slices.Sorted(maps.Keys(found)) {
		if n <= 1 || slices.Contains(widths, n) {
			continue
		}
		if named {
			c.notes = append(c.notes, fmt.Sprintf("the chunks' function %s (width %d) is unused: prefill.N lists %v", found[n], n, c.c.CoreLLM.Prefill.N))
			continue
		}
		widths = append(widths, n)
	}
	slices.Sort(widths)
	for _, n := range slices.Backward(widths) {
		if n <= 1 || n > c.ctx {
			continue
		}
		f, ok := name(n)
		if !ok {
			c.notes = append(c.notes, fmt.Sprintf("prefill width %d unused: no chunk function runs it (%s lists %v)", n, sets[0].source, sets[0].names))
			continue
		}
		c.fns[n] = f
		if n == c.plainN {
			c.plainOK = true
		} else {
			c.widths = append(c.widths, n)
		}
	}
	// Verify: the width-4 offset function with the batched head lmhead_v4.
	if c.c.VerifySupported() {
		f := c.c.CoreLLM.Verify.Functions["4"]
		if !allHave(sets, f) {
			f = found[4]
		}
		if f == "" {
			c.notes = append(c.notes, fmt.Sprintf("verify unavailable: the chunks have no width-4 function (%s lists %v)", sets[0].source, sets[0].names))
			return
		}
		c.fns[4], c.verifyN = f, 4
	}
}

func (c *r1Chain) headDim(l int) int {
	if c.c.HostIO.LayerTypes[l] == "full_attention" {
		return c.ghd
	}
	return c.hd
}

// inputs allocates the host tensors of width n (1 = decode shapes).
func (c *r1Chain) inputs(n int, plain bool) r1Inputs {
	a := func(shape ...int) *coreml.Tensor { return c.rt.Alloc(shape, coreml.Float16) }
	if n == 1 && !plain {
		return r1Inputs{embed: a(c.H), hidden0: a(c.H), tokid: a(c.LP/c.P, c.P), onehot: a(c.ctx),
			cosS: a(c.hd), sinS: a(c.hd), cosF: a(c.ghd), sinF: a(c.ghd), maskS: a(c.ctx), maskF: a(c.ctx)}
	}
	w := c.ctx
	if plain {
		w = n
	}
	return r1Inputs{embed: a(n, c.H), hidden0: a(n, c.H), tokid: a(n, c.LP/c.P, c.P), onehot: a(n, c.ctx),
		cosS: a(n, c.hd), sinS: a(n, c.hd), cosF: a(n, c.ghd), sinF: a(n, c.ghd), maskS: a(n, w), maskF: a(n, w)}
}

// bind feeds the inputs every call of a graph shares.
func (c *r1Chain) bind(g *graph, in *r1Inputs) {
	g.set("inputs_embeds", in.embed)
	g.set("tokid", in.tokid)
	g.set("onehot", in.onehot)
	g.set("cos_s", in.cosS)
	g.set("sin_s", in.sinS)
	g.set("cos_f", in.cosF)
	g.set("sin_f", in.sinF)
	g.set("mask_s", in.maskS)
	g.set("mask_f", in.maskF)
}

func (c *r1Chain) Position() int     { return c.pos }
func (c *r1Chain) Logits() []float32 { return nil }

func (c *r1Chain) Capabilities() Capabilities {
	caps := Capabilities{Family: bundle.R1, Context: c.ctx, Notes: c.notes}
	if c.verifyN > 0 {
		caps.VerifyWidths = []int{2, 3, 4}
	}
	if c.plainOK {
		caps.PrefillWidths = append(caps.PrefillWidths, c.plainN)
	}
	caps.PrefillWidths = append(append(caps.PrefillWidths, c.widths...), 1)
	return caps
}

func (c *r1Chain) Reset() error {
	for l := range c.k {
		clear(c.k[l].Data)
		clear(c.v[l].Data)
	}
	c.pos = 0
	return nil
}

func (c *r1Chain) Rewind(pos int) error {
	if pos < 0 || pos > c.pos {
		return fmt.Errorf("rewind to %d: position is %d", pos, c.pos)
	}
	c.pos = pos // stale rows are masked (slot ≤ p) and overwritten later
	return nil
}

// Decode runs the decode function of every chunk, then the head.
func (c *r1Chain) Decode(tok int) (int, error) {
	hidden, err := c.decodeStep(tok)
	if err != nil {
		return 0, err
	}
	return c.runHead(hidden)
}

func (c *r1Chain) decodeStep(tok int) (*coreml.Tensor, error) {
	p := c.pos
	if p >= c.ctx {
		return nil, ErrContextFull
	}
	d := &c.dec
	if err := c.host.EmbedAt(p, tok, d.embed.U16()); err != nil {
		return nil, err
	}
	copy(d.hidden0.Data, d.embed.Data)
	if err := c.host.PLEAt(p, tok, d.tokid.U16()); err != nil {
		return nil, err
	}
	oh := d.onehot.U16()
	if c.onehotP >= 0 {
		oh[c.onehotP] = 0
	}
	oh[p], c.onehotP = 0x3c00, p
	if err := c.host.Rope(p, d.cosS.U16(), d.sinS.U16(), d.cosF.U16(), d.sinF.U16()); err != nil {
		return nil, err
	}
	sidecars.MaskRow(d.maskS.U16(), p, c.sliding, c.neg)
	sidecars.MaskRow(d.maskF.U16(), p, 0, c.neg)
	hidden := d.hidden0
	for i, g := range c.decode {
		bounds := c.b.Chunks[i].Layers
		g.set("hidden_in", hidden)
		c.bindKV(g, bounds)
		own := bounds[0] < c.fs
		if own {
			for l := bounds[0]; l < bounds[1]; l++ {
				g.into(c.names[l][2], c.k2[l])
				g.into(c.names[l][3], c.v2[l])
			}
		}
		out, err := g.predict(nil)
		if err != nil {
			return nil, err
		}
		if own {
			for l := bounds[0]; l < bounds[1]; l++ {
				c.k[l], c.k2[l] = c.k2[l], c.k[l]
				c.v[l], c.v2[l] = c.v2[l], c.v[l]
			}
		}
		if hidden, err = g.output(out, "hidden"); err != nil {
			return nil, err
		}
	}
	c.pos++
	return hidden, nil
}

// bindKV feeds own chunks their host caches and shared chunks the store
// layers' caches (already updated by an earlier chunk in this step).
func (c *r1Chain) bindKV(g *graph, bounds [2]int) {
	if bounds[0] < c.fs {
		for l := bounds[0]; l < bounds[1]; l++ {
			g.set(c.names[l][0], c.k[l])
			g.set(c.names[l][1], c.v[l])
		}
		return
	}
	g.set("sks", c.k[c.storeS])
	g.set("svs", c.v[c.storeS])
	g.set("skf", c.k[c.storeF])
	g.set("svf", c.v[c.storeF])
}

// runHead runs the single-row argmax head on a [H] hidden state.
func (c *r1Chain) runHead(hidden *coreml.Tensor) (int, error) {
	ids, err := c.head.headTokens(hidden, 1, c.one[:0])
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// Prefill schedules the prompt as corellm-chat does (okayuji doc §2.2 d):
// the plain block at position 0, then the widest offset block that fits,
// then token by token. Unlike the Swift runtime, the head runs only after
// the last block (it is stateless; earlier results are discarded anyway).
func (c *r1Chain) Prefill(tokens []int) (int, error) {
	n := len(tokens)
	if err := prefillFits(n, c.pos, c.ctx); err != nil {
		return 0, err
	}
	for idx := 0; idx < n; {
		rem := n - idx
		width, plain := 0, false
		if c.plainOK && c.pos == 0 && idx == 0 && rem >= c.plainN {
			width, plain = c.plainN, true
		} else {
			for _, w := range c.widths {
				if rem >= w && c.pos+w <= c.ctx {
					width = w
					break
				}
			}
		}
		if width > 0 {
			blk, err := c.block(width, plain)
			if err != nil {
				c.dropWidth(width, plain, err)
				continue
			}
			hidden, err := c.runBlock(blk, tokens[idx:idx+width], width)
			if err != nil {
				return 0, err
			}
			idx += width
			if idx == n {
				copy(c.headIn.Data, hidden.Data[(width-1)*c.H*2:width*c.H*2])
				return c.runHead(c.headIn)
			}
			continue
		}
		hidden, err := c.decodeStep(tokens[idx])
		if err != nil {
			return 0, err
		}
		idx++
		if idx == n {
			return c.runHead(hidden)
		}
	}
	panic("unreachable")
}

// dropWidth records that a prefill function could not be loaded and stops
// using it (a function that fails to load is a missing capability).
func (c *r1Chain) dropWidth(w int, plain bool, err error) {
	c.notes = append(c.notes, fmt.Sprintf("prefill width %d unavailable: %v", w, err))
	if plain {
		c.plainOK = false
		return
	}
	c.widths = slices.DeleteFunc(c.widths, func(x int) bool { return x == w })
}

// block loads (once) the width-n function of every chunk, and checks from
// the first chunk's description that it is the kind of block the schedule
// expects: a plain block takes [N,N] masks and no one-hot, an offset block
// writes at a one-hot slot.
func (c *r1Chain) block(n int, plain bool) (*r1Block, error) {
	if b, ok := c.blocks[n]; ok {
		return b, nil
	}
	name := c.fns[n]
	b := &r1Block{n: n, plain: plain, in: c.inputs(n, plain)}
	fail := func(err error) (*r1Block, error) {
		for _, g := range b.graphs {
			g.close()
		}
		return nil, err
	}
	for _, chunk := range c.b.Chunks {
		g, err := loadGraph(c.rt, chunk.Path, name, c.o.ComputeUnits, &c.cold)
		if err != nil {
			return fail(fmt.Errorf("load %s (%s): %w", chunk.Name, name, err))
		}
		c.bind(g, &b.in)
		b.graphs = append(b.graphs, g)
	}
	first := b.graphs[0]
	if isPlain := !first.has("onehot") && declaredLast(first.desc.Inputs, "mask_s") == n; isPlain != plain {
		kind := map[bool]string{true: "a plain (position 0) block", false: "an offset block"}
		return fail(fmt.Errorf("%s: function %q is %s, not %s", c.b.Chunks[0].Name, name, kind[isPlain], kind[plain]))
	}
	c.blocks[n] = b
	return b, nil
}

// runBlock feeds up to blk.n tokens at the current position in one call
// per chunk; rows past len(toks) are padding (zero inputs, fully masked,
// no one-hot). It copies the new KV rows into the host caches and returns
// the last chunk's hidden [n, H].
func (c *r1Chain) runBlock(blk *r1Block, toks []int, n int) (*coreml.Tensor, error) {
	p, L := c.pos, len(toks)
	in := &blk.in
	emb, tok := in.embed.U16(), in.tokid.U16()
	clear(emb)
	clear(tok)
	for i, t := range toks {
		if err := c.host.EmbedAt(p+i, t, emb[i*c.H:(i+1)*c.H]); err != nil {
			return nil, err
		}
		if err := c.host.PLEAt(p+i, t, tok[i*c.LP:(i+1)*c.LP]); err != nil {
			return nil, err
		}
	}
	copy(in.hidden0.Data, in.embed.Data)
	cs, ss, cf, sf := in.cosS.U16(), in.sinS.U16(), in.cosF.U16(), in.sinF.U16()
	for i := range n {
		if err := c.host.Rope(p+i, cs[i*c.hd:(i+1)*c.hd], ss[i*c.hd:(i+1)*c.hd], cf[i*c.ghd:(i+1)*c.ghd], sf[i*c.ghd:(i+1)*c.ghd]); err != nil {
			return nil, err
		}
	}
	if blk.plain {
		sidecars.MaskPlain(in.maskS.U16(), n, L, c.sliding, c.neg)
		sidecars.MaskPlain(in.maskF.U16(), n, L, 0, c.neg)
	} else {
		sidecars.MaskOffset(in.maskS.U16(), n, c.ctx, p, L, c.sliding, c.neg)
		sidecars.MaskOffset(in.maskF.U16(), n, c.ctx, p, L, 0, c.neg)
		sidecars.OneHot(in.onehot.U16(), p, n, L, c.ctx)
	}
	hidden := in.hidden0
	local := map[int][2]*coreml.Tensor{} // plain: the store layers' block-local KV
	for i, g := range blk.graphs {
		bounds := c.b.Chunks[i].Layers
		g.set("hidden_in", hidden)
		if blk.plain {
			if bounds[0] >= c.fs {
				g.set("sks", local[c.storeS][0])
				g.set("svs", local[c.storeS][1])
				g.set("skf", local[c.storeF][0])
				g.set("svf", local[c.storeF][1])
			}
		} else {
			c.bindKV(g, bounds)
		}
		out, err := g.predict(nil)
		if err != nil {
			return nil, err
		}
		if bounds[0] < c.fs {
			for l := bounds[0]; l < bounds[1]; l++ {
				kt, err := g.output(out, c.names[l][2])
				if err != nil {
					return nil, err
				}
				vt, err := g.output(out, c.names[l][3])
				if err != nil {
					return nil, err
				}
				rowBytes := c.headDim(l) * 2
				copy(c.k[l].Data[p*rowBytes:(p+L)*rowBytes], kt.Data[:L*rowBytes])
				copy(c.v[l].Data[p*rowBytes:(p+L)*rowBytes], vt.Data[:L*rowBytes])
				local[l] = [2]*coreml.Tensor{kt, vt}
			}
		}
		if hidden, err = g.output(out, "hidden"); err != nil {
			return nil, err
		}
	}
	c.pos = p + L
	return hidden, nil
}

// Verify feeds 1…4 tokens through the width-4 offset function (padded)
// and reads every row's argmax from the batched head lmhead_v4.
func (c *r1Chain) Verify(tokens []int) ([]int, error) {
	S := len(tokens)
	if c.verifyN == 0 {
		return nil, ErrNoVerify
	}
	if S < 1 || S > c.verifyN {
		return nil, fmt.Errorf("verify: %d tokens, width is %d", S, c.verifyN)
	}
	if c.pos+S > c.ctx {
		return nil, ErrContextFull
	}
	blk, err := c.block(c.verifyN, false)
	if err != nil {
		c.verifyN = 0
		c.notes = append(c.notes, fmt.Sprintf("verify unavailable: %v", err))
		return nil, fmt.Errorf("%w: %v", ErrNoVerify, err)
	}
	if c.headV == nil {
		// The published runtime pins this head to the CPU under the Neural
		// Engine (an int8 batched argmax misbehaves there).
		units := c.o.VerifyHeadUnits
		if units == coreml.DefaultUnits {
			units = coreml.DefaultVerifyHeadUnits(c.o.ComputeUnits)
		}
		if c.headV, err = loadGraph(c.rt, c.b.Heads[1].Path, "", units, &c.cold); err != nil {
			c.verifyN = 0
			return nil, fmt.Errorf("%w: %v", ErrNoVerify, err)
		}
	}
	hidden, err := c.runBlock(blk, tokens, c.verifyN)
	if err != nil {
		return nil, err
	}
	return c.headV.headTokens(hidden, S, make([]int, 0, S))
}

func (c *r1Chain) Close() error {
	for _, g := range c.decode {
		g.close()
	}
	for _, b := range c.blocks {
		for _, g := range b.graphs {
			g.close()
		}
	}
	c.head.close()
	c.headV.close()
	return c.host.Close()
}

// SetSoft hands media rows to the host inputs (Chain).
func (c *r1Chain) SetSoft(spans []SoftSpan) { c.host.SetSoft(spans) }

func (c *r1Chain) seamRuntime() coreml.Runtime { return c.rt }
