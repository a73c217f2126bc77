package media

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// fp16Nearest rounds x ≥ 0 to the nearest fp16 (ties to even) from the
// exact values of the fp16 encodings (positive ones order like their bits):
// independent of f16.FromF32.
func fp16Nearest(x float64) uint16 {
	val := func(b uint16) float64 {
		e, m := int(b>>10), float64(b&0x3ff)
		if e == 0 {
			return math.Ldexp(m, -24)
		}
		return math.Ldexp(1024+m, e-25)
	}
	lo, hi := uint16(0), uint16(0x7bff)
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; val(mid) <= x {
			lo = mid
		} else {
			hi = mid
		}
	}
	dl, dh := x-val(lo), val(hi)-x
	if dl < dh || (dl == dh && lo&1 == 0) {
		return lo
	}
	return hi
}

// refPatches lays out expected bytes rgb[h][w][c] from the formula of
// multimodal.md §1.2 step 5, computing every index from scratch.
func refPatches(t *testing.T, side int, at func(h, w, c int) float64) []uint16 {
	t.Helper()
	grid := side / 16
	cache := map[float64]uint16{}
	out := make([]uint16, grid*grid*768)
	for h := range side {
		for w := range side {
			for c := range 3 {
				v := at(h, w, c)
				f, ok := cache[v]
				if !ok {
					f = fp16Nearest(float64(float32(v) * float32(1.0/255.0)))
					cache[v] = f
				}
				out[((h/16)*grid+w/16)*768+((h%16)*16+w%16)*3+c] = f
			}
		}
	}
	return out
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// pngFile writes a PNG by hand, so every colour type (Go's encoder never
// writes grey+alpha or a tRNS colour key) and bit depth can be made.
func pngFile(w, h, depth, colorType int, plte, trns []byte, rows [][]byte) []byte {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	for _, r := range rows {
		zw.Write(append([]byte{0}, r...))
	}
	zw.Close()
	return pngOf(w, h, depth, colorType, plte, trns, z.Bytes())
}

// pngOf is a PNG file around a zlib stream of filtered rows.
func pngOf(w, h, depth, colorType int, plte, trns, zdata []byte) []byte {
	chunk := func(b []byte, typ string, data []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		c := append([]byte(typ), data...)
		b = append(b, c...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(c))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, byte(depth), byte(colorType), 0, 0, 0)
	b := chunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", ihdr)
	if plte != nil {
		b = chunk(b, "PLTE", plte)
	}
	if trns != nil {
		b = chunk(b, "tRNS", trns)
	}
	b = chunk(b, "IDAT", zdata)
	return chunk(b, "IEND", nil)
}

// TestPatchesPNGColourTypes decodes a 32×32 PNG (grid 2, no resizing) of
// every colour type and checks every patch value against the formula:
// premultiplied over black, /255, fp16.
func TestPatchesPNGColourTypes(t *testing.T) {
	const side = 32
	g := VisionGeometry{Grid: 2, Side: side}
	dir := t.TempDir()
	// Pixel (h, w): r, g, b, a on 0–255 (16-bit files scale them by 257 and
	// add a low byte), with a transparent and a half-transparent band.
	px := func(h, w int) [4]int {
		a := 255
		switch {
		case h < 4:
			a = 0
		case h < 8:
			a = 128
		}
		return [4]int{(w * 8) % 256, (h * 8) % 256, (h*w + 7) % 256, a}
	}
	grey := func(h, w int) int { return (h*8 + w) % 256 }
	type variant struct {
		name  string
		file  []byte
		want  func(h, w, c int) float64
		tol16 bool
	}
	var vs []variant
	rows := func(f func(h, w int) []byte) [][]byte {
		var r [][]byte
		for h := range side {
			var row []byte
			for w := range side {
				row = append(row, f(h, w)...)
			}
			r = append(r, row)
		}
		return r
	}
	premul := func(c, a int) float64 { return math.Round(float64(c) * float64(a) / 255) }
	vs = append(vs,
		variant{"grey8", pngFile(side, side, 8, 0, nil, nil, rows(func(h, w int) []byte { return []byte{byte(grey(h, w))} })),
			func(h, w, c int) float64 { return float64(grey(h, w)) }, false},
		variant{"grey8 tRNS", pngFile(side, side, 8, 0, nil, []byte{0, 5}, rows(func(h, w int) []byte { return []byte{byte(grey(h, w))} })),
			func(h, w, c int) float64 {
				if grey(h, w) == 5 {
					return 0
				}
				return float64(grey(h, w))
			}, false},
		variant{"rgb8", pngFile(side, side, 8, 2, nil, nil, rows(func(h, w int) []byte { p := px(h, w); return []byte{byte(p[0]), byte(p[1]), byte(p[2])} })),
			func(h, w, c int) float64 { return float64(px(h, w)[c]) }, false},
		variant{"rgb8 tRNS", pngFile(side, side, 8, 2, nil, []byte{0, 0, 0, 0, 0, 7}, rows(func(h, w int) []byte { p := px(h, w); return []byte{byte(p[0]), byte(p[1]), byte(p[2])} })),
			func(h, w, c int) float64 {
				if p := px(h, w); p[0] == 0 && p[1] == 0 && p[2] == 7 {
					return 0
				}
				return float64(px(h, w)[c])
			}, false},
		variant{"grey+alpha8", pngFile(side, side, 8, 4, nil, nil, rows(func(h, w int) []byte { return []byte{byte(grey(h, w)), byte(px(h, w)[3])} })),
			func(h, w, c int) float64 { return premul(grey(h, w), px(h, w)[3]) }, false},
		variant{"rgba8", pngFile(side, side, 8, 6, nil, nil, rows(func(h, w int) []byte { p := px(h, w); return []byte{byte(p[0]), byte(p[1]), byte(p[2]), byte(p[3])} })),
			func(h, w, c int) float64 { return premul(px(h, w)[c], px(h, w)[3]) }, false},
		variant{"rgba16", pngFile(side, side, 16, 6, nil, nil, rows(func(h, w int) []byte {
			p := px(h, w)
			return []byte{byte(p[0]), 0x40, byte(p[1]), 0x40, byte(p[2]), 0x40, byte(p[3]), byte(p[3])}
		})), func(h, w, c int) float64 {
			p := px(h, w)
			return float64(p[c]*256+0x40) * float64(p[3]*257) / 65535 / 257
		}, true},
		variant{"grey16", pngFile(side, side, 16, 0, nil, nil, rows(func(h, w int) []byte { return []byte{byte(grey(h, w)), 0x90} })),
			func(h, w, c int) float64 { return float64(grey(h, w)*256+0x90) / 257 }, true},
		variant{"rgb16", pngFile(side, side, 16, 2, nil, nil, rows(func(h, w int) []byte {
			p := px(h, w)
			return []byte{byte(p[0]), 0x10, byte(p[1]), 0x10, byte(p[2]), 0x10}
		})), func(h, w, c int) float64 { return float64(px(h, w)[c]*256+0x10) / 257 }, true},
	)
	// Palette with tRNS: index i is colour (i, 255-i, 3i) with alpha i.
	var plte, trns []byte
	for i := range 256 {
		plte = append(plte, byte(i), byte(255-i), byte(3*i))
		trns = append(trns, byte(i))
	}
	idx := func(h, w int) int { return (h*32 + w) % 256 }
	vs = append(vs, variant{"palette tRNS", pngFile(side, side, 8, 3, plte, trns, rows(func(h, w int) []byte { return []byte{byte(idx(h, w))} })),
		func(h, w, c int) float64 {
			i := idx(h, w)
			return premul([]int{i, 255 - i, (3 * i) % 256}[c], i)
		}, false})

	for _, v := range vs {
		im, err := LoadImage(writeFile(t, dir, strings.ReplaceAll(v.name, " ", "_")+".png", v.file), Options{})
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if im.Format != "png" || im.Width != side || im.Height != side {
			t.Fatalf("%s: %s %d×%d", v.name, im.Format, im.Width, im.Height)
		}
		got, err := im.Patches(g)
		if err != nil {
			t.Fatal(err)
		}
		if !v.tol16 {
			want := refPatches(t, side, v.want)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s: patch value %d = %#04x, want %#04x", v.name, i, got[i], want[i])
				}
			}
			continue
		}
		// 16-bit sources: the byte must be a rounding of the exact value.
		lo := refPatches(t, side, func(h, w, c int) float64 { return math.Floor(v.want(h, w, c) + 0.49) })
		hi := refPatches(t, side, func(h, w, c int) float64 { return math.Floor(v.want(h, w, c) + 0.51) })
		for i := range lo {
			if got[i] != lo[i] && got[i] != hi[i] {
				t.Fatalf("%s: patch value %d = %#04x, want %#04x or %#04x", v.name, i, got[i], lo[i], hi[i])
			}
		}
	}
}

