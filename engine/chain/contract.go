package chain

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// The published bundles are the contract, and orchard cannot see most of
// them before a Mac loads them. What a chunk offers is therefore read from
// the best source there is: the runtime (Core ML lists a model's functions
// on macOS 15, the reference runtime reads its twin), else the chunk's
// metadata.json (a hint), else nothing — and then a function's presence is
// learnt by loading it, a failed load being a missing capability.

// functionSet is what is known about one chunk's functions.
type functionSet struct {
	names  []string // empty with known: a single-function model
	known  bool
	source string // "the runtime", "metadata.json"
	note   string // why the runtime could not say (it did not answer in time, say)
}

// functionsOf asks the runtime, then the bundle's metadata hint.
func functionsOf(rt coreml.Runtime, ch bundle.Chunk) functionSet {
	var note string
	if l, ok := rt.(coreml.FunctionLister); ok {
		names, err := l.Functions(ch.Path)
		if err == nil {
			return functionSet{names: names, known: true, source: "the runtime"}
		}
		if err != coreml.ErrFunctionsUnknown {
			note = fmt.Sprintf("%s: %v", ch.Name, err)
		}
		if !errors.Is(err, coreml.ErrFunctionsUnknown) {
			return functionSet{note: note} // unreadable here: learn by loading
		}
	}
	if m, err := bundle.ReadModelMeta(ch.Path); err == nil && len(m.Functions) > 0 {
		return functionSet{names: m.Functions, known: true, source: "metadata.json", note: note}
	}
	return functionSet{note: note}
}

// has reports whether fn is there: maybe (true) when nothing is known.
func (f functionSet) has(fn string) bool {
	if !f.known {
		return true
	}
	return slices.Contains(f.names, fn)
}

// allHave reports whether every chunk may have fn.
func allHave(sets []functionSet, fn string) bool {
	for _, s := range sets {
		if !s.has(fn) {
			return false
		}
	}
	return true
}

// widthPattern reads a block width from a function name as converters
// name them: prefill64, prefill_64, prefill_b8, offset16, verify4.
var widthPattern = regexp.MustCompile(`^(?:prefill|offset|verify)_?[bn]?(\d+)$`)

