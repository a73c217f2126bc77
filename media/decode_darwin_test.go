//go:build darwin && cgo

package media

// Tests of the macOS decoders, for a Mac (docs/mac.md):
//
//	go test ./media/ -run Darwin -v
//
// They make their own HEIC, m4a, aac, caf and aiff files with the tools
// every Mac has (sips, afconvert) and decode them; ORCHARD_MEDIA_HEIC and
// ORCHARD_MEDIA_M4A may name real files to decode as well.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// macTool fails the test when a tool every macOS has is missing.
func macTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s ships with macOS but is not on PATH: %v", name, err)
	}
}

func TestDarwinDefaultOptions(t *testing.T) {
	o := DefaultOptions()
	if _, ok := o.Images.(imageIO); !ok {
		t.Errorf("DefaultOptions().Images = %T, want ImageIO", o.Images)
	}
	if _, ok := o.Audio.(audioToolbox); !ok {
		t.Errorf("DefaultOptions().Audio = %T, want AudioToolbox", o.Audio)
	}
}

// quadrantAt is the colour of m at the centre of quadrant q of w×h.
func quadrantAt(m *image.RGBA, w, h, q int) color.RGBA {
	x, y := w/4, h/4
	if q&1 == 1 {
		x += w / 2
	}
	if q&2 == 2 {
		y += h / 2
	}
	return m.RGBAAt(x, y)
}

func near(c color.RGBA, want color.NRGBA, tol int) bool {
	return absDiff(c.R, want.R) <= tol && absDiff(c.G, want.G) <= tol && absDiff(c.B, want.B) <= tol
}

// TestDarwinImageIOOrientation: ImageIO reads JPEG too, so the eight EXIF
// orientations can be checked through it: each comes out upright, as
// LoadImage turns JPEGs.
func TestDarwinImageIOOrientation(t *testing.T) {
	up := uprightQuadrants(64, 48)
	for o := 1; o <= 8; o++ {
		m, err := imageIO{}.DecodeImage("o.jpg", exifJPEG(storedFor(up, o), o), DefaultMaxPixels)
		if err != nil {
			t.Fatalf("o=%d: %v", o, err)
		}
		rgba, ok := m.(*image.RGBA)
		if !ok || rgba.Rect != image.Rect(0, 0, 64, 48) {
			t.Fatalf("o=%d: %T %v, want *image.RGBA 64×48 upright", o, m, m.Bounds())
		}
		for q := range 4 {
			if c := quadrantAt(rgba, 64, 48, q); !near(c, quadrants[q], 8) {
				t.Errorf("o=%d: quadrant %d = %v, want %v", o, q, c, quadrants[q])
			}
		}
	}
}

// TestDarwinImageIOPremultiplied: pixels come back premultiplied, as
// *image.RGBA means, so transparency is black to the model.
func TestDarwinImageIOPremultiplied(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for i := range 16 {
		src.SetNRGBA(i%4, i/4, color.NRGBA{255, 128, 0, 128})
	}
	var b bytes.Buffer
	png.Encode(&b, src)
	m, err := imageIO{}.DecodeImage("half.png", b.Bytes(), DefaultMaxPixels)
	if err != nil {
		t.Fatal(err)
	}
	c := m.(*image.RGBA).RGBAAt(1, 1)
	if c.A != 128 || absDiff(c.R, 128) > 4 || absDiff(c.G, 64) > 4 || c.B > 2 {
		t.Errorf("pixel = %v, want about {128 64 0 128}", c)
	}
}

// TestDarwinImageIORefusals: the pixel budget is checked before decoding;
// bytes ImageIO cannot read are ErrUnsupportedFormat; a cut-off file is an
// error, not a crash.
func TestDarwinImageIORefusals(t *testing.T) {
	data := exifJPEG(uprightQuadrants(64, 48), 1)
	if _, err := (imageIO{}).DecodeImage("big.jpg", data, 64*48-1); err == nil || !strings.Contains(err.Error(), "64×48") {
		t.Errorf("over the budget: %v", err)
	}
	if _, err := (imageIO{}).DecodeImage("notes.txt", []byte("plain text, not a picture at all"), DefaultMaxPixels); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("text: %v", err)
	}
	if _, err := (imageIO{}).DecodeImage("empty", nil, DefaultMaxPixels); err == nil {
		t.Error("empty: no error")
	}
	for _, n := range []int{len(data) / 2, 40} {
		if m, err := (imageIO{}).DecodeImage("cut.jpg", data[:n], DefaultMaxPixels); err != nil {
			t.Logf("cut to %d bytes: %v", n, err)
		} else {
			t.Logf("cut to %d bytes: decoded %v (ImageIO fills what is missing)", n, m.Bounds())
		}
	}
}

