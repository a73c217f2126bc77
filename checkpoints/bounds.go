package checkpoints

import (
	"fmt"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
)

// checkFits bounds a cache by the geometry of the bundle it names, before
// any size it declares is trusted: the geometry within orchard's limits
// (bundle.CheckGeometry), the position within its context, and the
// buffers no more numerous or larger than its own layers' KV caches. An archive whose orchard.json claims gigabytes for a
// small bundle is refused at import, and at load the identity check ties
// the geometry to the loaded bundle, so nothing is allocated beyond what
// that bundle's caches can hold.
func (cp *Checkpoint) checkFits() error {
	g := cp.Meta.Identity.Geometry
	if p := bundle.CheckGeometry(g); len(p) > 0 {
		return fmt.Errorf("bundle geometry: %s", strings.Join(p, "; "))
	}
	c := &cp.Cache
	if g.Context < 1 {
		return fmt.Errorf("bundle geometry: no context length")
	}
	if c.Position > g.Context {
		return fmt.Errorf("cache position %d is past the bundle's context of %d", c.Position, g.Context)
	}
	layers := max(g.FirstShared, g.Layers)
	if n := len(c.Buffers); n > 2*layers+8 {
		return fmt.Errorf("%d cache buffers, more than k and v of the bundle's %d layers", n, layers)
	}
	// A state buffer whose context axis the engine cannot tell is stored
	// whole, so the bound is the caches at full context, not at Position.
	limit := bundle.CacheElems(g, g.Context)
	var total int64
	for _, b := range c.Buffers {
		n, err := shapeBytes(b.Shape, b.DType)
		if err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
		total += n / int64(b.DType.Size())
		if total > limit {
			return fmt.Errorf("the cache buffers hold more than the %d elements the bundle's KV caches can hold (buffer %s %s %v)",
				limit, b.Name, b.DType, b.Shape)
		}
	}
	if c.Family == bundle.R1 && cp.Meta.CoreLLM != nil {
		return checkR1Identity(cp.Meta.CoreLLM, g)
	}
	return nil
}

// checkR1Identity requires corellm-chat's identity to describe the same
// geometry as orchard's: the r1 buffers are sized from it.
func checkR1Identity(id *CoreLLMIdentity, g bundle.Geometry) error {
	var d []string
	same := func(field string, have, want int) {
		if want > 0 && have != want {
			d = append(d, fmt.Sprintf("%s %d ≠ %d", field, have, want))
		}
	}
	same("ctx", id.Ctx, g.Context)
	same("hd", id.HD, g.HeadDim)
	same("ghd", id.GHD, g.GlobalHeadDim)
	same("numLayers", id.NumLayers, g.Layers)
	same("firstShared", id.FirstShared, g.FirstShared)
	same("hidden", id.Hidden, g.Hidden)
	if g.Layers > 0 && id.FirstShared > g.Layers {
		d = append(d, fmt.Sprintf("firstShared %d past the %d layers", id.FirstShared, g.Layers))
	}
	for i, hd := range id.OwnLayerHeadDims {
		if hd != id.HD && hd != id.GHD {
			d = append(d, fmt.Sprintf("ownLayerHeadDims[%d] = %d is neither hd %d nor ghd %d", i, hd, id.HD, id.GHD))
			break
		}
	}
	if len(d) > 0 {
		return fmt.Errorf("corellm-chat identity disagrees with the bundle geometry: %s", strings.Join(d, "; "))
	}
	return nil
}
