package chain

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// Chain runs one bundle's graphs. Positions are absolute token positions;
// every method that feeds tokens starts at Position().
type Chain interface {
	// Reset drops the cache; Position becomes 0.
	Reset() error
	// Prefill feeds tokens and returns the greedy prediction after the last.
	Prefill(tokens []int) (int, error)
	// Decode feeds one token and returns the greedy prediction after it.
	Decode(token int) (int, error)
	// Verify feeds tokens (the pending prediction first, then drafts) in
	// one call and returns the greedy prediction after each of them. The
	// position advances by len(tokens); the caller rewinds to keep only
	// the accepted prefix. Only for chains whose Capabilities allow it.
	Verify(tokens []int) ([]int, error)
	// Rewind moves the position back to pos ≥ Capabilities().MinRewind.
	// Stale cache rows past pos are hidden by masks and overwritten later.
	Rewind(pos int) error
	Position() int
	Capabilities() Capabilities
	// Logits returns the soft-capped logits of the last prediction, for
	// bundles that emit them (nil otherwise). Valid until the next call.
	Logits() []float32
	// Snapshot and Restore move the cache in and out for checkpoints.
	Snapshot() (*CacheState, error)
	Restore(*CacheState) error
	// SetSoft sets the encoder rows that stand in for the embeddings of
	// the prompt positions they cover (image and audio spans); nil clears
	// them. Later Prefill calls embed those positions from them.
	SetSoft([]SoftSpan)
	Close() error
}

// Capabilities says what a chain can do now.
type Capabilities struct {
	Family        bundle.Family
	Context       int   // positions the cache holds
	VerifyWidths  []int // widths Verify accepts; empty = no speculation
	PrefillWidths []int // batched prefill widths in use (1 = token by token)
	Logits        bool  // predictions come with logits (sampling possible)
	// MinRewind is the lowest position Rewind can reach from the current
	// one: 0 for host/position-indexed caches; for a wrapped sliding ring,
	// only one step back (stateful-3chunk doc §4.5).
	MinRewind int
	Notes     []string // capability probes that failed, in words
}

// MaxVerify is the widest Verify call, 0 when verification is impossible.
func (c Capabilities) MaxVerify() int {
	m := 0
	for _, w := range c.VerifyWidths {
		m = max(m, w)
	}
	return m
}

// Options tune how a chain is opened.
type Options struct {
	// ComputeUnits for the chunks: DefaultUnits takes the manifest's, else
	// the family's default (see Units).
	ComputeUnits coreml.ComputeUnits
	// VerifyHeadUnits places r1's batched verify head; DefaultUnits keeps
	// the published rule (the CPU when the chain may use the Neural Engine).
	VerifyHeadUnits coreml.ComputeUnits
	// HeadUnits places v2's lm head; DefaultUnits runs it with the chunks
	// (CORELLM_V2_HEAD_CU, okayuji doc §1.4).
	HeadUnits coreml.ComputeUnits
	// NoBatchedPrefill feeds prompts token by token (for tests and to
	// measure the batched path against the plain one).
	NoBatchedPrefill bool
	// BatchPastWindow keeps stateful3's batched prefill on past the
	// sliding window, with the causal mask of stateful-3chunk §3.4 (b): row
	// t of a batch never sees the rows after it. Not exact: a batch
	// overwrites the ring slots of the positions W before it, so row t
	// attends W−T+1+t sliding positions instead of W (the last row all W).
	// Token by token (off, the default) is exact; on is up to T× fewer
	// calls per prompt token past the window.
	BatchPastWindow bool
}

// coldCount counts a chain's cold calls: graph loads and first
// predictions (ColdCalls).
type coldCount struct{ cold int }

// ColdCalls is how many calls so far loaded a model or ran one for the
// first time. A call during which it grows paid for Core ML's loading or
// compiling, not for inference: the speculation policy leaves it out.
func (c *coldCount) ColdCalls() int { return c.cold }

// SeamCopies is how many bytes the chain's runtime has copied across the
// seam so far, read from the executor's own meter (coreml.CopyMeter): the
// inputs it copied into backend memory and the outputs it copied out,
// including those whose backing the backend declined. ok is false when the
// runtime keeps no meter. A runtime shared by several chains counts them
// all: take differences around one chain's calls.
func SeamCopies(c Chain) (n int64, ok bool) {
	r, ok := c.(interface{ seamRuntime() coreml.Runtime })
	if !ok {
		return 0, false
	}
	m, ok := r.seamRuntime().(coreml.CopyMeter)
	if !ok {
		return 0, false
	}
	return m.CopiedBytes(), true
}

// ErrContextFull is returned when a call would write past the context.
var ErrContextFull = errors.New("context is full")