// TestPatchify checks the layout on a picture whose bytes encode their own
// position, and the /255 fp16 table against the independent rounding.
func TestPatchify(t *testing.T) {
	g := VisionGeometry{Grid: 3, Side: 48}
	rgb := make([]byte, 3*48*48)
	for i := range rgb {
		rgb[i] = byte(i * 7)
	}
	want := refPatches(t, 48, func(h, w, c int) float64 { return float64(byte((3*(h*48+w) + c) * 7)) })
	got := Patchify(rgb, g)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d: %#04x, want %#04x", i, got[i], want[i])
		}
	}
}

// refResize stretches an NRGBA picture straight from the definition: a 2-D
// sum over every source pixel of the product of the two axis kernels
// (Catmull-Rom, widened by the scale when shrinking), normalised,
// premultiplied, in float64.
func refResize(src *image.NRGBA, ow, oh int) []float64 {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	kern := func(x float64) float64 {
		x = math.Abs(x)
		if x < 1 {
			return 1.5*x*x*x - 2.5*x*x + 1
		}
		if x < 2 {
			return -0.5*x*x*x + 2.5*x*x - 4*x + 2
		}
		return 0
	}
	axis := func(in, out, i int) []float64 {
		s := float64(in) / float64(out)
		f := math.Max(s, 1)
		c := (float64(i) + 0.5) * s
		ws := make([]float64, in)
		var sum float64
		for x := range in {
			if d := float64(x) + 0.5 - c; math.Abs(d) < 2*f && math.Floor(c-2*f+0.5) <= float64(x) && float64(x) < math.Floor(c+2*f+0.5) {
				ws[x] = kern(d / f)
				sum += ws[x]
			}
		}
		for x := range ws {
			ws[x] /= sum
		}
		return ws
	}
	out := make([]float64, 3*ow*oh)
	for y := range oh {
		wy := axis(h, oh, y)
		for x := range ow {
			wx := axis(w, ow, x)
			for sy := range h {
				for sx := range w {
					k := wy[sy] * wx[sx]
					if k == 0 {
						continue
					}
					p := src.NRGBAAt(sx, sy)
					a := float64(p.A) / 255
					out[3*(y*ow+x)] += k * float64(p.R) * a
					out[3*(y*ow+x)+1] += k * float64(p.G) * a
					out[3*(y*ow+x)+2] += k * float64(p.B) * a
				}
			}
		}
	}
	return out
}

