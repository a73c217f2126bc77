package bundle

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/orchard-llm/orchard/regfile"
	"github.com/orchard-llm/orchard/termsafe"
	"github.com/orchard-llm/orchard/tokenizer"
)

// The geometry orchard accepts. Published Gemma 4 bundles sit far inside
// these (E4B: 42 layers, hidden 2,560, head dims 256/512, context 2,048,
// vocabulary 262,144); a value outside is a damaged or hostile config,
// refused before the engine sizes a single buffer from it.
const (
	MaxLayers      = 256
	MaxHidden      = 1 << 15 // 32,768
	MaxHeads       = 512
	MaxHeadDim     = 4096
	MaxContext     = 1 << 18 // 262,144 positions
	MaxPLEDim      = 1 << 13
	MaxVocab       = 1 << 22 // 4,194,304 rows
	MaxRowsPerCall = 1 << 13 // the widest prefill or verify call
	MaxChunks      = 64
	// MaxHostBytes bounds what a geometry makes the engine allocate: KV
	// caches, RoPE rows and the widest call's masks (HostBytes).
	MaxHostBytes = 64 << 30

	maxConfigBytes  = 16 << 20 // a config, manifest or metadata.json
	maxFeatureElems = 1 << 32  // one declared tensor of a chunk
)

// readConfigFile reads a bundle's JSON file: a regular file of at most
// maxConfigBytes.
func readConfigFile(path string) ([]byte, error) {
	return regfile.ReadFile(path, maxConfigBytes)
}

// CheckGeometry lists every value of g outside orchard's limits or at odds
// with the others (0 means not declared and passes). Checkpoints check the
// geometry they record with it before trusting any size derived from it.
func CheckGeometry(g Geometry) []string {
	return checkGeometry(g, func(f string) string { return strings.ReplaceAll(f, "_", " ") })
}

func checkGeometry(g Geometry, label func(field string) string) []string {
	var out []string
	ok := true
	rng := func(field string, v, hi int) {
		switch {
		case v < 0:
			out = append(out, fmt.Sprintf("%s = %d is negative", label(field), v))
			ok = false
		case v > hi:
			out = append(out, fmt.Sprintf("%s = %d is more than the %d orchard accepts", label(field), v, hi))
			ok = false
		}
	}
	rng("layers", g.Layers, MaxLayers)
	rng("hidden", g.Hidden, MaxHidden)
	rng("heads", g.Heads, MaxHeads)
	rng("kv_heads", g.KVHeads, MaxHeads)
	rng("kv_heads_full", g.KVHeadsFull, MaxHeads)
	rng("head_dim", g.HeadDim, MaxHeadDim)
	rng("global_head_dim", g.GlobalHeadDim, MaxHeadDim)
	rng("context", g.Context, MaxContext)
	rng("sliding_window", g.SlidingWindow, MaxContext)
	rng("ple_dim", g.PLEDim, MaxPLEDim)
	rng("vocab", g.Vocab, MaxVocab)
	rng("first_shared", g.FirstShared, MaxLayers)
	rng("max_rows", g.MaxRows, MaxRowsPerCall)
	if len(g.ChunkBounds) > MaxChunks {
		out = append(out, fmt.Sprintf("%s: %d chunks, more than the %d orchard accepts", label("chunk_bounds"), len(g.ChunkBounds), MaxChunks))
		ok = false
	}
	if !ok {
		return out
	}
	if g.FirstShared > 0 && g.Layers > 0 && g.FirstShared > g.Layers {
		out = append(out, fmt.Sprintf("%s = %d is past the last of %d layers", label("first_shared"), g.FirstShared, g.Layers))
	}
	for _, f := range []struct {
		field string
		v     int
	}{{"kv_heads", g.KVHeads}, {"kv_heads_full", g.KVHeadsFull}} {
		if g.Heads > 0 && f.v > g.Heads {
			out = append(out, fmt.Sprintf("%s = %d is more than the %d query heads", label(f.field), f.v, g.Heads))
		}
	}
	if g.MaxRows > 0 && g.Context > 0 && g.MaxRows > g.Context {
		out = append(out, fmt.Sprintf("%s = %d rows per call is more than the context of %d", label("max_rows"), g.MaxRows, g.Context))
	}
	if n := HostBytes(g); n > MaxHostBytes {
		out = append(out, fmt.Sprintf("the geometry needs about %s of memory for its KV caches and inputs (%d layers × %d KV heads × context %d × head dim %d), more than the %s orchard allows",
			regfile.Size(n), ownLayers(g), max(1, g.KVHeads, g.KVHeadsFull), g.Context, max(g.HeadDim, g.GlobalHeadDim), regfile.Size(MaxHostBytes)))
	}
	return out
}

