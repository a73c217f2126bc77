package media

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/orchard-llm/orchard/internal/fuzzing"
	"github.com/orchard-llm/orchard/internal/testmedia"
)

// Pictures and clips come from anywhere: a file the user attaches, or
// bytes a client of orchard serve posts. The two fuzz targets hold every
// decoder (orchard's own scaled JPEG decoder included) to this: refused
// with an error or decoded, never a panic, and never memory beyond the
// limits set — here small ones, so that a reader that sizes a buffer from
// a header's number rather than from the limits is caught.

// FuzzDecodeImage: a picture's bytes, decoded, resized and thumbnailed.
func FuzzDecodeImage(f *testing.F) {
	seeds := map[string][]byte{}
	pic := image.NewNRGBA(image.Rect(0, 0, 40, 24))
	for y := range 24 {
		for x := range 40 {
			pic.Set(x, y, color.NRGBA{uint8(x * 6), uint8(y * 10), uint8(x * y), uint8(255 - x)})
		}
	}
	encode := func(name string, enc func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			f.Fatal(name, err)
		}
		seeds[name] = b.Bytes()
	}
	encode("png", func(b *bytes.Buffer) error { return png.Encode(b, pic) })
	encode("jpeg", func(b *bytes.Buffer) error { return jpeg.Encode(b, pic, &jpeg.Options{Quality: 80}) })
	encode("jpeg-gray", func(b *bytes.Buffer) error {
		g := image.NewGray(image.Rect(0, 0, 33, 17))
		return jpeg.Encode(b, g, nil)
	})
	encode("gif", func(b *bytes.Buffer) error { return gif.Encode(b, pic, nil) })
	encode("bmp", func(b *bytes.Buffer) error { return bmp.Encode(b, pic) })
	encode("tiff", func(b *bytes.Buffer) error { return tiff.Encode(b, pic, nil) })
	seeds["png-noise"] = testmedia.PNG(3, 20, 20)
	// WebP and progressive and 4:2:0 JPEG seeds come from Debian's
	// encoders when the seed files are written.
	if os.Getenv(fuzzing.SeedsEnv) == "write" {
		dir := f.TempDir()
		for name, data := range map[string][]byte{"in.png": seeds["png"], "in.bmp": seeds["bmp"]} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				f.Fatal(err)
			}
		}
		for name, args := range map[string][]string{
			"webp":             {"cwebp", "-quiet", "-q", "70", filepath.Join(dir, "in.png"), "-o", filepath.Join(dir, "webp")},
			"jpeg-progressive": {"cjpeg", "-progressive", "-outfile", filepath.Join(dir, "jpeg-progressive"), filepath.Join(dir, "in.bmp")},
			"jpeg-restart":     {"cjpeg", "-sample", "2x2", "-restart", "1", "-outfile", filepath.Join(dir, "jpeg-restart"), filepath.Join(dir, "in.bmp")},
		} {
			seeds[name] = encodeWith(f, dir, name, args)
		}
	}
	fuzzing.WriteSeeds(f, "FuzzDecodeImage", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	o := Options{MaxBytes: 1 << 20, MaxPixels: 1 << 20, MaxSide: 4096}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		// 1 Mpx of RGBA, its copies while resizing and decoding, and the
		// decoders' own tables.
		fuzzing.Alloc(t, 64<<20+64*uint64(len(data)), func() {
			im, err := DecodeImage(BytesSource("fuzz", data), o)
			if err != nil {
				return
			}
			if _, err := im.Resized(12, 12); err != nil {
				return
			}
			im.Thumbnail(16)
		})
	})
}

// FuzzDecodeAudio: a clip's bytes, decoded, mixed to mono and resampled.
func FuzzDecodeAudio(f *testing.F) {
	seeds := map[string][]byte{
		"wav":           testmedia.WAV(0.1, 440),
		"wav-float":     wavFile(waveFloat, 1, 8000, 32, false, nil, make([]byte, 4*400)),
		"wav-24-stereo": wavFile(wavePCM, 2, 44100, 24, true, nil, make([]byte, 6*300)),
		"wav-8":         wavFile(wavePCM, 1, 11025, 8, false, [][2]string{{"LIST", "INFOISFT"}}, make([]byte, 500)),
	}
	// FLAC and MP3 seeds come from Debian's encoders when the seed files
	// are written (ORCHARD_FUZZ_SEEDS=write); every run replays the files.
	if os.Getenv(fuzzing.SeedsEnv) == "write" {
		dir := f.TempDir()
		wav := filepath.Join(dir, "s.wav")
		if err := os.WriteFile(wav, testmedia.WAV(0.3, 300), 0o600); err != nil {
			f.Fatal(err)
		}
		for name, args := range map[string][]string{
			"flac": {"flac", "--silent", "-o", filepath.Join(dir, "flac"), wav},
			"mp3":  {"lame", "--quiet", "-b", "32", wav, filepath.Join(dir, "mp3")},
		} {
			seeds[name] = encodeWith(f, dir, name, args)
		}
	}
	fuzzing.WriteSeeds(f, "FuzzDecodeAudio", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	o := Options{MaxBytes: 1 << 20, MaxSeconds: 2}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		// 2 s at the highest rate a header may claim, as floats, the
		// decoders' per-frame buffers and the resampler's.
		fuzzing.Alloc(t, 96<<20+64*uint64(len(data)), func() {
			if a, err := DecodeAudio(BytesSource("fuzz", data), o); err == nil && a.Seconds() > 2 {
				t.Fatalf("decoded %g s past the 2 s limit", a.Seconds())
			}
		})
	})
}

// encodeWith runs an encoder that writes dir/name and returns the file.
func encodeWith(f *testing.F, dir, name string, args []string) []byte {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		f.Fatalf("%v: %v %s", args, err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		f.Fatal(err)
	}
	return data
}
