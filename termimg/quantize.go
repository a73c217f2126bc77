package termimg

import (
	"image"
	"image/color"
	"sort"
)

// Palette quantisation for sixel: median cut over a 15-bit colour
// histogram (5 bits a channel). The box with the most pixels times the
// widest channel range is split at the pixel median of that channel until
// there are maxColors boxes or none can be split; each palette entry is the
// pixel-weighted mean of its box. It is deterministic: the same picture
// always gives the same palette in the same order.

type histBin struct {
	key              uint16 // r5<<10 | g5<<5 | b5
	count            int
	sumR, sumG, sumB int
}

type cutBox struct{ bins []histBin }

func (b cutBox) count() int {
	n := 0
	for _, h := range b.bins {
		n += h.count
	}
	return n
}

// widest returns the channel (0 r, 1 g, 2 b) with the largest range, and it.
func (b cutBox) widest() (int, int) {
	lo, hi := [3]int{31, 31, 31}, [3]int{}
	for _, h := range b.bins {
		for c := range 3 {
			v := int(h.key>>(10-5*c)) & 31
			lo[c], hi[c] = min(lo[c], v), max(hi[c], v)
		}
	}
	best := 0
	for c := 1; c < 3; c++ {
		if hi[c]-lo[c] > hi[best]-lo[best] {
			best = c
		}
	}
	return best, hi[best] - lo[best]
}

// quantize returns a palette of at most maxColors colours for rgb (packed
// 8-bit RGB).
func quantize(rgb []byte, maxColors int) color.Palette {
	var hist [1 << 15]histBin
	for i := 0; i+2 < len(rgb); i += 3 {
		r, g, b := int(rgb[i]), int(rgb[i+1]), int(rgb[i+2])
		k := r>>3<<10 | g>>3<<5 | b>>3
		h := &hist[k]
		h.key, h.count = uint16(k), h.count+1
		h.sumR, h.sumG, h.sumB = h.sumR+r, h.sumG+g, h.sumB+b
	}
	var bins []histBin
	for _, h := range hist {
		if h.count > 0 {
			bins = append(bins, h)
		}
	}
	boxes := []cutBox{{bins: bins}}
	for len(boxes) < maxColors {
		best, bestScore := -1, 0
		for i, b := range boxes {
			if len(b.bins) < 2 {
				continue
			}
			_, width := b.widest()
			if s := b.count() * width; s > bestScore {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			break
		}
		b := boxes[best]
		c, _ := b.widest()
		shift := 10 - 5*c
		sort.SliceStable(b.bins, func(i, j int) bool {
			return (b.bins[i].key>>shift)&31 < (b.bins[j].key>>shift)&31
		})
		half, acc, cut := b.count()/2, 0, 1
		for i, h := range b.bins[:len(b.bins)-1] {
			acc += h.count
			cut = i + 1
			if acc >= half {
				break
			}
		}
		boxes[best] = cutBox{bins: b.bins[:cut]}
		boxes = append(boxes, cutBox{bins: b.bins[cut:]})
	}
	pal := make(color.Palette, 0, len(boxes))
	for _, b := range boxes {
		var n, r, g, bl int
		for _, h := range b.bins {
			n, r, g, bl = n+h.count, r+h.sumR, g+h.sumG, bl+h.sumB
		}
		pal = append(pal, color.RGBA{uint8((r + n/2) / n), uint8((g + n/2) / n), uint8((bl + n/2) / n), 255})
	}
	return pal
}

// indexer maps colours to their nearest palette entry, caching by 15-bit
// colour.
type indexer struct {
	pal   color.Palette
	cache [1 << 15]int16
}

func newIndexer(pal color.Palette) *indexer {
	x := &indexer{pal: pal}
	for i := range x.cache {
		x.cache[i] = -1
	}
	return x
}

func (x *indexer) index(r, g, b int) int {
	k := r>>3<<10 | g>>3<<5 | b>>3
	if i := x.cache[k]; i >= 0 {
		return int(i)
	}
	best, bestD := 0, -1
	for i, c := range x.pal {
		pr, pg, pb, _ := c.RGBA()
		dr, dg, db := r-int(pr>>8), g-int(pg>>8), b-int(pb>>8)
		if d := dr*dr + dg*dg + db*db; bestD < 0 || d < bestD {
			best, bestD = i, d
		}
	}
	x.cache[k] = int16(best)
	return best
}

// packRGB flattens any image to packed 8-bit RGB over black.
func packRGB(img image.Image) ([]byte, int, int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := make([]byte, 0, 3*w*h)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			out = append(out, byte(r>>8), byte(g>>8), byte(bl>>8))
		}
	}
	return out, w, h
}
