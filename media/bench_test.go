package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hajimehoshi/go-mp3"
	xdraw "golang.org/x/image/draw"
)

// photoJPEG writes a 12-megapixel (4000×3000) 4:2:0 JPEG at quality 90 with
// photo-like content: smooth gradients, texture and noise, so the entropy
// decoder has real work.
func photoJPEG(b *testing.B) string {
	b.Helper()
	const w, h = 4000, 3000
	m := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	r := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			v := 128 + 60*math.Sin(float64(x)/180)*math.Cos(float64(y)/130) + 20*math.Sin(float64(x*y)/5000) + float64(r.IntN(24))
			m.Y[m.YOffset(x, y)] = byte(max(0, min(255, v)))
		}
	}
	for y := range h / 2 {
		for x := range w / 2 {
			m.Cb[y*m.CStride+x] = byte(128 + 40*math.Sin(float64(x)/90))
			m.Cr[y*m.CStride+x] = byte(128 + 40*math.Cos(float64(y)/70))
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	b.Logf("12 MP JPEG: %.1f MB", float64(buf.Len())/1e6)
	p := filepath.Join(b.TempDir(), "photo.jpg")
	os.WriteFile(p, buf.Bytes(), 0o600)
	return p
}

// BenchmarkImage12MP is the whole preprocessing of a 12-megapixel JPEG
// (read, hash, decode, orient, stretch to 768, patchify), against a
// baseline of the plain library route: image/jpeg, then x/image/draw's
// Catmull-Rom scaler into an RGBA canvas, then the same patchify.
func BenchmarkImage12MP(b *testing.B) {
	p := photoJPEG(b)
	g := VisionGeometry{Grid: 48, Side: 768}
	b.Run("orchard", func(b *testing.B) {
		loopCPU(b, func() {
			im, err := LoadImage(p, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := im.Patches(g); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("decode-only", func(b *testing.B) {
		data, _ := os.ReadFile(p)
		loopCPU(b, func() { jpeg.Decode(bytes.NewReader(data)) })
	})
	b.Run("resize+patchify", func(b *testing.B) {
		im, _ := LoadImage(p, Options{})
		im.Patches(g) // decodes at 1/2 once
		loopCPU(b, func() {
			if _, err := im.Patches(g); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("baseline-xdraw", func(b *testing.B) {
		loopCPU(b, func() {
			data, _ := os.ReadFile(p)
			src, _ := jpeg.Decode(bytes.NewReader(data))
			dst := image.NewRGBA(image.Rect(0, 0, 768, 768))
			xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), xdraw.Over, nil)
			rgb := make([]byte, 3*768*768)
			for i := range 768 * 768 {
				copy(rgb[3*i:3*i+3], dst.Pix[4*i:4*i+3])
			}
			Patchify(rgb, g)
		})
	})
}

// BenchmarkAudio30s is a decoded 30 s clip to the encoder input (resample
// to 16 kHz, log-mel) from 48 kHz (an integer ratio) and 44.1 kHz (160
// phases), against the log-mel alone of a clip already at 16 kHz.
func BenchmarkAudio30s(b *testing.B) {
	clip := make([]float32, 30*48000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range clip {
		clip[i] = float32(0.3*math.Sin(float64(i)/7) + 0.05*(r.Float64()*2-1))
	}
	m := NewMelExtractor()
	for _, rate := range []int{48000, 44100} {
		b.Run(fmt.Sprintf("%dHz", rate), func(b *testing.B) {
			x := clip[:30*rate]
			loopCPU(b, func() {
				a := &Audio{Samples: newResampler(rate, SampleRate).run(x)}
				if _, err := a.Mel(m); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	b.Run("16k-mel-only", func(b *testing.B) {
		x := clip[:MaxSamples]
		loopCPU(b, func() {
			if _, err := m.Compute(x); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkJPEGDecode12MP compares decoding the 12 MP JPEG at half size
// (what a 768 px side needs) and at full size with image/jpeg.
func BenchmarkJPEGDecode12MP(b *testing.B) {
	data, _ := os.ReadFile(photoJPEG(b))
	for _, s := range []int{1, 2} {
		b.Run(fmt.Sprintf("scaled-1/%d", s), func(b *testing.B) {
			loopCPU(b, func() {
				if _, err := decodeJPEGScaled(data, s); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	b.Run("image-jpeg", func(b *testing.B) {
		loopCPU(b, func() { jpeg.Decode(bytes.NewReader(data)) })
	})
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loopCPU runs body in the benchmark loop and also reports the CPU time
// per op, which, unlike wall time, does not grow when other processes
// share the machine's two cores.
func loopCPU(b *testing.B, body func()) {
	start := cpuTime()
	n := 0
	for b.Loop() {
		body()
		n++
	}
	b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(n), "cpu-ms/op")
}

// BenchmarkDecodeMP3 decodes a 9-minute 22 kHz MP3 (2.2 MB at 32 kbps)
// the way orchard does — a buffer at a time, averaged to mono as it goes,
// stopping at the length limit — against the plain route as a baseline:
// io.ReadAll of the decoder's interleaved 16-bit stereo, then converting.
// "limit-30s" is the same file refused at a 30 s limit.
func BenchmarkDecodeMP3(b *testing.B) {
	if _, err := exec.LookPath("lame"); err != nil {
		b.Skip("lame is not installed (apt-get install lame)")
	}
	dir := b.TempDir()
	const rate, secs = 22050, 540
	pcm := make([]byte, 0, 2*rate*secs)
	for i := range rate * secs {
		v := int16(6000*math.Sin(2*math.Pi*330*float64(i)/rate) + 2000*math.Sin(float64(i)/17))
		pcm = append(pcm, byte(v), byte(uint16(v)>>8))
	}
	wav := filepath.Join(dir, "long.wav")
	os.WriteFile(wav, wavFile(wavePCM, 1, rate, 16, false, nil, pcm), 0o600)
	mp3File := filepath.Join(dir, "long.mp3")
	if out, err := exec.Command("lame", "--quiet", "-b", "32", wav, mp3File).CombinedOutput(); err != nil {
		b.Fatalf("lame: %v %s", err, out)
	}
	data, err := os.ReadFile(mp3File)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d s MP3: %.1f MB", secs, float64(len(data))/1e6)
	b.Run("orchard", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeMP3(data, DefaultMaxSeconds); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("limit-30s", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeMP3(data, 30); err == nil {
				b.Fatal("a 540 s clip passed a 30 s limit")
			}
		}
	})
	b.Run("baseline-readall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := mp3.NewDecoder(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			raw, err := io.ReadAll(d)
			if err != nil {
				b.Fatal(err)
			}
			out := make([]float32, len(raw)/4)
			for i := range out {
				l := int16(binary.LittleEndian.Uint16(raw[4*i:]))
				r := int16(binary.LittleEndian.Uint16(raw[4*i+2:]))
				out[i] = (float32(l) + float32(r)) / (2 << 15)
			}
		}
	})
}