// ownLayers is how many layers keep their own KV cache.
func ownLayers(g Geometry) int {
	if g.FirstShared > 0 {
		return g.FirstShared
	}
	return g.Layers
}

// HostBytes estimates what a geometry within the limits makes the engine
// allocate: the KV caches (fp16, every own layer at full context), the
// RoPE rows of every position and the masks and one-hot rows of the
// widest call. Embedding tables are mapped, not counted.
func HostBytes(g Geometry) int64 {
	own, kv := int64(max(ownLayers(g), 0)), int64(max(1, g.KVHeads, g.KVHeadsFull))
	ctx, hd, rows := int64(max(g.Context, 0)), int64(max(g.HeadDim, g.GlobalHeadDim, 1)), int64(max(g.MaxRows, 1))
	return 2*own*kv*ctx*hd*2 + 4*ctx*hd*2 + 2*3*rows*ctx*2
}

// CacheElems bounds the elements a cache of pos positions can hold for a
// geometry: k and v of every own layer, all KV heads, pos rows at the
// widest head dim, plus the per-chunk state rows a stateful chain
// rounds up to (checkpoints cap their buffers with it at full context).
func CacheElems(g Geometry, pos int) int64 {
	own, kv := int64(ownLayers(g)+4), int64(max(1, g.KVHeads, g.KVHeadsFull))
	return 2 * own * kv * int64(max(pos, 0)) * int64(max(g.HeadDim, g.GlobalHeadDim, 1))
}

// checkLimits runs after a family's loader: every geometry number in
// range and consistent, the chunks' declared shapes consistent with it,
// and the tokenizer within the embedding. It adds problems only, so the
// loader's own checks and these all appear in one inspect.
func (b *Bundle) checkLimits(v *validator) {
	switch {
	case b.R1 != nil:
		b.limitsR1(v)
	case b.V2 != nil:
		b.limitsV2(v)
	case b.S3 != nil:
		b.limitsS3(v)
	default:
		return
	}
	b.checkChunkMeta(v)
	b.checkTokenizer(v)
}

func (b *Bundle) failAll(v *validator, problems []string) {
	for _, p := range problems {
		v.fail("%s: %s", b.ConfigFile, p)
	}
}

