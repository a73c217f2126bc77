package bundle

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/orchard-llm/orchard/coreml"
)

// loadV2 parses the v2 config (first existing of V2ConfigFiles) and checks its files.
func (b *Bundle) loadV2(v *validator) {
	var name string
	for _, n := range v2ConfigFiles {
		if exists(filepath.Join(b.Dir, n)) {
			name = n
			break
		}
	}
	if name == "" {
		v.fail("%s: missing (a v2 bundle needs one of %v)", v2ConfigFiles[0], v2ConfigFiles)
		return
	}
	data := v.readConfig(name)
	if data == nil {
		return
	}
	var c V2Config
	extra, notes, err := decodeKeeping(data, &c)
	if err != nil {
		v.fail("%s: %v", name, err)
		return
	}
	for _, n := range notes {
		v.note("%s: %s", name, n)
	}
	c.Extra = extra
	b.V2 = &c
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(data, &raw)
	req := func(ok bool, what string) bool {
		if !ok {
			v.fail("%s: %s missing or invalid", name, what)
		}
		return ok
	}
	_, hasEOS := raw["eos_ids"]
	ok := req(c.H > 0 && c.HD > 0 && c.GHD > 0 && c.NH > 0 && c.NKV > 0 && c.NLayers > 0 && c.Sliding > 0,
		"H, HD, GHD, NH, NKV, NLAYERS, SLIDING") &&
		req(c.SRange.Upper >= 1, "S_range.upper") &&
		req(len(c.ChunkBounds) > 0 && len(c.Chunks) == len(c.ChunkBounds), "chunks/chunk_bounds (one name per bound)") &&
		req(len(c.LayerTypes) == c.NLayers, "layer_types (one per layer)") &&
		req(c.LMHead != "", "lmhead") &&
		req(len(c.HostIO.InvSlide) == c.HD/2 && len(c.HostIO.InvFull) == c.GHD/2, "hostio.inv_slide/inv_full") &&
		req(c.Sidecars.Embed.File != "", "sidecars.embed") &&
		req(hasEOS, "eos_ids")
	if !ok {
		return
	}
	if c.Kind != "" || c.Ctx32k != nil && *c.Ctx32k || c.WSlide != nil || c.Verify != nil || slices.Contains(c.LayerTypes, "linear_attention") {
		v.fail("%s: a ring/ladder or hybrid build (kind %q, ctx32k, WSLIDE, static verify or linear attention); orchard runs the E4B stateful chain only", name, c.Kind)
		return
	}
	g := &b.Geometry
	g.Layers, g.Hidden, g.Heads, g.KVHeads, g.KVHeadsFull = c.NLayers, c.H, c.NH, c.NKV, c.KVHeadsFull()
	g.HeadDim, g.GlobalHeadDim, g.Context, g.SlidingWindow, g.PLEDim = c.HD, c.GHD, c.Context(), c.Sliding, c.PLEDim()
	g.LayerTypes, g.ChunkBounds, g.MaxRows = c.LayerTypes, c.ChunkBounds, c.SRange.Upper
	if sS, sF := c.StoreLayers["sliding_attention"], c.StoreLayers["full_attention"]; len(c.StoreLayers) == 2 {
		g.FirstShared = max(sS, sF) + 1
	}
	v.bounds(c.ChunkBounds, c.NLayers, g.FirstShared)
	for w := 2; w <= min(16, c.SRange.Upper); w++ {
		g.VerifyWidths = append(g.VerifyWidths, w)
	}
	for i, n := range c.Chunks {
		ch := Chunk{Name: n, Path: chunkPath(b.Dir, n), Layers: c.ChunkBounds[i]}
		v.dir(ch.Path, "chunk")
		b.Chunks = append(b.Chunks, ch)
	}
	head := Chunk{Name: c.LMHead, Path: chunkPath(b.Dir, c.LMHead)}
	v.dir(head.Path, "lm head")
	b.Heads = []Chunk{head}
	g.Vocab = v.sidecar(c.Sidecars.Embed, "", "embedding", c.H)
	if c.Sidecars.PLE != nil {
		v.sidecar(*c.Sidecars.PLE, "", "per-layer embedding", c.NLayers*c.PLEDim())
	}
	if cu := b.Manifest.ComputeUnits; cu != "" {
		if u, err := coreml.ParseComputeUnits(cu); err != nil {
			v.fail("manifest.json computeUnits: %v", err)
		} else if u != coreml.CPUAndGPU && u != coreml.All {
			v.fail("manifest.json computeUnits %q: v2 stateful bundles require the GPU (cpuAndGPU or all); several MLStates on CPU/ANE crash", cu)
		}
	}
	b.EOS = union(c.EOSIDs, b.Manifest.EOS)
	b.manifestTemplate()
	b.tokenizer(v, "tokenizer.json")
	b.hfConfig()
}