// TestResizeMatchesDefinition: shrinking, enlarging and mixed stretches
// agree with the direct 2-D definition to within one rounding step.
func TestResizeMatchesDefinition(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 37, 23))
	for i := range src.Pix {
		src.Pix[i] = byte(i*i*31 + i)
	}
	for i := 3; i < len(src.Pix); i += 4 {
		if (i/4)%5 == 0 {
			src.Pix[i] = 0
		} else {
			src.Pix[i] = 255
		}
	}
	for _, sz := range [][2]int{{16, 16}, {48, 48}, {8, 40}, {37, 23}, {1, 1}, {100, 5}} {
		got := resizeRGB(src, sz[0], sz[1], yccFor("jpeg"))
		want := refResize(src, sz[0], sz[1])
		for i := range want {
			w := math.Min(255, math.Max(0, want[i]))
			if math.Abs(float64(got[i])-w) > 0.5001 {
				t.Fatalf("%v: value %d = %d, definition %.3f", sz, i, got[i], want[i])
			}
		}
	}
}

// TestResizeYCbCrPlanes: resizing a JPEG's planes and converting after
// agrees with converting to RGB first and resizing that.
func TestResizeYCbCrPlanes(t *testing.T) {
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440} {
		m := image.NewYCbCr(image.Rect(0, 0, 101, 75), ratio)
		for y := range 75 {
			for x := range 101 {
				// In gamut, so no conversion clamps (the plane path clamps
				// after filtering, a per-pixel conversion before it).
				// Smooth chroma: replicated and filtered chroma then agree.
				m.Y[m.YOffset(x, y)] = byte(60 + (x*y)%130)
				m.Cb[m.COffset(x, y)] = byte(128 + 18*math.Sin(float64(x)/9))
				m.Cr[m.COffset(x, y)] = byte(128 + 18*math.Cos(float64(y)/7))
			}
		}
		rgba := image.NewNRGBA(m.Bounds())
		for y := range 75 {
			for x := range 101 {
				rgba.Set(x, y, m.At(x, y))
			}
		}
		got := resizeRGB(m, 40, 30, yccFor("jpeg"))
		want := refResize(rgba, 40, 30)
		for i := range want {
			// Go's YCbCr→RGB rounds each source pixel; the plane path
			// rounds once at the end, and chroma is filtered at its own
			// resolution instead of replicated: allow two steps.
			if d := math.Abs(float64(got[i]) - want[i]); d > 2 {
				t.Fatalf("%v: value %d = %d, want %.2f", ratio, i, got[i], want[i])
			}
		}
	}
}