// discoveredWidths maps each width a function name encodes to the name,
// over the functions every chunk has (the first set's names, checked
// against the others).
func discoveredWidths(sets []functionSet) map[int]string {
	out := map[int]string{}
	if len(sets) == 0 || !sets[0].known {
		return out
	}
	for _, fn := range sets[0].names {
		m := widthPattern.FindStringSubmatch(fn)
		if m == nil || !allHave(sets, fn) {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 {
			continue
		}
		if _, dup := out[n]; !dup {
			out[n] = fn
		}
	}
	return out
}

// s3BatchProbe is the order the stateful engine probes batched prefill
// (stateful-3chunk doc §4.1): the widest that loads on every chunk wins.
var s3BatchProbe = []int{16, 8, 4}

// declaredLast is the last dimension an input or state declares, 0 when
// the model does not declare it.
func declaredLast(specs map[string]coreml.TensorSpec, name string) int {
	if s, ok := specs[name]; ok && len(s.Shape) > 0 {
		return s.Shape[len(s.Shape)-1]
	}
	return 0
}

// refineS3 takes chunk_1's loaded description as the contract for the
// geometry (context, sliding window, hidden, head dims, KV heads): the
// loaded model wins over model_config.json and metadata.json. A width the
// host tables cannot serve is an error naming both sides.
func refineS3(b *bundle.Bundle, d coreml.Description, host *Inputs) (notes []string, err error) {
	g := b.Geometry
	set := func(what string, declared int, field *int) {
		if declared > 0 && declared != *field {
			notes = append(notes, fmt.Sprintf("chunk_1 declares %s %d where the bundle's files say %d; the loaded model wins", what, declared, *field))
			*field = declared
		}
	}
	set("context", declaredLast(d.Inputs, "causal_mask_full"), &g.Context)
	set("sliding window", declaredLast(d.Inputs, "causal_mask_sliding"), &g.SlidingWindow)
	set("head dim", declaredLast(d.Inputs, "cos_s"), &g.HeadDim)
	set("global head dim", declaredLast(d.Inputs, "cos_f"), &g.GlobalHeadDim)
	if s, ok := d.States["kv_cache_sliding"]; ok && len(s.Shape) == 4 {
		set("KV heads", s.Shape[1], &g.KVHeads)
	}
	if h := declaredLast(d.Inputs, "hidden_states"); h > 0 && h != g.Hidden {
		return notes, fmt.Errorf("bundle %s: chunk_1 declares hidden_states width %d, but the embedding table %s is %d wide", b.Dir, h, bundle.S3Embed, g.Hidden)
	}
	if lp := declaredLast(d.Inputs, "per_layer_raw"); lp > 0 && lp != g.Layers*g.PLEDim {
		return notes, fmt.Errorf("bundle %s: chunk_1 declares per_layer_raw width %d, but the per-layer table %s is %d wide", b.Dir, lp, bundle.S3PLE, g.Layers*g.PLEDim)
	}
	if g.HeadDim != b.Geometry.HeadDim || g.GlobalHeadDim != b.Geometry.GlobalHeadDim {
		return notes, fmt.Errorf("bundle %s: chunk_1 declares RoPE widths %d/%d, the .npy tables hold %d/%d", b.Dir, g.HeadDim, g.GlobalHeadDim, b.Geometry.HeadDim, b.Geometry.GlobalHeadDim)
	}
	if rows := host.RopeRows(); rows > 0 && rows < g.Context {
		return notes, fmt.Errorf("bundle %s: chunk_1 declares a context of %d, but the RoPE tables (%s) have %d rows", b.Dir, g.Context, bundle.S3CosFull, rows)
	}
	if len(notes) > 0 {
		if err := b.Refine(b.Family, g, notes); err != nil {
			return notes, err
		}
	}
	return notes, nil
}

// s3HeadOutput finds what chunk_3 emits: "" for token_id; else the name
// of the one floating output whose last dimension is the vocabulary — or,
// when no output declares a shape, of the one floating output there is
// (its shape is checked on the first call). Anything else is refused with
// the outputs listed.
func s3HeadOutput(model string, d coreml.Description, vocab int) (string, error) {
	if _, ok := d.Outputs["token_id"]; ok {
		return "", nil
	}
	var floats, fits []string
	for _, name := range slices.Sorted(maps.Keys(d.Outputs)) {
		sp := d.Outputs[name]
		if sp.DType != coreml.Float16 && sp.DType != coreml.Float32 {
			continue
		}
		floats = append(floats, name)
		if !sp.Shapeless() && sp.Shape[len(sp.Shape)-1] == vocab {
			fits = append(fits, name)
		}
	}
	switch {
	case len(fits) == 1:
		return fits[0], nil
	case len(fits) == 0 && len(floats) == 1 && d.Outputs[floats[0]].Shapeless():
		return floats[0], nil
	}
	var list []string
	for _, name := range slices.Sorted(maps.Keys(d.Outputs)) {
		sp := d.Outputs[name]
		shape := "no shape"
		if !sp.Shapeless() {
			shape = sp.ShapeString()
		}
		list = append(list, fmt.Sprintf("%s (%s, %s)", name, sp.DType, shape))
	}
	why := "no floating output whose last dimension is the vocabulary"
	if len(fits) > 1 {
		why = fmt.Sprintf("%d floating outputs whose last dimension is the vocabulary", len(fits))
	}
	return "", fmt.Errorf("%s declares no token_id and %s (%d): its outputs are %s; orchard reads a token_id or one logits output", model, why, vocab, strings.Join(list, ", "))
}
