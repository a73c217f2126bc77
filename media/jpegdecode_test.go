package media

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testPicture is smooth shading with edges and some texture.
func testPicture(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := m.PixOffset(x, y)
			m.Pix[i] = byte(128 + 100*math.Sin(float64(x)/13))
			m.Pix[i+1] = byte(128 + 90*math.Cos(float64(y)/9))
			m.Pix[i+2] = byte((x*3 + y*5) % 256)
			if (x/20+y/20)%2 == 0 {
				m.Pix[i+2] /= 2
			}
			m.Pix[i+3] = 255
		}
	}
	return m
}

// planesOf returns an image's planes (Y, Cb, Cr or grey) with their size.
type plane struct {
	pix        []byte
	stride     int
	w, h       int
	subX, subY int
}

func planesOf(t *testing.T, m image.Image) []plane {
	t.Helper()
	b := m.Bounds()
	switch m := m.(type) {
	case *image.YCbCr:
		hs, vs := chromaFactors(m.SubsampleRatio)
		cw, ch := (b.Dx()+hs-1)/hs, (b.Dy()+vs-1)/vs
		return []plane{{m.Y, m.YStride, b.Dx(), b.Dy(), 1, 1}, {m.Cb, m.CStride, cw, ch, hs, vs}, {m.Cr, m.CStride, cw, ch, hs, vs}}
	case *image.Gray:
		return []plane{{m.Pix, m.Stride, b.Dx(), b.Dy(), 1, 1}}
	}
	t.Fatalf("decoded a %T", m)
	return nil
}

// compareScaled checks a 1/s decode against image/jpeg's full decode
// averaged over s×s groups: at s = 1 within the two integer IDCTs'
// rounding, below that within what separates a band-limited reduction from
// a box average.
func compareScaled(t *testing.T, name string, data []byte, s int) {
	t.Helper()
	full, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: image/jpeg: %v", name, err)
	}
	got, err := decodeJPEGScaled(data, s)
	if err != nil {
		t.Fatalf("%s 1/%d: %v", name, s, err)
	}
	fb := full.Bounds()
	if gb := got.Bounds(); gb.Dx() != (fb.Dx()+s-1)/s || gb.Dy() != (fb.Dy()+s-1)/s {
		t.Fatalf("%s 1/%d: %v from %v", name, s, gb, fb)
	}
	fp, gp := planesOf(t, full), planesOf(t, got)
	if len(fp) != len(gp) || (len(fp) == 3 && full.(*image.YCbCr).SubsampleRatio != got.(*image.YCbCr).SubsampleRatio) {
		t.Fatalf("%s 1/%d: planes differ", name, s)
	}
	for i := range fp {
		f, g := fp[i], gp[i]
		var sum, worst float64
		n := 0
		for y := 0; y < f.h/s; y++ {
			for x := 0; x < f.w/s; x++ {
				var avg float64
				for dy := range s {
					for dx := range s {
						avg += float64(f.pix[(y*s+dy)*f.stride+x*s+dx])
					}
				}
				avg /= float64(s * s)
				d := math.Abs(avg - float64(g.pix[y*g.stride+x]))
				sum, worst, n = sum+d, max(worst, d), n+1
			}
		}
		mean := sum / float64(max(1, n))
		// Chroma holds this picture's sharpest edges, where a truncated
		// DCT rings and a box average does not.
		maxOK, meanOK := 1.0, 0.1
		switch {
		case s > 1 && i == 0:
			maxOK, meanOK = 10, 2
		case s > 1:
			maxOK, meanOK = 24, 3.5
		}
		if testing.Verbose() && i == 0 {
			t.Logf("%s 1/%d: mean %.2f worst %.0f", name, s, mean, worst)
		}
		if worst > maxOK || mean > meanOK {
			t.Errorf("%s 1/%d plane %d: mean difference %.2f, worst %.0f", name, s, i, mean, worst)
		}
	}
}

// TestDecodeJPEGScaled: Go-encoded colour (4:2:0) and grey JPEGs of awkward
// sizes decode like image/jpeg at full size and like its box average at
// 1/2, 1/4 and 1/8.
func TestDecodeJPEGScaled(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {7, 9}, {17, 33}, {100, 75}, {333, 257}} {
		pic := testPicture(sz[0], sz[1])
		grey := image.NewGray(pic.Bounds())
		for i := range grey.Pix {
			grey.Pix[i] = pic.Pix[4*i+1]
		}
		for _, c := range []struct {
			name string
			img  image.Image
		}{{"colour", pic}, {"grey", grey}} {
			var b bytes.Buffer
			jpeg.Encode(&b, c.img, &jpeg.Options{Quality: 90})
			for _, s := range []int{1, 2, 4, 8} {
				compareScaled(t, fmt.Sprintf("%s %dx%d", c.name, sz[0], sz[1]), b.Bytes(), s)
			}
		}
	}
}