// TestTransparencyIsBlack: a fully transparent white picture is black to
// the model, and half-transparent white is mid grey.
func TestTransparencyIsBlack(t *testing.T) {
	for _, c := range []struct {
		a    byte
		want byte
	}{{0, 0}, {128, 128}, {255, 255}} {
		m := image.NewNRGBA(image.Rect(0, 0, 50, 30))
		for i := range m.Pix {
			m.Pix[i] = 255
			if i%4 == 3 {
				m.Pix[i] = c.a
			}
		}
		im := &Image{src: m, Orientation: 1, Width: 50, Height: 30}
		for i, v := range mustResized(t, im, 16, 16) {
			if v != c.want {
				t.Fatalf("alpha %d: byte %d = %d, want %d", c.a, i, v, c.want)
			}
		}
	}
}

// Orientation fixtures: an upright 6×4 picture of four coloured quadrants
// (each 3×2), and the transform a camera stores for each orientation (the
// inverse of what a viewer applies).
var quadrants = [4]color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 0, 255}}

func uprightQuadrants(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			q := 0
			if x >= w/2 {
				q++
			}
			if y >= h/2 {
				q += 2
			}
			m.SetNRGBA(x, y, quadrants[q])
		}
	}
	return m
}

// storedFor returns what a camera writes for orientation o so that a viewer
// applying o shows up. Each case is spelled out as a plain transform.
func storedFor(up *image.NRGBA, o int) *image.NRGBA {
	w, h := up.Bounds().Dx(), up.Bounds().Dy()
	tr := func(sw, sh int, f func(x, y int) (int, int)) *image.NRGBA {
		m := image.NewNRGBA(image.Rect(0, 0, sw, sh))
		for y := range h {
			for x := range w {
				dx, dy := f(x, y)
				m.SetNRGBA(dx, dy, up.NRGBAAt(x, y))
			}
		}
		return m
	}
	switch o {
	case 2: // viewer mirrors left–right, so the file is mirrored
		return tr(w, h, func(x, y int) (int, int) { return w - 1 - x, y })
	case 3: // viewer turns 180°
		return tr(w, h, func(x, y int) (int, int) { return w - 1 - x, h - 1 - y })
	case 4: // viewer mirrors top–bottom
		return tr(w, h, func(x, y int) (int, int) { return x, h - 1 - y })
	case 5: // viewer transposes (self-inverse)
		return tr(h, w, func(x, y int) (int, int) { return y, x })
	case 6: // viewer turns 90° clockwise, so the file is turned counter-clockwise
		return tr(h, w, func(x, y int) (int, int) { return y, w - 1 - x })
	case 7: // viewer transverses (self-inverse)
		return tr(h, w, func(x, y int) (int, int) { return h - 1 - y, w - 1 - x })
	case 8: // viewer turns 90° counter-clockwise, so the file is turned clockwise
		return tr(h, w, func(x, y int) (int, int) { return h - 1 - y, x })
	}
	return up
}