// ErrNoVerify is returned by Verify on chains that cannot verify.
var ErrNoVerify = errors.New("this bundle cannot verify drafts")

// Open builds the chain of a bundle's family over a runtime.
func Open(b *bundle.Bundle, rt coreml.Runtime, o Options) (Chain, error) {
	cu, err := Units(b, o.ComputeUnits)
	if err != nil {
		return nil, err
	}
	o.ComputeUnits = cu
	host, err := NewInputs(b)
	if err != nil {
		return nil, err
	}
	var c Chain
	switch b.Family {
	case bundle.R1:
		c, err = openR1(b, rt, host, o)
	case bundle.V2:
		c, err = openV2(b, rt, host, o)
	case bundle.Stateful3, bundle.Stateful3Logits:
		c, err = openS3(b, rt, host, o)
	default:
		err = fmt.Errorf("engine: family %q has no chain", b.Family)
	}
	if err != nil {
		host.Close()
		return nil, err
	}
	return c, nil
}

// Units resolves the chunks' compute units: the flag, else the bundle's
// manifest, else the family's default (okayuji doc §1.4: cpuAndGPU for the
// okayuji bundles; the stateful 3-chunk bundles are built for the Neural
// Engine). v2's stateful chunks refuse the CPU-only and Neural Engine
// paths, where several MLStates crash.
func Units(b *bundle.Bundle, flag coreml.ComputeUnits) (coreml.ComputeUnits, error) {
	manifest := coreml.DefaultUnits
	fallback := coreml.CPUAndGPU
	switch {
	case b.Manifest != nil && b.Manifest.ComputeUnits != "":
		u, err := coreml.ParseComputeUnits(b.Manifest.ComputeUnits)
		if err != nil {
			return 0, fmt.Errorf("bundle %s: manifest.json computeUnits: %w", b.Dir, err)
		}
		manifest = u
	case b.S3 != nil:
		fallback = coreml.CPUAndNeuralEngine
		if u, err := coreml.ParseComputeUnits(b.S3.ComputeUnits); err == nil {
			manifest = u
		}
	}
	cu := coreml.ChooseUnits(flag, manifest, fallback)
	if b.Family == bundle.V2 {
		if err := coreml.CheckStatefulUnits(cu); err != nil {
			return 0, fmt.Errorf("bundle %s: %w", b.Dir, err)
		}
	}
	return cu, nil
}

// graph is one loaded model with the feature map fed to it. Features are
// filtered to what the model declares, and checked against its description
// before its first prediction so a contract mismatch names the tensor.
type graph struct {
	name    string
	fn      string // the function loaded, "" for the default one
	rt      coreml.Runtime
	m       coreml.Model
	desc    coreml.Description
	in      coreml.Features
	views   map[string]*coreml.Tensor // reshaped views of inputs (conform.go)
	oviews  map[string]*coreml.Tensor // reshaped views of output destinations
	conv    map[string]*converted     // inputs fed in another dtype than declared (conform.go)
	outs    coreml.Outputs            // where outputs go: backed into host tensors, or kept in the backend
	checked bool
	// Core ML specializes a model for its device on its first prediction,
	// and a flexible one again for each new row count: those calls are
	// slow. seen holds the row counts predicted so far (0 for a fixed
	// model); cold counts such calls, and loads, for the whole chain
	// (Warm, the speculation policy).
	seen    map[int]bool
	flexIn  string // an input with a flexible dimension, "" when none
	flexDim int
	cold    *int
}

func loadGraph(rt coreml.Runtime, path, fn string, cu coreml.ComputeUnits, cold *int) (*graph, error) {
	m, err := rt.Load(path, coreml.LoadOptions{Function: fn, ComputeUnits: cu})
	if err != nil {
		return nil, err
	}
	label := path
	if fn != "" {
		label += " (" + fn + ")"
	}
	if cold != nil {
		*cold++ // loading is part of the cold work the policy must not average
	}
	g := &graph{name: label, fn: fn, rt: rt, m: m, desc: m.Description(), in: coreml.Features{}, views: map[string]*coreml.Tensor{}, oviews: map[string]*coreml.Tensor{},
		conv: map[string]*converted{}, outs: coreml.Outputs{Into: coreml.Features{}, Keep: map[string]bool{}}, cold: cold, seen: map[int]bool{}}
	for _, name := range slices.Sorted(maps.Keys(g.desc.Inputs)) {
		if r := g.desc.Inputs[name].Ranges; r != nil {
			g.flexIn, g.flexDim = name, slices.IndexFunc(r, func(x [2]int) bool { return x[0] != x[1] })
			break
		}
	}
	return g, nil
}

