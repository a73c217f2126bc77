package media

import (
	"image"
	"image/color"
)

// yccMatrix converts Y'CbCr to R'G'B': full range (JPEG's JFIF) or the
// limited "studio" range of BT.601 that lossy WebP (VP8) uses. Go's
// image.YCbCr always converts as full range, which washes WebP colours out
// (pure red comes back as 239,15,15), so the range travels with the image.
type yccMatrix struct {
	yScale, yOff, rV, gU, gV, bU float32
}

// yccFor is the matrix of a format's Y'CbCr pictures.
func yccFor(format string) yccMatrix {
	if format == "webp" {
		return yccMatrix{255.0 / 219, 16, 1.596027, 0.391762, 0.812968, 2.017232}
	}
	return yccMatrix{1, 0, 1.402, 0.344136, 0.714136, 1.772}
}

func (m yccMatrix) rgb(y, cb, cr float32) (r, g, b float32) {
	y = (y - m.yOff) * m.yScale
	u, v := cb-128, cr-128
	return y + m.rV*v, y - m.gU*u - m.gV*v, y + m.bU*u
}

// resizeRGB stretches img to outW×outH and returns packed 8-bit RGB,
// premultiplied by alpha over black: what a zeroed premultiplied RGBA
// canvas holds after the image is drawn over it, with the alpha dropped
// (multimodal.md §1.2 steps 2–4). ycc is the range of a Y'CbCr image.
func resizeRGB(img image.Image, outW, outH int, ycc yccMatrix) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	sx, sy := float64(w)/float64(outW), float64(h)/float64(outH)
	out := make([]byte, 3*outW*outH)
	switch m := img.(type) {
	case *image.YCbCr:
		// Filter the planes at their own resolution, then convert: the
		// conversion is affine, so this equals converting first, and it
		// skips converting (and chroma-upsampling) every source pixel.
		hs, vs := chromaFactors(m.SubsampleRatio)
		cw, chh := (w+hs-1)/hs, (h+vs-1)/vs
		y := resize(planeSource(m.Y, m.YStride, m.YOffset(b.Min.X, b.Min.Y), w, h), outW, outH, sx, sy)
		cb := resize(planeSource(m.Cb, m.CStride, m.COffset(b.Min.X, b.Min.Y), cw, chh), outW, outH, sx/float64(hs), sy/float64(vs))
		cr := resize(planeSource(m.Cr, m.CStride, m.COffset(b.Min.X, b.Min.Y), cw, chh), outW, outH, sx/float64(hs), sy/float64(vs))
		for i := range y {
			r, g, b := ycc.rgb(y[i], cb[i], cr[i])
			out[3*i], out[3*i+1], out[3*i+2] = to8(r), to8(g), to8(b)
		}
	case *image.Gray:
		g := resize(planeSource(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), w, h), outW, outH, sx, sy)
		for i, v := range g {
			c := to8(v)
			out[3*i], out[3*i+1], out[3*i+2] = c, c, c
		}
	default:
		rgb := resize(rgbSource(img, ycc), outW, outH, sx, sy)
		for i, v := range rgb {
			out[i] = to8(v)
		}
	}
	return out
}

// chromaFactors is how many luma samples one chroma sample spans across
// and down.
func chromaFactors(r image.YCbCrSubsampleRatio) (int, int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return 2, 1
	case image.YCbCrSubsampleRatio420:
		return 2, 2
	case image.YCbCrSubsampleRatio440:
		return 1, 2
	case image.YCbCrSubsampleRatio411:
		return 4, 1
	case image.YCbCrSubsampleRatio410:
		return 4, 2
	}
	return 1, 1
}

// planeSource reads one 8-bit plane.
func planeSource(pix []byte, stride, offset, w, h int) rowSource {
	return rowSource{w: w, h: h, ch: 1, load: func(y int, dst []float32) {
		row := pix[offset+y*stride : offset+y*stride+w]
		for x, v := range row {
			dst[x] = float32(v)
		}
	}}
}

// rgbSource reads any image as premultiplied RGB, with fast paths for the
// types the decoders return.
func rgbSource(img image.Image, ycc yccMatrix) rowSource {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	src := rowSource{w: w, h: h, ch: 3}
	switch m := img.(type) {
	case *image.RGBA: // already premultiplied
		src.load = func(y int, dst []float32) {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := range w {
				dst[3*x], dst[3*x+1], dst[3*x+2] = float32(row[4*x]), float32(row[4*x+1]), float32(row[4*x+2])
			}
		}
	case *image.NRGBA:
		src.load = func(y int, dst []float32) {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := range w {
				a := float32(row[4*x+3]) / 255
				dst[3*x], dst[3*x+1], dst[3*x+2] = float32(row[4*x])*a, float32(row[4*x+1])*a, float32(row[4*x+2])*a
			}
		}
	case *image.Paletted:
		var pal [256][3]float32
		for i, c := range m.Palette {
			pal[i] = premul16(c)
		}
		src.load = func(y int, dst []float32) {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := range w {
				p := pal[row[x]]
				dst[3*x], dst[3*x+1], dst[3*x+2] = p[0], p[1], p[2]
			}
		}
	case *image.NYCbCrA: // lossy WebP with alpha
		src.load = func(y int, dst []float32) {
			yi := m.YOffset(b.Min.X, b.Min.Y+y)
			ai := m.AOffset(b.Min.X, b.Min.Y+y)
			for x := range w {
				c := m.COffset(b.Min.X+x, b.Min.Y+y)
				r, g, bb := ycc.rgb(float32(m.Y[yi+x]), float32(m.Cb[c]), float32(m.Cr[c]))
				a := float32(m.A[ai+x]) / 255
				dst[3*x], dst[3*x+1], dst[3*x+2] = clamp255(r)*a, clamp255(g)*a, clamp255(bb)*a
			}
		}
	default:
		src.load = func(y int, dst []float32) {
			for x := range w {
				p := premul16(img.At(b.Min.X+x, b.Min.Y+y))
				dst[3*x], dst[3*x+1], dst[3*x+2] = p[0], p[1], p[2]
			}
		}
	}
	return src
}

// premul16 is a colour's premultiplied RGB on a 0–255 scale, from Go's
// 16-bit premultiplied RGBA (so 16-bit images keep their precision until
// the final rounding).
func premul16(c color.Color) [3]float32 {
	r, g, b, _ := c.RGBA()
	return [3]float32{float32(r) / 257, float32(g) / 257, float32(b) / 257}
}

func clamp255(v float32) float32 { return min(255, max(0, v)) }