func tiffWithOrientation(o int) []byte {
	t := []byte("MM\x00*\x00\x00\x00\x08\x00\x01")
	t = append(t, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(o), 0, 0)
	return append(t, 0, 0, 0, 0)
}

// exifJPEG encodes m as a JPEG whose APP1 Exif segment declares
// orientation o.
func exifJPEG(m image.Image, o int) []byte {
	var b bytes.Buffer
	jpeg.Encode(&b, m, &jpeg.Options{Quality: 95})
	app1 := append([]byte("Exif\x00\x00"), tiffWithOrientation(o)...)
	seg := append([]byte{0xff, 0xe1}, binary.BigEndian.AppendUint16(nil, uint16(len(app1)+2))...)
	return append(append([]byte{0xff, 0xd8}, append(seg, app1...)...), b.Bytes()[2:]...)
}

// TestEXIFOrientation: for orientations 1–8, a PNG (eXIf chunk, checked
// pixel for pixel) and a JPEG (APP1 Exif, checked by quadrant colour) of
// the stored picture come out upright.
func TestEXIFOrientation(t *testing.T) {
	dir := t.TempDir()
	for o := 1; o <= 8; o++ {
		// PNG: 6×4 upright, checked at its own size.
		up := uprightQuadrants(6, 4)
		var b bytes.Buffer
		png.Encode(&b, storedFor(up, o))
		raw := b.Bytes()
		exif := tiffWithOrientation(o)
		chunk := binary.BigEndian.AppendUint32(nil, uint32(len(exif)))
		chunk = append(chunk, "eXIf"...)
		chunk = append(chunk, exif...)
		chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(append([]byte("eXIf"), exif...)))
		raw = append(append(append([]byte(nil), raw[:33]...), chunk...), raw[33:]...) // after IHDR
		im, err := LoadImage(writeFile(t, dir, "o.png", raw), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if im.Orientation != o || im.Width != 6 || im.Height != 4 {
			t.Fatalf("png o=%d: orientation %d, %d×%d", o, im.Orientation, im.Width, im.Height)
		}
		got := mustResized(t, im, 6, 4)
		for y := range 4 {
			for x := range 6 {
				c := up.NRGBAAt(x, y)
				if p := got[3*(y*6+x):]; p[0] != c.R || p[1] != c.G || p[2] != c.B {
					t.Fatalf("png o=%d: (%d,%d) = %v, want %v", o, x, y, p[:3], c)
				}
			}
		}

		// JPEG: 64×48 upright, checked at the centre of each quadrant.
		up = uprightQuadrants(64, 48)
		im, err = LoadImage(writeFile(t, dir, "o.jpg", exifJPEG(storedFor(up, o), o)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if im.Orientation != o || im.Width != 64 || im.Height != 48 {
			t.Fatalf("jpeg o=%d: orientation %d, %d×%d", o, im.Orientation, im.Width, im.Height)
		}
		got = mustResized(t, im, 64, 48)
		for q, pt := range [][2]int{{16, 12}, {48, 12}, {16, 36}, {48, 36}} {
			p := got[3*(pt[1]*64+pt[0]):]
			c := quadrants[q]
			if absDiff(p[0], c.R) > 8 || absDiff(p[1], c.G) > 8 || absDiff(p[2], c.B) > 8 {
				t.Fatalf("jpeg o=%d: quadrant %d = %v, want %v", o, q, p[:3], c)
			}
		}
	}
}

func absDiff(a, b byte) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// TestImageFormats: GIF (first frame), BMP, TIFF and JPEG decode through
// LoadImage; unknown and HEIC files are refused by name.
func TestImageFormats(t *testing.T) {
	dir := t.TempDir()
	up := uprightQuadrants(32, 32)
	enc := map[string]func() []byte{
		"bmp":  func() []byte { var b bytes.Buffer; bmp.Encode(&b, up); return b.Bytes() },
		"tiff": func() []byte { var b bytes.Buffer; tiff.Encode(&b, up, nil); return b.Bytes() },
		"gif": func() []byte {
			pal := color.Palette{quadrants[0], quadrants[1], quadrants[2], quadrants[3], color.Black}
			f1, f2 := image.NewPaletted(up.Bounds(), pal), image.NewPaletted(up.Bounds(), pal)
			for y := range 32 {
				for x := range 32 {
					f1.Set(x, y, up.At(x, y))
					f2.SetColorIndex(x, y, 4) // second frame: black
				}
			}
			var b bytes.Buffer
			gif.EncodeAll(&b, &gif.GIF{Image: []*image.Paletted{f1, f2}, Delay: []int{10, 10}})
			return b.Bytes()
		},
	}
	for name, f := range enc {
		im, err := LoadImage(writeFile(t, dir, "q."+name, f()), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := mustResized(t, im, 32, 32)
		for q, pt := range [][2]int{{8, 8}, {24, 8}, {8, 24}, {24, 24}} {
			p := got[3*(pt[1]*32+pt[0]):]
			if c := quadrants[q]; p[0] != c.R || p[1] != c.G || p[2] != c.B {
				t.Errorf("%s: quadrant %d = %v, want %v", name, q, p[:3], c)
			}
		}
		if im.Format != name {
			t.Errorf("%s: format %q", name, im.Format)
		}
	}

	heic := writeFile(t, dir, "IMG_0001.HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"))
	if _, err := LoadImage(heic, Options{}); !errors.Is(err, ErrUnsupportedFormat) || !strings.Contains(err.Error(), "macOS") || !strings.Contains(err.Error(), heic) {
		t.Errorf("heic: %v", err)
	}
	if _, err := LoadImage(heic, Options{Images: fakeImages{}}); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("heic, platform refuses: %v", err)
	}
	txt := writeFile(t, dir, "notes.txt", []byte("hello"))
	if _, err := LoadImage(txt, Options{}); !errors.Is(err, ErrUnsupportedFormat) || !strings.Contains(err.Error(), txt) {
		t.Errorf("text: %v", err)
	}
}

// TestDecompressionBomb: headers that promise too many pixels are refused
// before any pixel is decoded, naming the file.
func TestDecompressionBomb(t *testing.T) {
	dir := t.TempDir()
	// A 100000×100000 PNG whose data is one row: the header alone decides.
	bomb := pngFile(100000, 100000, 8, 0, nil, nil, [][]byte{make([]byte, 16)})
	p := writeFile(t, dir, "bomb.png", bomb)
	_, err := LoadImage(p, Options{})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "100000×100000") {
		t.Errorf("bomb: %v", err)
	}
	// A JPEG header (SOF0) claiming 60000×60000.
	var b bytes.Buffer
	jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8)), nil)
	raw := b.Bytes()
	for i := 0; i+9 < len(raw); i++ {
		if raw[i] == 0xff && raw[i+1] == 0xc0 {
			binary.BigEndian.PutUint16(raw[i+5:], 60000)
			binary.BigEndian.PutUint16(raw[i+7:], 60000)
			break
		}
	}
	if _, err := LoadImage(writeFile(t, dir, "bomb.jpg", raw), Options{}); err == nil || !strings.Contains(err.Error(), "megapixels") {
		t.Errorf("jpeg bomb: %v", err)
	}
	// Limits are options.
	rows := make([][]byte, 30)
	for i := range rows {
		rows[i] = make([]byte, 40)
	}
	ok := writeFile(t, dir, "ok.png", pngFile(40, 30, 8, 0, nil, nil, rows))
	if _, err := LoadImage(ok, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadImage(ok, Options{MaxPixels: 1000}); err == nil {
		t.Error("MaxPixels ignored")
	}
	if _, err := LoadImage(ok, Options{MaxSide: 39}); err == nil {
		t.Error("MaxSide ignored")
	}
}