// writePPM writes a binary PPM for cjpeg.
func writePPM(t *testing.T, dir string, m *image.NRGBA) string {
	b := m.Bounds()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "P6\n%d %d\n255\n", b.Dx(), b.Dy())
	for i := 0; i < len(m.Pix); i += 4 {
		buf.Write(m.Pix[i : i+3])
	}
	return writeFile(t, dir, "pic.ppm", buf.Bytes())
}

// TestDecodeJPEGVariants: libjpeg's encoder writes the samplings, restart
// intervals and modes phones and cameras use; the scaled decoder handles
// the sequential ones and leaves progressive and arithmetic files to
// image/jpeg (arithmetic coding is refused by name).
func TestDecodeJPEGVariants(t *testing.T) {
	needTool(t, "cjpeg")
	dir := t.TempDir()
	src := writePPM(t, dir, testPicture(203, 149))
	for _, c := range []struct {
		name        string
		args        []string
		unsupported bool
	}{
		{"444", []string{"-sample", "1x1"}, false},
		{"422", []string{"-sample", "2x1"}, false},
		{"440", []string{"-sample", "1x2"}, false},
		{"411", []string{"-sample", "4x1"}, false},
		{"420 restart rows", []string{"-sample", "2x2", "-restart", "1"}, false},
		{"420 restart 3 MCUs", []string{"-sample", "2x2", "-restart", "3B"}, false},
		{"grey restart", []string{"-grayscale", "-restart", "2B"}, false},
		{"optimised tables", []string{"-optimize"}, false},
		{"progressive", []string{"-progressive"}, true},
	} {
		out := filepath.Join(dir, "out.jpg")
		run(t, "cjpeg", append(append(c.args, "-quality", "92", "-outfile", out), src)...)
		data, _ := os.ReadFile(out)
		_, err := decodeJPEGScaled(data, 2)
		if c.unsupported {
			if err != errJPEGUnsupported {
				t.Errorf("%s: %v, want the image/jpeg fallback", c.name, err)
			}
		} else {
			for _, s := range []int{1, 2, 4, 8} {
				compareScaled(t, c.name, data, s)
			}
		}
		// Through LoadImage either way.
		im, err := LoadImage(out, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := im.Patches(VisionGeometry{Grid: 6, Side: 96}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}

	out := filepath.Join(dir, "arith.jpg")
	run(t, "cjpeg", "-arithmetic", "-outfile", out, src)
	im, err := LoadImage(out, Options{})
	if err == nil {
		_, err = im.Patches(VisionGeometry{Grid: 6, Side: 96})
	}
	if err == nil || !strings.Contains(err.Error(), out) {
		t.Errorf("arithmetic: %v", err)
	}
}

// TestDecodeJPEGCorrupt: a truncated or damaged JPEG is an error naming the
// file, from Patches (pixels are decoded on first use), never a panic.
func TestDecodeJPEGCorrupt(t *testing.T) {
	var b bytes.Buffer
	jpeg.Encode(&b, testPicture(160, 120), &jpeg.Options{Quality: 90})
	data := b.Bytes()
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"truncated", data[:len(data)/3]},
		{"no scan", data[:200]},
	} {
		p := writeFile(t, dir, c.name+".jpg", c.data)
		im, err := LoadImage(p, Options{})
		if err == nil {
			_, err = im.Patches(VisionGeometry{Grid: 2, Side: 32})
		}
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Random damage in the scan: any outcome but a panic.
	for i := 0; i < 60; i++ {
		d := append([]byte(nil), data...)
		for j := 0; j < 5; j++ {
			d[600+(i*7919+j*104729)%(len(d)-602)] ^= byte(1 + i + j)
		}
		for _, s := range []int{1, 2, 8} {
			decodeJPEGScaled(d, s)
		}
	}
}

// TestHuffmanTableOversubscribed: a DHT with more codes of a length than
// there are bit patterns is refused, not written past the lookup table
// (the fuzz finding kept as FuzzDecodeImage/found-oversubscribed-huffman).
func TestHuffmanTableOversubscribed(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts [16]int
		ok     bool
	}{
		{"complete", [16]int{0, 4}, true},
		{"three of length 1", [16]int{3}, false},
		{"five of length 2", [16]int{0, 5}, false},
		{"full at length 10", [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 2}, true},
		{"one more at length 10", [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 3}, false},
	} {
		total := 0
		for _, n := range c.counts {
			total += n
		}
		var h huffTable
		if err := h.build(c.counts, make([]byte, total)); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
