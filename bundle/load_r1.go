package bundle

import (
	"path/filepath"
	"strconv"
)

// loadR1 parses convert_config.json of an r1 bundle and checks its files.
func (b *Bundle) loadR1(v *validator) {
	data := v.readConfig("convert_config.json")
	if data == nil {
		return
	}
	var c R1Config
	extra, notes, err := decodeKeeping(data, &c)
	if err != nil {
		v.fail("convert_config.json: %v", err)
		return
	}
	for _, n := range notes {
		v.note("%s: %s", "convert_config.json", n)
	}
	c.Extra = extra
	b.R1 = &c
	h := c.HostIO
	req := func(ok bool, what string) bool {
		if !ok {
			v.fail("convert_config.json: %s missing or invalid", what)
		}
		return ok
	}
	ok := req(c.NumLayers > 0, "num_layers") && req(c.Hidden > 0, "hidden") &&
		req(c.FirstShared > 0 && c.FirstShared <= c.NumLayers, "first_shared") &&
		req(c.StoreLayers != nil && hasKey(c.StoreLayers, "sliding_attention") && hasKey(c.StoreLayers, "full_attention"), "store_layers") &&
		req(len(c.ChunkBounds) > 0, "chunk_bounds") &&
		req(h.CTX > 0 && h.HD > 0 && h.GHD > 0 && h.SLIDING > 0, "hostio (CTX, HD, GHD, SLIDING)") &&
		req(len(h.LayerTypes) == c.NumLayers, "hostio.layer_types (one per layer)") &&
		req(len(h.InvSlide) == h.HD/2 && len(h.InvFull) == h.GHD/2, "hostio.inv_slide/inv_full (HD/2 and GHD/2 values)") &&
		req(len(c.CoreLLM.Chunks) == len(c.ChunkBounds), "corellm.chunks (one per chunk_bounds entry)") &&
		req(c.CoreLLM.LMHead != "", "corellm.lmhead") &&
		req(len(c.CoreLLM.Prefill.N) > 0, "corellm.prefill.N")
	if !ok {
		return
	}
	v.bounds(c.ChunkBounds, c.NumLayers, c.FirstShared)
	g := &b.Geometry
	g.Layers, g.Hidden, g.PLEDim, g.FirstShared = c.NumLayers, c.Hidden, c.PLEDim, c.FirstShared
	g.KVHeads, g.HeadDim, g.GlobalHeadDim = 1, h.HD, h.GHD
	g.Context, g.SlidingWindow, g.LayerTypes, g.ChunkBounds = h.CTX, h.SLIDING, h.LayerTypes, c.ChunkBounds
	if c.VerifySupported() {
		g.VerifyWidths = []int{4}
	}
	g.MaxRows = slicesMax(c.CoreLLM.Prefill.N)

	// Functions the config names: decode, the named prefill widths,
	// verify. A chunk's metadata.json, where it lists functions, replaces
	// this guess; the engine asks the runtime, and a width without a
	// function is simply not used.
	fns := []string{c.CoreLLM.DecodeFunctionName()}
	for _, n := range c.CoreLLM.Prefill.N {
		if f, ok := c.PrefillFunction(n); ok {
			fns = append(fns, f)
		}
	}
	if c.VerifySupported() {
		fns = append(fns, c.CoreLLM.Verify.Functions["4"])
	}
	for i, name := range c.CoreLLM.Chunks {
		ch := Chunk{Name: name, Path: chunkPath(b.Dir, name), Layers: c.ChunkBounds[i], Functions: fns}
		if v.dir(ch.Path, "chunk") {
			v.functions(&ch)
		}
		b.Chunks = append(b.Chunks, ch)
	}
	heads := []string{c.CoreLLM.LMHead}
	if c.VerifySupported() {
		heads = append(heads, c.CoreLLM.Verify.LMHeadBatched["4"])
	}
	for _, name := range heads {
		ch := Chunk{Name: name, Path: chunkPath(b.Dir, name)}
		v.dir(ch.Path, "lm head")
		b.Heads = append(b.Heads, ch)
	}

	stage, st := c.Stage(b.Manifest.SidecarStage)
	if st == nil {
		v.fail("convert_config.json: sidecar stage %q is absent", stage)
	} else {
		g.Vocab = v.sidecar(st.Embed, stage, "embedding", c.Hidden)
		if st.PLE != nil {
			v.sidecar(*st.PLE, stage, "per-layer embedding", c.NumLayers*c.PLEDim)
		}
	}
	b.EOS = union(c.EOSTokenIDs, b.Manifest.EOS)
	b.manifestTemplate()
	b.tokenizer(v, "tokenizer.json")
	b.hfConfig()
}