// TestVisionGrid: the geometry comes from the declared shape, with the
// published refusal.
func TestVisionGrid(t *testing.T) {
	for _, c := range []struct {
		shape      []int
		grid, side int
		err        string
	}{
		{[]int{1, 2304, 768}, 48, 768, ""},
		{[]int{1, 576, 768}, 24, 384, ""},
		{[]int{1, 144, 768}, 12, 192, ""},
		{[]int{1, 65536, 768}, 256, 4096, ""},
		{[]int{1, 66049, 768}, 0, 0, "does not declare a square patch grid of at most 4096px"},
		{[]int{1, 2305, 768}, 0, 0, "does not declare a square patch grid"},
		{[]int{2304, 768}, 0, 0, "does not declare a square patch grid"},
		{[]int{1, 0, 768}, 0, 0, "does not declare a square patch grid"},
		{[]int{1, 2304, 588}, 0, 0, "588 values per patch"},
	} {
		g, err := VisionGrid("vision_fp16.mlmodelc", c.shape)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "vision_fp16.mlmodelc ") {
				t.Errorf("%v: %v", c.shape, err)
			}
			continue
		}
		if err != nil || g.Grid != c.grid || g.Side != c.side || g.Patches() != c.shape[1] {
			t.Errorf("%v: %+v %v", c.shape, g, err)
		}
	}
}