func labeler(names map[string]string) func(string) string {
	return func(f string) string {
		if n, ok := names[f]; ok {
			return n
		}
		return strings.ReplaceAll(f, "_", " ")
	}
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func (b *Bundle) limitsR1(v *validator) {
	c, h := b.R1, b.R1.HostIO
	rows := slicesMax(c.CoreLLM.Prefill.N)
	if c.VerifySupported() {
		rows = max(rows, 4)
	}
	g := Geometry{Layers: c.NumLayers, Hidden: c.Hidden, PLEDim: c.PLEDim, FirstShared: c.FirstShared, KVHeads: 1,
		HeadDim: h.HD, GlobalHeadDim: h.GHD, Context: h.CTX, SlidingWindow: h.SLIDING, MaxRows: max(rows, c.CoreLLM.Prefill.PlainN),
		ChunkBounds: c.ChunkBounds, Vocab: b.Geometry.Vocab}
	b.failAll(v, checkGeometry(g, labeler(map[string]string{
		"layers": "num_layers", "first_shared": "first_shared", "head_dim": "hostio.HD", "global_head_dim": "hostio.GHD",
		"context": "hostio.CTX", "sliding_window": "hostio.SLIDING", "max_rows": "corellm.prefill (widest call)",
		"chunk_bounds": "chunk_bounds", "vocab": "the embedding sidecar's rows"})))
	if c.PLEDim <= 0 && c.NumLayers > 0 {
		v.fail("convert_config.json: ple_dim = %d; r1 chunks take per-layer embeddings, so it must be at least 1", c.PLEDim)
	}
	for i, n := range c.CoreLLM.Prefill.N {
		if n < 1 || h.CTX > 0 && n > h.CTX {
			v.fail("convert_config.json: corellm.prefill.N[%d] = %d is not a width of 1…hostio.CTX (%d)", i, n, h.CTX)
		}
	}
	if p := c.CoreLLM.Prefill.PlainN; p < 0 || h.CTX > 0 && p > h.CTX {
		v.fail("convert_config.json: corellm.prefill.plain_N = %d is not a width of 1…hostio.CTX (%d)", p, h.CTX)
	}
	b.checkLayerTypes(v, "hostio.layer_types", h.LayerTypes)
	b.checkStoreLayers(v, c.StoreLayers, h.LayerTypes, c.FirstShared)
	if !finite(h.NEG) || !finite(h.InvSlide...) || !finite(h.InvFull...) {
		v.fail("convert_config.json: hostio.NEG, inv_slide and inv_full must be finite numbers")
	}
	b.checkEOS(v)
}

func (b *Bundle) limitsV2(v *validator) {
	c := b.V2
	g := Geometry{Layers: c.NLayers, Hidden: c.H, Heads: c.NH, KVHeads: c.NKV, KVHeadsFull: c.KVHeadsFull(), HeadDim: c.HD,
		GlobalHeadDim: c.GHD, Context: c.Context(), SlidingWindow: c.Sliding, PLEDim: c.PLEDim(), MaxRows: c.SRange.Upper,
		ChunkBounds: c.ChunkBounds, FirstShared: b.Geometry.FirstShared, Vocab: b.Geometry.Vocab}
	b.failAll(v, checkGeometry(g, labeler(map[string]string{
		"layers": "NLAYERS", "hidden": "H", "heads": "NH", "kv_heads": "NKV", "kv_heads_full": "NKV_FULL", "head_dim": "HD",
		"global_head_dim": "GHD", "context": "CTX (else N_MAX, else SLIDING)", "sliding_window": "SLIDING", "ple_dim": "PLE",
		"max_rows": "S_range.upper", "first_shared": "store_layers (first shared layer)", "chunk_bounds": "chunk_bounds",
		"vocab": "the embedding sidecar's rows"})))
	if (c.CTX != nil || c.NMax != nil) && c.Context() < 1 {
		v.fail("%s: CTX (or N_MAX) = %d; the context must be at least 1", b.ConfigFile, c.Context())
	}
	if c.NKVFull != nil && *c.NKVFull < 1 {
		v.fail("%s: NKV_FULL = %d; it must be at least 1", b.ConfigFile, *c.NKVFull)
	}
	if r := c.SRange; r.Upper >= 1 && (r.Lower < 0 || r.Lower > r.Upper || r.Default != 0 && (r.Default < r.Lower || r.Default > r.Upper)) {
		v.fail("%s: S_range {lower %d, default %d, upper %d} is not an ordered range", b.ConfigFile, r.Lower, r.Default, r.Upper)
	}
	if !slicesContains(c.LayerTypes, "linear_attention") {
		b.checkLayerTypes(v, "layer_types", c.LayerTypes)
	}
	if len(c.StoreLayers) > 0 {
		b.checkStoreLayers(v, c.StoreLayers, c.LayerTypes, c.NLayers)
	}
	if !finite(c.Softcap, c.NEG) || !finite(c.HostIO.InvSlide...) || !finite(c.HostIO.InvFull...) {
		v.fail("%s: SOFTCAP, NEG, hostio.inv_slide and inv_full must be finite numbers", b.ConfigFile)
	}
	b.checkEOS(v)
}

func (b *Bundle) limitsS3(v *validator) {
	c := b.S3
	b.failAll(v, checkGeometry(b.Geometry, labeler(map[string]string{
		"layers": "num_layers", "hidden": "hidden_size (or chunk_1's hidden_states)", "heads": "num_attention_heads",
		"kv_heads": "num_key_value_heads (or chunk_1's KV state)", "head_dim": "head_dim (or chunk_1's cos_s)",
		"global_head_dim": "global_head_dim (or chunk_1's cos_f)", "context": "context_length (or chunk_1's causal_mask_full)",
		"sliding_window": "sliding_window (or chunk_1's causal_mask_sliding)", "ple_dim": "per_layer_dim", "vocab": "vocab_size",
		"first_shared": "num_layers − num_kv_shared_layers", "chunk_bounds": "chunk_bounds", "max_rows": "prefill rows"})))
	// Every key has a default, so the loader cannot tell a 0 from a value.
	for _, f := range []struct {
		key string
		p   *int
	}{{"hidden_size", c.HiddenSize}, {"context_length", c.ContextLength}, {"vocab_size", c.VocabSize}, {"per_layer_dim", c.PerLayerDim},
		{"num_layers", c.NumLayers}, {"num_hidden_layers", c.NumHiddenLayers}, {"sliding_window", c.SlidingWindow},
		{"num_key_value_heads", c.NumKeyValueHeads}, {"head_dim", c.HeadDim}, {"global_head_dim", c.GlobalHeadDim}} {
		if f.p != nil && *f.p == 0 {
			v.fail("model_config.json: %s = 0; it must be at least 1", f.key)
		}
	}
	if n := c.NumKVSharedLayers; n != nil && (*n < 0 || *n >= b.Geometry.Layers) {
		v.fail("model_config.json: num_kv_shared_layers = %d; it must be 0…%d (fewer than the layers)", *n, b.Geometry.Layers-1)
	}
	if len(c.LayerTypes) > 0 && len(c.LayerTypes) != b.Geometry.Layers {
		v.fail("model_config.json: %d layer_types for %d layers", len(c.LayerTypes), b.Geometry.Layers)
	}
	b.checkLayerTypes(v, "layer_types", c.LayerTypes)
	scales := []*float64{c.EmbedScale, c.PerLayerEmbedScale, c.PerLayerModelProjectionScale, c.PerLayerInputScale, c.RMSNormEps, c.FinalLogitSoftcapping}
	for _, p := range scales {
		if p != nil && !finite(*p) {
			v.fail("model_config.json: scales and epsilons must be finite numbers")
			break
		}
	}
	if bos := c.BOS(); b.Geometry.Vocab > 0 && (bos < 0 || bos >= b.Geometry.Vocab) {
		v.fail("model_config.json: bos_token_id %d is outside the vocabulary (0…%d)", bos, b.Geometry.Vocab-1)
	}
	b.checkEOS(v)
}

func slicesContains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// checkLayerTypes accepts the two attention kinds the chains drive.
func (b *Bundle) checkLayerTypes(v *validator, key string, types []string) {
	for i, t := range types {
		if t != "sliding_attention" && t != "full_attention" {
			v.fail("%s: %s[%d] = %s is neither sliding_attention nor full_attention", b.ConfigFile, key, i, termsafe.Quote(t))
			return
		}
	}
}

// checkStoreLayers requires each store layer to be an own layer of its type.
func (b *Bundle) checkStoreLayers(v *validator, store map[string]int, types []string, own int) {
	for _, typ := range []string{"sliding_attention", "full_attention"} {
		l, ok := store[typ]
		if !ok {
			continue
		}
		switch {
		case l < 0 || l >= own:
			v.fail("%s: store_layers.%s = %d is not an own layer (0…%d)", b.ConfigFile, typ, l, own-1)
		case l < len(types) && types[l] != typ:
			v.fail("%s: store_layers.%s = %d is a %s layer", b.ConfigFile, typ, l, types[l])
		}
	}
}

// checkEOS requires the stop ids to be rows of the embedding.
func (b *Bundle) checkEOS(v *validator) {
	n := b.Geometry.Vocab
	for _, id := range b.EOS {
		if id < 0 || n > 0 && id >= n {
			v.fail("%s: EOS id %d is outside the vocabulary (0…%d)", b.ConfigFile, id, n-1)
		}
	}
}

var kvInput = regexp.MustCompile(`^[kv]_\d+_in$`)

// checkChunkMeta reads every chunk's and head's metadata.json that exists
// (a hint: absurd shapes are noted and ignored) and requires the host-fed
// tensors it declares to be as wide as the config says, because the
// engine sizes them from the config before it loads a graph: a config
// that claims a context of 10⁷ over graphs built for 2,048 is caught
// here, not after the allocation.
func (b *Bundle) checkChunkMeta(v *validator) {
	want := b.inputWidths()
	type mismatch struct {
		chunk, key string
		dim, n     int
	}
	var order []mismatch
	names := map[mismatch][]string{}
	for _, list := range [][]Chunk{b.Chunks, b.Heads} {
		for _, ch := range list {
			path := filepath.Join(ch.Path, "metadata.json")
			if _, err := os.Stat(path); err != nil {
				continue // not compiled yet (.mlpackage) or reported as missing
			}
			m, err := ReadModelMeta(ch.Path)
			if err != nil {
				continue // a hint only; the loaders note what they miss
			}
			var kinds []schemaPart
			for _, fm := range metaSchemas(m) {
				kinds = append(kinds, schemaPart{"input", fm.Inputs}, schemaPart{"output", fm.Outputs}, schemaPart{"state", fm.States})
			}
			for _, kind := range kinds {
				for _, f := range kind.fs {
					if p := shapeProblem(f.Shape); p != "" {
						v.note("%s: %s %s: shape %v %s; ignored, the loaded model decides", relTo(b.Dir, path), kind.what, termsafe.Quote(f.Name), f.Shape, p)
						continue
					}
					if len(f.Shape) == 0 {
						continue
					}
					name, dim, axis := f.Name, 0, len(f.Shape)-1
					if kvInput.MatchString(name) || strings.HasPrefix(name, "k_cache_") || strings.HasPrefix(name, "v_cache_") {
						name, axis = "kv", len(f.Shape)-2
					}
					if axis < 0 {
						continue
					}
					dim = f.Shape[axis]
					if w, ok := want[name]; ok && w.n > 0 && dim != w.n && (kind.what != "state" || name == "kv") {
						k := mismatch{ch.Name, w.key, dim, w.n}
						if names[k] == nil {
							order = append(order, k)
						}
						if q := termsafe.Quote(f.Name); !slicesContains(names[k], q) {
							names[k] = append(names[k], q)
						}
					}
				}
			}
		}
	}
	// One line per chunk and config value, however many inputs disagree.
	for _, k := range order {
		n := names[k]
		what := "tensor " + n[0] + " is"
		if len(n) > 1 {
			what = fmt.Sprintf("%d tensors (%s) are", len(n), strings.Join(n, ", "))
			if len(n) > 4 {
				what = fmt.Sprintf("%d tensors (%s, …) are", len(n), strings.Join(n[:4], ", "))
			}
		}
		v.fail("%s: %s %d wide, but %s is %d", k.chunk, what, k.dim, k.key, k.n)
	}
}

type width struct {
	key string
	n   int
}

// inputWidths maps host-fed inputs to the config value their last axis
// must equal.
func (b *Bundle) inputWidths() map[string]width {
	switch {
	case b.R1 != nil:
		h := b.R1.HostIO
		// Not the masks: a plain prefill function's are [N, N].
		ctx := width{b.ConfigFile + " hostio.CTX", h.CTX}
		return map[string]width{"onehot": ctx, "kv": ctx,
			"cos_s": {b.ConfigFile + " hostio.HD", h.HD}, "sin_s": {b.ConfigFile + " hostio.HD", h.HD},
			"cos_f": {b.ConfigFile + " hostio.GHD", h.GHD}, "sin_f": {b.ConfigFile + " hostio.GHD", h.GHD},
			"inputs_embeds": {b.ConfigFile + " hidden", b.R1.Hidden}, "hidden_in": {b.ConfigFile + " hidden", b.R1.Hidden}}
	case b.V2 != nil:
		c := b.V2
		ctx := width{b.ConfigFile + " CTX", c.Context()}
		return map[string]width{"onehot": ctx, "mask_s": ctx, "mask_f": ctx, "kv": ctx,
			"cos_s": {b.ConfigFile + " HD", c.HD}, "sin_s": {b.ConfigFile + " HD", c.HD},
			"cos_f": {b.ConfigFile + " GHD", c.GHD}, "sin_f": {b.ConfigFile + " GHD", c.GHD},
			"inputs_embeds": {b.ConfigFile + " H", c.H}, "hidden_in": {b.ConfigFile + " H", c.H}}
	}
	return nil // stateful3 takes its widths from chunk_1 (s3FromMeta)
}

// schemaPart is one kind of tensor of a schema.
type schemaPart struct {
	what string
	fs   []FeatureMeta
}

// metaSchemas is every schema a metadata.json gives: the top-level one
// and each function's, in function order.
func metaSchemas(m *ModelMeta) []*FunctionMeta {
	var out []*FunctionMeta
	if m.top != nil {
		out = append(out, m.top)
	}
	for _, fn := range m.Functions {
		if s := m.per[fn]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

// shapeProblem judges one declared shape.
func shapeProblem(shape []int) string {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return "has a negative dimension"
		}
		if d > MaxVocab {
			return fmt.Sprintf("has a dimension over %d", MaxVocab)
		}
		if d > 0 && n > maxFeatureElems/int64(d) {
			return fmt.Sprintf("holds more than %d elements", int64(maxFeatureElems))
		}
		n *= int64(d)
	}
	return ""
}

// checkTokenizer checks the tokenizer (tokenizer.Check: the document's
// shape and ids, not its merges, at a quarter of a full parse) and
// requires every id it can produce to be a row of the embedding.
func (b *Bundle) checkTokenizer(v *validator) {
	if st, err := os.Stat(b.Tokenizer); b.Tokenizer == "" || err != nil || !st.Mode().IsRegular() {
		return // missing or not a file: the loader said so
	}
	rel := relTo(b.Dir, b.Tokenizer)
	data, err := tokenizer.ReadFile(b.Tokenizer)
	if err != nil {
		v.fail("%s (tokenizer): %s", rel, regfile.Reason(err))
		return
	}
	n, err := tokenizer.Check(data)
	if err != nil {
		v.fail("%s: %s", rel, strings.TrimPrefix(err.Error(), "tokenizer: "))
		return
	}
	if rows := b.Geometry.Vocab; rows > 0 && n > rows {
		v.fail("%s: token %s has id %d, but the embedding has %d rows (ids 0…%d)", rel, termsafe.Quote(tokenizer.TokenText(data, n-1)), n-1, rows, rows-1)
	}
}

func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil {
		return r
	}
	return p
}

// regfileReason words a file error without repeating its path.
func regfileReason(err error) string {
	if errors.Is(err, regfile.ErrNotRegular) || errors.Is(err, regfile.ErrTooLarge) || errors.Is(err, os.ErrNotExist) {
		return regfile.Reason(err)
	}
	return err.Error()
}