// sipsInt reads one integer property with sips -g (0 when absent).
func sipsInt(t *testing.T, path, key string) int {
	t.Helper()
	out, err := exec.Command("sips", "-g", key, path).CombinedOutput()
	if err != nil {
		t.Fatalf("sips -g %s %s: %v\n%s", key, path, err, out)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == key {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// TestDarwinHEIC: HEIC files made with sips load through LoadImage and
// DefaultOptions, upright and with their colours.
func TestDarwinHEIC(t *testing.T) {
	macTool(t, "sips")
	dir := t.TempDir()
	up := uprightQuadrants(64, 48)
	for _, o := range []int{1, 6} {
		src := writeFile(t, dir, fmt.Sprintf("o%d.jpg", o), exifJPEG(storedFor(up, o), o))
		heic := filepath.Join(dir, fmt.Sprintf("o%d.heic", o))
		run(t, "sips", "-s", "format", "heic", src, "--out", heic)
		// sips may bake the orientation into the pixels or keep it as a
		// property; either way the picture must still stand upright.
		so, sw, sh := max(1, sipsInt(t, heic, "orientation")), sipsInt(t, heic, "pixelWidth"), sipsInt(t, heic, "pixelHeight")
		if orientSwapsAxes(so) {
			sw, sh = sh, sw
		}
		if sw != 64 || sh != 48 {
			t.Logf("o=%d: sips wrote %d×%d with orientation %d, which is not the upright picture; checking size only", o, sw, sh, so)
		}
		im, err := LoadImage(heic, DefaultOptions())
		if err != nil {
			t.Fatalf("o=%d: %v", o, err)
		}
		if im.Format != "heic" || im.Width != sw || im.Height != sh || im.Orientation != 1 {
			t.Fatalf("o=%d: %s %d×%d orientation %d, want heic %d×%d already upright", o, im.Format, im.Width, im.Height, im.Orientation, sw, sh)
		}
		if sw != 64 || sh != 48 {
			continue
		}
		rgb := mustResized(t, im, 64, 48)
		m := image.NewRGBA(image.Rect(0, 0, 64, 48))
		for i := range 64 * 48 {
			copy(m.Pix[4*i:], rgb[3*i:3*i+3])
		}
		for q := range 4 {
			if c := quadrantAt(m, 64, 48, q); !near(c, quadrants[q], 24) {
				t.Errorf("o=%d (sips orientation %d): quadrant %d = %v, want %v", o, so, q, c, quadrants[q])
			}
		}
	}
}

// TestDarwinRealHEIC decodes the file ORCHARD_MEDIA_HEIC names.
func TestDarwinRealHEIC(t *testing.T) {
	path := os.Getenv("ORCHARD_MEDIA_HEIC")
	if path == "" {
		t.Skip("set ORCHARD_MEDIA_HEIC to a HEIC photo to decode it")
	}
	start := time.Now()
	im, err := LoadImage(path, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if im.Width < 16 || im.Height < 16 || im.Width*im.Height > DefaultMaxPixels {
		t.Errorf("%d×%d is not a plausible photo", im.Width, im.Height)
	}
	thumb, err := im.Thumbnail(ThumbnailSize)
	if err != nil {
		t.Fatal(err)
	}
	rgb := mustResized(t, im, 64, 64)
	lo, hi := 255, 0
	for _, v := range rgb {
		lo, hi = min(lo, int(v)), max(hi, int(v))
	}
	if hi-lo < 16 {
		t.Errorf("the picture is flat (values %d–%d): decoded as blank?", lo, hi)
	}
	t.Logf("%s: %s, %d×%d upright, %s, decoded in %v; thumbnail %d bytes", im.Info.Name, im.Format, im.Width, im.Height,
		formatBytes(im.Info.Bytes), took.Round(time.Millisecond), len(thumb))
}

// stereoWAV is 1 s of 44.1 kHz 16-bit stereo: a 441 Hz tone at 0.5 on the
// left, silence on the right. Averaged, the tone is at 0.25 (keeping
// channel 0, as AVAudioConverter does by default, would leave 0.5).
func stereoWAV() []byte {
	const rate = 44100
	data := make([]byte, 0, 4*rate)
	for i := range rate {
		v := int16(math.Round(16384 * math.Sin(2*math.Pi*441*float64(i)/rate)))
		data = binary.LittleEndian.AppendUint16(data, uint16(v))
		data = binary.LittleEndian.AppendUint16(data, 0)
	}
	return wavFile(wavePCM, 2, rate, 16, false, nil, data)
}

// TestDarwinAudioToolbox: m4a (AAC), ADTS AAC, caf and aiff files made
// with afconvert decode at the file's rate with the channels averaged;
// the lossless ones equal the WAV they came from.
func TestDarwinAudioToolbox(t *testing.T) {
	macTool(t, "afconvert")
	dir := t.TempDir()
	wav := writeFile(t, dir, "tone.wav", stereoWAV())
	want, err := decodeWAV(stereoWAV(), DefaultMaxSeconds)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, format string
		args         []string
		lossless     bool
	}{
		{"tone.m4a", "m4a", []string{"-f", "m4af", "-d", "aac"}, false},
		{"tone.aac", "aac", []string{"-f", "adts", "-d", "aac"}, false},
		{"tone.caf", "caf", []string{"-f", "caff", "-d", "LEI16"}, true},
		{"tone.aiff", "aiff", []string{"-f", "AIFF", "-d", "BEI16"}, true},
	} {
		out := filepath.Join(dir, tc.file)
		run(t, "afconvert", append(tc.args, wav, out)...)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		pcm, err := audioToolbox{}.DecodeAudio(out, data, DefaultMaxSeconds)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if pcm.Rate != 44100 || pcm.Channels != 2 || pcm.Format != tc.format {
			t.Errorf("%s: %d Hz, %d channels, %q; want 44100 Hz, 2 channels, %q", tc.file, pcm.Rate, pcm.Channels, pcm.Format, tc.format)
		}
		if tc.lossless {
			if len(pcm.Samples) != len(want.Samples) {
				t.Fatalf("%s: %d samples, want %d", tc.file, len(pcm.Samples), len(want.Samples))
			}
			for i, v := range pcm.Samples {
				if math.Abs(float64(v-want.Samples[i])) > 1.0/32768 {
					t.Fatalf("%s: sample %d = %g, want %g", tc.file, i, v, want.Samples[i])
				}
			}
		} else {
			// AAC adds priming and padding (ADTS keeps them: up to about
			// three 1024-frame packets); the tone must be there, averaged.
			if n := len(pcm.Samples); n < 44100-4096 || n > 44100+6144 {
				t.Errorf("%s: %d samples, want about 44100", tc.file, n)
			}
			if a := toneAmplitude(pcm.Samples, 44100, 441, 10000, 20000); math.Abs(a-0.25) > 0.025 {
				t.Errorf("%s: tone amplitude %.3f, want 0.25 (channels averaged)", tc.file, a)
			}
		}
		a, err := LoadAudio(out, DefaultOptions())
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if a.Format != tc.format || math.Abs(a.Seconds()-1) > 0.15 {
			t.Errorf("%s: LoadAudio gives %q, %.3f s", tc.file, a.Format, a.Seconds())
		}
	}
	if _, err := (audioToolbox{}).DecodeAudio("junk.m4a", []byte("\x00\x00\x00\x20ftypM4A junk junk junk junk"), DefaultMaxSeconds); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("junk: %v", err)
	}
}

// TestDarwinRealM4A decodes the file ORCHARD_MEDIA_M4A names.
func TestDarwinRealM4A(t *testing.T) {
	path := os.Getenv("ORCHARD_MEDIA_M4A")
	if path == "" {
		t.Skip("set ORCHARD_MEDIA_M4A to an audio file (m4a, caf, aiff…) to decode it")
	}
	start := time.Now()
	a, err := LoadAudio(path, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if a.SourceRate < 8000 || a.SourceRate > 384000 || a.Channels < 1 || a.Seconds() <= 0 {
		t.Errorf("%d Hz, %d channels, %.2f s is not plausible", a.SourceRate, a.Channels, a.Seconds())
	}
	var peak float64
	for i, v := range a.Samples {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("sample %d is %g", i, v)
		}
		peak = max(peak, math.Abs(float64(v)))
	}
	if peak == 0 || peak > 1.5 {
		t.Errorf("peak %g: silent or not scaled to [-1, 1]", peak)
	}
	t.Logf("%s: %s, %d Hz, %d channels, %.2f s, peak %.3f, rms %.3f at 16 kHz; decoded in %v", a.Info.Name, a.Format,
		a.SourceRate, a.Channels, a.Seconds(), peak, rms(a.Samples), took.Round(time.Millisecond))
}