// TestThumbnailAndSummary: a thumbnail fits 256 px with the aspect kept and
// upright; the summary carries what a chip shows.
func TestThumbnailAndSummary(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	png.Encode(&b, storedFor(uprightQuadrants(600, 300), 1))
	im, err := LoadImage(writeFile(t, dir, "wide.png", b.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	th, err := im.Thumbnail(ThumbnailSize)
	if err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(bytes.NewReader(th))
	if err != nil || m.Bounds().Dx() != 256 || m.Bounds().Dy() != 128 {
		t.Fatalf("thumbnail %v %v", m.Bounds(), err)
	}
	if r, g, _, _ := m.At(200, 20).RGBA(); r>>8 != 0 || g>>8 != 255 {
		t.Errorf("top-right of thumbnail is not green")
	}
	for _, c := range [][4]int{{600, 300, 256, 128}, {300, 600, 128, 256}, {100, 50, 100, 50}, {10000, 1, 256, 1}} {
		if w, h := thumbSize(c[0], c[1], 256); w != c[2] || h != c[3] {
			t.Errorf("thumbSize(%d, %d) = %d×%d", c[0], c[1], w, h)
		}
	}
	s := im.Summary(256)
	if s.Kind != "image" || s.Name != "wide.png" || s.Width != 600 || len(s.SHA256) != 64 || s.Bytes != int64(b.Len()) {
		t.Errorf("%+v", s)
	}
	if got := s.String(); !strings.HasPrefix(got, "wide.png · ") || !strings.HasSuffix(got, " · 600×300 · 256 tokens") {
		t.Errorf("chip %q", got)
	}
	a := &Audio{Info: FileInfo{Name: "memo.wav", Bytes: 2_100_000}, Samples: make([]float32, 45*SampleRate), Format: "wav", SourceRate: 48000, Channels: 2}
	// Silence splits at the middle: 2 × 563 tokens for 22.5 s each.
	if got := a.Summary().String(); got != "memo.wav · 2.1 MB · 45.0 s in 2 parts · 1126 tokens" {
		t.Errorf("audio chip %q", got)
	}
}

func mustResized(t testing.TB, im *Image, w, h int) []byte {
	t.Helper()
	rgb, err := im.Resized(w, h)
	if err != nil {
		t.Fatal(err)
	}
	return rgb
}
