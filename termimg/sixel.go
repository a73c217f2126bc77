package termimg

import (
	"image"
	"image/color"
	"strconv"
	"strings"
)

// SixelImage draws img with DEC sixel graphics at its own pixel size (a
// terminal cell is usually 8–10 pixels wide: scale the picture first, using
// QueryCellSize). Colours are reduced to at most 256 by median cut
// (quantize); with dither, the rounding error is spread Floyd–Steinberg
// style so gradients do not band. Transparent pixels are drawn black. Only
// o.Tmux applies.
func SixelImage(img image.Image, dither bool, o Options) string {
	rgb, w, h := packRGB(img)
	if w == 0 || h == 0 {
		return ""
	}
	pal := quantize(rgb, 256)
	idx := mapPixels(rgb, w, h, pal, dither)

	var b strings.Builder
	b.WriteString("\x1bP0;1q")
	b.WriteString("\"1;1;" + strconv.Itoa(w) + ";" + strconv.Itoa(h))
	for i, c := range pal {
		r, g, bl, _ := c.RGBA()
		b.WriteString("#" + strconv.Itoa(i) + ";2;" + pct(r) + ";" + pct(g) + ";" + pct(bl))
	}
	row := make([]byte, w)
	for band := 0; band < h; band += 6 {
		if band > 0 {
			b.WriteByte('-')
		}
		// The colours present in this band, in palette order.
		var used [256]bool
		for y := band; y < min(h, band+6); y++ {
			for _, p := range idx[y*w : (y+1)*w] {
				used[p] = true
			}
		}
		firstColour := true
		for c := range pal {
			if !used[c] {
				continue
			}
			for x := range w {
				var bits byte
				for dy := range min(6, h-band) {
					if int(idx[(band+dy)*w+x]) == c {
						bits |= 1 << dy
					}
				}
				row[x] = '?' + bits
			}
			if !firstColour {
				b.WriteByte('$')
			}
			firstColour = false
			b.WriteString("#" + strconv.Itoa(c))
			writeRuns(&b, strings.TrimRight(string(row), "?"))
		}
	}
	b.WriteString("\x1b\\")
	return o.wrap(b.String())
}

// pct is a 16-bit colour channel as the 0–100 percentage sixel colours use.
func pct(v uint32) string { return strconv.Itoa(int((v>>8)*100+127) / 255) }

// writeRuns writes sixel characters, run-length encoding runs of four or
// more (!n c).
func writeRuns(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if n := j - i; n >= 4 {
			b.WriteString("!" + strconv.Itoa(n))
			b.WriteByte(s[i])
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
}

// mapPixels gives each pixel its palette index, optionally with
// Floyd–Steinberg error diffusion (left to right on every row).
func mapPixels(rgb []byte, w, h int, pal color.Palette, dither bool) []uint8 {
	x := newIndexer(pal)
	out := make([]uint8, w*h)
	if !dither {
		for i := range out {
			out[i] = uint8(x.index(int(rgb[3*i]), int(rgb[3*i+1]), int(rgb[3*i+2])))
		}
		return out
	}
	// Errors carried to this row and the next, in 1/16 units.
	cur, next := make([]int, 3*(w+2)), make([]int, 3*(w+2))
	for y := range h {
		for i := range next {
			next[i] = 0
		}
		for px := range w {
			var v [3]int
			for c := range 3 {
				v[c] = min(255, max(0, int(rgb[3*(y*w+px)+c])+cur[3*(px+1)+c]/16))
			}
			p := x.index(v[0], v[1], v[2])
			out[y*w+px] = uint8(p)
			r, g, b, _ := pal[p].RGBA()
			q := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
			for c := range 3 {
				e := v[c] - q[c]
				cur[3*(px+2)+c] += 7 * e
				next[3*px+c] += 3 * e
				next[3*(px+1)+c] += 5 * e
				next[3*(px+2)+c] += e
			}
		}
		cur, next = next, cur
	}
	return out
}