// PrefillFunction names the function of prefill width n as the config
// does: prefill.functions wins over verify.functions. ok is false when the
// config names none; the engine then looks among the functions the model
// has (engine/contract.go).
func (c *R1Config) PrefillFunction(n int) (name string, ok bool) {
	key := strconv.Itoa(n)
	if f := c.CoreLLM.Prefill.Functions[key]; f != "" {
		return f, true
	}
	if c.CoreLLM.Verify != nil {
		if f := c.CoreLLM.Verify.Functions[key]; f != "" {
			return f, true
		}
	}
	return "", false
}

// sidecar checks one r1/v2 table and its scale; returns the row count.
func (v *validator) sidecar(f SidecarFile, stage, role string, cols int) int {
	if len(f.Shape) != 2 {
		v.fail("sidecar %s (%s): shape %v must be [rows, cols]", f.File, role, f.Shape)
		return 0
	}
	rows := f.Shape[0]
	if rows <= 0 || rows > MaxVocab {
		v.fail("sidecar %s (%s): shape %v: the row count must be 1…%d", f.File, role, f.Shape, MaxVocab)
		return 0
	}
	if f.Shape[1] != cols {
		v.fail("sidecar %s (%s): %d columns, the model needs %d", f.File, role, f.Shape[1], cols)
	}
	if stage == "int8" || f.DType == "int8" {
		v.file(f.File, role+" int8 ["+strconv.Itoa(rows)+"×"+strconv.Itoa(f.Shape[1])+"]", int64(rows)*int64(f.Shape[1]))
		scale := f.Scale
		if scale == "" {
			scale = defaultScale(role)
		}
		v.file(scale, role+" scales f32 ["+strconv.Itoa(rows)+"]", int64(rows)*4)
	} else {
		v.file(f.File, role+" fp16 ["+strconv.Itoa(rows)+"×"+strconv.Itoa(f.Shape[1])+"]", int64(rows)*int64(f.Shape[1])*2)
	}
	return rows
}

// defaultScale is the r1 scale file name when the config omits it.
func defaultScale(role string) string {
	if role == "embedding" {
		return "embed_scale_f32.bin"
	}
	return "ple_scale_f32.bin"
}

// ScaleFile is the table's scale file, with the r1 default names.
func (f SidecarFile) ScaleFile(ple bool) string {
	if f.Scale != "" {
		return f.Scale
	}
	if ple {
		return "ple_scale_f32.bin"
	}
	return "embed_scale_f32.bin"
}

// RuntimeMult is runtime_scale_sqrt or its default (hidden for the
// embedding, ple_dim for the PLE table).
func (f SidecarFile) RuntimeMult(def int) float64 {
	if f.RuntimeScaleSqrt != nil {
		return *f.RuntimeScaleSqrt
	}
	return float64(def)
}

func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }

func slicesMax(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// manifestTemplate copies the manifest's prompt strings.
func (b *Bundle) manifestTemplate() {
	m := b.Manifest
	b.Template = Template{PromptPrefix: m.PromptPrefix, PromptSuffix: m.PromptSuffix,
		AssistantSuffix: m.AssistantSuffix, PromptSuffixThinking: m.PromptSuffixThinking}
}

// tokenizer checks the first existing of the candidate tokenizer files.
func (b *Bundle) tokenizer(v *validator, candidates ...string) {
	for _, c := range candidates {
		if exists(filepath.Join(b.Dir, c)) {
			v.file(c, "tokenizer", 0)
			b.Tokenizer = filepath.Join(b.Dir, c)
			return
		}
	}
	v.fail("%s: missing (the tokenizer)", candidates[0])
}
