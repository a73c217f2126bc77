package media

import (
	"fmt"

	"github.com/orchard-llm/orchard/f16"
)

// PatchSize is the side of one vision patch in pixels, and PatchWidth the
// values per patch row of the encoder input (16·16 pixels × RGB).
const (
	PatchSize  = 16
	PatchWidth = PatchSize * PatchSize * 3
	maxGridPx  = 4096
)

// VisionGeometry is the picture size a vision encoder takes, read from the
// shape it declares for its patches input.
type VisionGeometry struct {
	Grid int // patches per side
	Side int // pixels per side: Grid·16
}

// Patches is the number of patch rows, Grid².
func (g VisionGeometry) Patches() int { return g.Grid * g.Grid }

// VisionGrid reads the geometry from the declared shape of an encoder's
// patches input, as the Swift runtime's VisionEncoder.loadIfNeeded does
// (multimodal.md §1.2 step 0): rank 3, shape[1] a perfect square grid² with
// grid·16 ≤ 4096; orchard also requires the 768 values per patch its
// layout writes. vision_fp16 declares [1, 2304, 768]: grid 48, side 768.
// The refusal names the encoder file as the Swift runtime's does.
func VisionGrid(file string, shape []int) (VisionGeometry, error) {
	if len(shape) == 3 && shape[1] > 0 {
		g := isqrt(shape[1])
		if g*g == shape[1] && g*PatchSize <= maxGridPx {
			if shape[2] != PatchWidth {
				return VisionGeometry{}, fmt.Errorf("%s declares %d values per patch on its patches input; orchard writes %d (16×16 RGB)", file, shape[2], PatchWidth)
			}
			return VisionGeometry{Grid: g, Side: g * PatchSize}, nil
		}
	}
	return VisionGeometry{}, fmt.Errorf("%s does not declare a square patch grid of at most 4096px on its patches input", file)
}

func isqrt(n int) int {
	g := 0
	for (g+1)*(g+1) <= n {
		g++
	}
	return g
}

// Patches is the vision encoder's input for the picture: stretched to
// Side×Side (no aspect preservation, multimodal.md §1.2 step 3),
// premultiplied over black, each byte divided by 255 in float32 and cast to
// fp16, laid out as [1, Grid², 768]: row (h/16)·Grid + w/16, column
// ((h%16)·16 + w%16)·3 + c (step 5).
func (im *Image) Patches(g VisionGeometry) ([]uint16, error) {
	rgb, err := im.Resized(g.Side, g.Side)
	if err != nil {
		return nil, err
	}
	return Patchify(rgb, g), nil
}

// Patchify lays out a packed Side×Side RGB picture as fp16 patches.
func Patchify(rgb []byte, g VisionGeometry) []uint16 {
	// Only 256 values can occur: cast each once.
	var lut [256]uint16
	inv := float32(1.0 / 255.0)
	for v := range lut {
		lut[v] = f16.FromF32(float32(v) * inv)
	}
	side := g.Side
	out := make([]uint16, g.Patches()*PatchWidth)
	for h := range side {
		row := rgb[3*h*side : 3*(h+1)*side]
		base := (h/PatchSize)*g.Grid*PatchWidth + (h%PatchSize)*PatchSize*3
		for pw := range g.Grid {
			dst := out[base+pw*PatchWidth : base+pw*PatchWidth+PatchSize*3]
			src := row[pw*PatchSize*3 : (pw+1)*PatchSize*3]
			for i, v := range src {
				dst[i] = lut[v]
			}
		}
	}
	return out
}