// keep leaves the named outputs, where the model declares them, in the
// backend's memory: they only feed later calls, so the host never copies
// them (a chunk's hidden state for the next chunk, kv13/kv14 for chunk_3).
func (g *graph) keep(names ...string) {
	for _, n := range names {
		if _, ok := g.desc.Outputs[n]; ok {
			g.outs.Keep[n] = true
		}
	}
}

// setKeep turns keeping one output on or off (a driver that must read it
// this once).
func (g *graph) setKeep(name string, on bool) {
	if _, ok := g.desc.Outputs[name]; ok {
		g.outs.Keep[name] = on
	}
}

// into has the named output written straight into t (an output backing),
// viewed under the declared shape where that differs by leading unit
// dimensions. An output the model does not declare is ignored.
func (g *graph) into(name string, t *coreml.Tensor) {
	if spec, ok := g.desc.Outputs[name]; ok {
		g.outs.Into[name] = conform(g.oviews, name, spec, t)
	}
}

// set feeds a tensor if the model declares it. A host tensor of another
// dtype than the model declares (an fp32 or int32 input where the host
// fills fp16) is fed through a tensor of the declared dtype, refilled
// before every prediction.
func (g *graph) set(name string, t *coreml.Tensor) {
	spec, ok := g.desc.Inputs[name]
	if !ok {
		return
	}
	if t != nil && t.DType != spec.DType && !t.InBackend() && len(t.Data) > 0 {
		as := spec
		as.DType = t.DType
		g.in[name] = g.convert(name, conform(g.views, name, as, t), spec.DType)
		return
	}
	delete(g.conv, name)
	g.in[name] = conform(g.views, name, spec, t)
}

// has reports whether the model declares an input.
func (g *graph) has(name string) bool { _, ok := g.desc.Inputs[name]; return ok }

func (g *graph) predict(st coreml.State) (coreml.Features, error) {
	for _, c := range g.conv {
		c.fill()
	}
	rows := 0
	if t := g.in[g.flexIn]; t != nil && g.flexDim >= 0 && g.flexDim < len(t.Shape) {
		rows = t.Shape[g.flexDim]
	}
	if !g.seen[rows] {
		g.seen[rows] = true
		if g.cold != nil {
			*g.cold++
		}
	}
	if !g.checked {
		if err := g.desc.PrecheckInputs(g.in); err != nil {
			return nil, fmt.Errorf("%s: inputs do not match the model: %w", g.name, err)
		}
		g.checked = true
	}
	out, err := g.m.Predict(g.in, st, &g.outs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w%s", g.name, err, g.flexible())
	}
	return out, nil
}

// flexible lists the inputs of flexible shape with the shapes fed, for an
// error: the backend's own check decides their upper bounds, and a user
// reporting the failure needs to see what was passed.
func (g *graph) flexible() string {
	var b []byte
	for name, spec := range g.desc.Inputs {
		if spec.Ranges == nil {
			continue
		}
		if t := g.in[name]; t != nil {
			b = fmt.Appendf(b, "; input %s fed %v, declared %s", name, t.Shape, spec.ShapeString())
		}
	}
	return string(b)
}

// output returns a named output or an error naming the model.
func (g *graph) output(out coreml.Features, name string) (*coreml.Tensor, error) {
	t, ok := out[name]
	if !ok {
		return nil, fmt.Errorf("%s: no output %q", g.name, name)
	}
	return t, nil
}

func (g *graph) close() error {
	if g == nil {
		return nil
	}
	return g.m.Close()
}

// headTokens runs an argmax head ("hidden" in, "token" out) and appends
// the ids of the first rows rows to dst.
func (g *graph) headTokens(hidden *coreml.Tensor, rows int, dst []int) ([]int, error) {
	g.set("hidden", hidden)
	out, err := g.predict(nil)
	if err != nil {
		return dst, err
	}
	t, err := g.output(out, "token")
	if err != nil {
		return dst, err
	}
	for i := range rows {
		dst = append(dst, tokenAt(t, i))
	}
	return dst, nil
}

// tokenAt reads token id i of a head's output. The docs leave the dtype of
// r1's "token" open; int32 is likely, but a float id is read as well.
func tokenAt(t *coreml.Tensor, i int) int {
	if t.DType == coreml.Int32 {
		return int(t.I32(i))
	}
	return int(t.Float(i))
}

// prefillFits refuses a prefill of n tokens at pos that is empty or runs
// past the ctx positions: one check for every family's Prefill.
func prefillFits(n, pos, ctx int) error {
	if n == 0 {
		return fmt.Errorf("prefill: no tokens")
	}
	if pos+n > ctx {
		return fmt.Errorf("prefill of %d tokens at position %d: %w (%d positions)", n, pos, ErrContextFull, ctx)
	}
	return nil
}
