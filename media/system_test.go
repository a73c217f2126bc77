package media

import (
	"errors"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeImage is a systemImage over a stored picture.
type fakeImage struct {
	stored         *image.NRGBA
	w, h, orient   int   // the header
	cw, ch         int   // what Create reports (0: the stored size)
	createErr      error // returned by Create
	drawErr        error // returned by Draw
	created, drawn bool
}

func (f *fakeImage) Header() (int, int, int) { return f.w, f.h, f.orient }

func (f *fakeImage) Create() (int, int, error) {
	f.created = true
	if f.createErr != nil {
		return 0, 0, f.createErr
	}
	if f.cw != 0 {
		return f.cw, f.ch, nil
	}
	return f.stored.Rect.Dx(), f.stored.Rect.Dy(), nil
}

// Draw premultiplies over the zeroed buffer, as a CoreGraphics RGBA
// context does.
func (f *fakeImage) Draw(pix []byte, w, h int) error {
	f.drawn = true
	if f.drawErr != nil {
		return f.drawErr
	}
	if len(pix) != 4*w*h {
		return errors.New("wrong buffer")
	}
	for y := range h {
		for x := range w {
			c := color.RGBAModel.Convert(f.stored.NRGBAAt(x, y)).(color.RGBA)
			copy(pix[4*(y*w+x):], []byte{c.R, c.G, c.B, c.A})
		}
	}
	return nil
}

// TestDecodeSystemImage: a system-decoded picture is turned upright by its
// orientation (pixel for pixel, all eight), premultiplied, and refused over
// the budget before anything is decoded.
func TestDecodeSystemImage(t *testing.T) {
	up := uprightQuadrants(6, 4)
	for o := 1; o <= 8; o++ {
		st := storedFor(up, o)
		f := &fakeImage{stored: st, w: st.Rect.Dx(), h: st.Rect.Dy(), orient: o}
		m, err := decodeSystemImage(f, 24)
		if err != nil {
			t.Fatalf("o=%d: %v", o, err)
		}
		if m.Rect != image.Rect(0, 0, 6, 4) {
			t.Fatalf("o=%d: %v, want 6×4 upright", o, m.Rect)
		}
		for y := range 4 {
			for x := range 6 {
				if got, want := m.RGBAAt(x, y), up.NRGBAAt(x, y); got != (color.RGBA{want.R, want.G, want.B, 255}) {
					t.Fatalf("o=%d: (%d,%d) = %v, want %v", o, x, y, got, want)
				}
			}
		}
	}

	half := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	half.SetNRGBA(0, 0, color.NRGBA{255, 128, 0, 128})
	m, err := decodeSystemImage(&fakeImage{stored: half, w: 2, h: 2, orient: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.RGBAAt(0, 0); c != (color.RGBA{128, 64, 0, 128}) {
		t.Errorf("half-transparent pixel = %v, want premultiplied {128 64 0 128}", c)
	}
	if rgb := resizeRGB(m, 2, 2, yccFor("heic")); rgb[0] != 128 || rgb[1] != 64 || rgb[2] != 0 || rgb[3] != 0 {
		t.Errorf("over black: %v, want 128 64 0 then transparent black", rgb[:6])
	}

	// A clip past the limit stops there, with only what was read so far.
	long := &fakeAudioStream{rate: 8000, channels: 2, frames: 0, frameLen: make([]float32, 2*8000*20), pieces: []int{1000}}
	if _, err := decodeSystemAudio(long, 1); !errors.As(err, new(*TooLongError)) || long.p > 9 {
		t.Errorf("20 s clip with a 1 s limit: %v after %d reads", err, long.p)
	}

	boom := errors.New("boom")
	for _, tc := range []struct {
		name           string
		f              *fakeImage
		budget         int
		want           string
		created, drawn bool
		wantErrIs      error
	}{
		{name: "header over budget", f: &fakeImage{stored: up, w: 6000, h: 4000, orient: 1}, budget: 1_000_000,
			want: "6000×4000 (24.0 megapixels) is over the 1.0 megapixels"},
		{name: "header empty", f: &fakeImage{stored: up, w: 0, h: 4, orient: 1}, budget: 100, want: "0×4 pixels"},
		{name: "image bigger than its header", f: &fakeImage{stored: up, w: 6, h: 4, cw: 600, ch: 400, orient: 1}, budget: 100,
			want: "the header says 6×4 but the image is 600×400", created: true},
		{name: "create fails", f: &fakeImage{stored: up, w: 6, h: 4, createErr: boom}, budget: 100, created: true, wantErrIs: boom},
		{name: "draw fails", f: &fakeImage{stored: up, w: 6, h: 4, drawErr: boom}, budget: 100, created: true, drawn: true, wantErrIs: boom},
	} {
		_, err := decodeSystemImage(tc.f, tc.budget)
		switch {
		case err == nil:
			t.Errorf("%s: no error", tc.name)
		case tc.wantErrIs != nil && !errors.Is(err, tc.wantErrIs):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.wantErrIs)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %q, want it to contain %q", tc.name, err, tc.want)
		}
		if tc.f.created != tc.created || tc.f.drawn != tc.drawn {
			t.Errorf("%s: created %v drawn %v, want %v %v", tc.name, tc.f.created, tc.f.drawn, tc.created, tc.drawn)
		}
	}
}

// recordingImages is an ImageDecoder over decodeSystemImage that records
// what LoadImage hands it.
type recordingImages struct {
	calls     int
	maxPixels int
	orient    int
}

func (r *recordingImages) DecodeImage(path string, data []byte, maxPixels int) (image.Image, error) {
	r.calls++
	r.maxPixels = maxPixels
	if sniffISOBMFF(data) == "" {
		return nil, ErrUnsupportedFormat
	}
	st := storedFor(uprightQuadrants(6, 4), r.orient)
	return decodeSystemImage(&fakeImage{stored: st, w: st.Rect.Dx(), h: st.Rect.Dy(), orient: r.orient}, maxPixels)
}

// TestSystemImageRouting: HEIC and AVIF (and anything else unknown) go to
// the system decoder with the pixel budget; the formats Go reads never do;
// the picture it returns is already upright.
func TestSystemImageRouting(t *testing.T) {
	dir := t.TempDir()
	pngData := pngFile(2, 2, 8, 2, nil, nil, [][]byte{make([]byte, 6), make([]byte, 6)})
	for _, tc := range []struct {
		name, file string
		data       []byte
		opts       Options
		calls      int
		format     string
		unsup      bool
	}{
		{"heic", "IMG_1.HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), Options{}, 1, "heic", false},
		{"heif mif1", "x.heif", []byte("\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1heic"), Options{}, 1, "heic", false},
		{"avif", "x.avif", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"), Options{MaxPixels: 50}, 1, "avif", false},
		{"png stays in Go", "x.png", pngData, Options{}, 0, "png", false},
		{"jpeg stays in Go", "x.jpg", exifJPEG(uprightQuadrants(8, 8), 1), Options{}, 0, "jpeg", false},
		{"unknown bytes", "x.bin", []byte("not a picture at all"), Options{}, 1, "", true},
	} {
		r := &recordingImages{orient: 6}
		tc.opts.Images = r
		im, err := LoadImage(writeFile(t, dir, tc.file, tc.data), tc.opts)
		if r.calls != tc.calls {
			t.Errorf("%s: system decoder called %d times, want %d", tc.name, r.calls, tc.calls)
		}
		if tc.unsup {
			if !errors.Is(err, ErrUnsupportedFormat) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if im.Format != tc.format {
			t.Errorf("%s: format %q, want %q", tc.name, im.Format, tc.format)
		}
		if tc.calls == 1 {
			if r.maxPixels != tc.opts.maxPixels() {
				t.Errorf("%s: budget %d, want %d", tc.name, r.maxPixels, tc.opts.maxPixels())
			}
			if im.Width != 6 || im.Height != 4 || im.Orientation != 1 {
				t.Errorf("%s: %d×%d orientation %d, want 6×4 upright from the decoder", tc.name, im.Width, im.Height, im.Orientation)
			}
		}
	}
}

// fakeAudioStream is a systemAudio over interleaved frames, handed out in
// uneven pieces.
type fakeAudioStream struct {
	rate     float64
	channels int
	frames   int64
	frameLen []float32 // interleaved
	pieces   []int     // frames per Read, cycled
	readErr  error
	overread bool // report more frames than fit
	i, p     int
}

func (f *fakeAudioStream) Format() (float64, int, int64, string) {
	return f.rate, f.channels, f.frames, "fake"
}

func (f *fakeAudioStream) Read(buf []float32) (int, error) {
	if f.readErr != nil {
		return 0, f.readErr
	}
	if f.overread {
		return len(buf)/f.channels + 1, nil
	}
	left := (len(f.frameLen) - f.i) / f.channels
	n := min(left, len(buf)/f.channels, f.pieces[f.p%len(f.pieces)])
	f.p++
	copy(buf, f.frameLen[f.i:f.i+n*f.channels])
	f.i += n * f.channels
	return n, nil
}

// TestDecodeSystemAudio: channels are averaged frame by frame whatever the
// pieces the decoder reads in; the rate is rounded; impossible formats and
// read failures are errors.
func TestDecodeSystemAudio(t *testing.T) {
	interleave := func(ch int, n int, at func(i, c int) float32) []float32 {
		out := make([]float32, 0, ch*n)
		for i := range n {
			for c := range ch {
				out = append(out, at(i, c))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		rate     float64
		ch, n    int
		pieces   []int
		at       func(i, c int) float32
		want     func(i int) float32
		wantRate int
	}{
		{"mono", 48000, 1, 1000, []int{7, 300}, func(i, c int) float32 { return float32(i) / 1000 },
			func(i int) float32 { return float32(i) / 1000 }, 48000},
		{"stereo, right silent", 44100, 2, 70000, []int{8192, 1, 4096}, func(i, c int) float32 {
			if c == 0 {
				return 0.5
			}
			return 0
		}, func(int) float32 { return 0.25 }, 44100},
		{"5.1", 22050.4, 6, 5000, []int{999}, func(i, c int) float32 { return float32(c) }, func(int) float32 { return 2.5 }, 22050},
		{"opposite channels cancel", 8000, 2, 100, []int{3}, func(i, c int) float32 { return float32(1 - 2*c) },
			func(int) float32 { return 0 }, 8000},
	} {
		f := &fakeAudioStream{rate: tc.rate, channels: tc.ch, frames: int64(tc.n), frameLen: interleave(tc.ch, tc.n, tc.at), pieces: tc.pieces}
		pcm, err := decodeSystemAudio(f, DefaultMaxSeconds)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if pcm.Rate != tc.wantRate || pcm.Channels != tc.ch || pcm.Format != "fake" || len(pcm.Samples) != tc.n {
			t.Fatalf("%s: %d Hz, %d channels, %q, %d samples", tc.name, pcm.Rate, pcm.Channels, pcm.Format, len(pcm.Samples))
		}
		for i, v := range pcm.Samples {
			if math.Abs(float64(v-tc.want(i))) > 1e-6 {
				t.Fatalf("%s: sample %d = %g, want %g", tc.name, i, v, tc.want(i))
			}
		}
	}

	// A header claiming a huge length reserves no more than the longest
	// audio read by default.
	f := &fakeAudioStream{rate: 16000, channels: 1, frames: 1 << 40, frameLen: make([]float32, 10), pieces: []int{10}}
	pcm, err := decodeSystemAudio(f, DefaultMaxSeconds)
	if err != nil {
		t.Fatal(err)
	}
	if c := cap(pcm.Samples); c > 16000*(DefaultMaxSeconds+1) {
		t.Errorf("reserved %d samples for a lying header", c)
	}

	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		f    *fakeAudioStream
		want string
	}{
		{"no channels", &fakeAudioStream{rate: 44100, channels: 0}, "0 channels"},
		{"absurd channels", &fakeAudioStream{rate: 44100, channels: 100000}, "100000 channels"},
		{"no rate", &fakeAudioStream{rate: 0.2, channels: 2}, "sample rate of 0.2 Hz"},
		{"read fails", &fakeAudioStream{rate: 44100, channels: 2, readErr: boom}, "boom"},
		{"overread", &fakeAudioStream{rate: 44100, channels: 2, overread: true}, "frames for a"},
	} {
		if _, err := decodeSystemAudio(tc.f, DefaultMaxSeconds); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestAudioFormatName(t *testing.T) {
	cc := func(s string) uint32 { return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3]) }
	for _, tc := range []struct {
		file, data uint32
		want       string
	}{
		{cc("m4af"), cc("aac "), "m4a"},
		{cc("caff"), cc("lpcm"), "caf"},
		{cc("AIFF"), cc("lpcm"), "aiff"},
		{cc("AIFC"), cc("ima4"), "aifc"},
		{cc("adts"), cc("aac "), "aac"},
		{cc("MPG3"), cc(".mp3"), "mp3"},
		{cc("WAVE"), cc("lpcm"), "wav"},
		{0, cc("alac"), "alac"},
		{cc("zzzz"), cc("aac "), "aac"},
		{0, 0, "system"},
		{0, 0x01020304, "system"},
	} {
		if got := audioFormatName(tc.file, tc.data); got != tc.want {
			t.Errorf("audioFormatName(%q, %q) = %q, want %q", fourCC(tc.file), fourCC(tc.data), got, tc.want)
		}
	}
}

func TestAudioStatusError(t *testing.T) {
	for _, tc := range []struct {
		status int32
		unsup  bool
		want   string
	}{
		{0x7479703f, true, "ExtAudioFileOpenURL: OSStatus 'typ?'"},
		{0x666d743f, true, "'fmt?'"},
		{0x6474613f, true, "'dta?'"},
		{-108, false, "ExtAudioFileOpenURL failed: OSStatus -108"},
		{0x21646174, false, "OSStatus '!dat'"},
	} {
		err := audioStatusError("ExtAudioFileOpenURL", tc.status)
		if errors.Is(err, ErrUnsupportedFormat) != tc.unsup || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("status %d: %v (unsupported %v), want %q", tc.status, err, errors.Is(err, ErrUnsupportedFormat), tc.want)
		}
	}
	for st, want := range map[int]string{-5: "ends early", -4: "invalid", -3: "does not know", -1: "incomplete", 7: "status 7"} {
		if got := imageStatusText(st); !strings.Contains(got, want) {
			t.Errorf("imageStatusText(%d) = %q", st, got)
		}
	}
}

// TestWriteTempAudio: the copy handed to the system decoder is private,
// holds the bytes, and keeps only a plain extension of the user's name.
func TestWriteTempAudio(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, tc := range []struct{ path, ext string }{
		{"/music/Voice Memo.M4A", ".m4a"},
		{"clip.caf", ".caf"},
		{"../../etc/x.aiff", ".aiff"},
		{"archive.tar.gz", ".gz"},
		{"noext", ""},
		{"odd.m4a;rm", ""},
		{"long.abcdefghij", ""},
	} {
		data := []byte("bytes of " + tc.path)
		name, err := writeTempAudio(tc.path, data)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(name)
		if filepath.Dir(name) != os.Getenv("TMPDIR") || !strings.HasPrefix(base, "orchard-audio-") ||
			filepath.Ext(base) != tc.ext || strings.Count(base, ".") != strings.Count(tc.ext, ".") {
			t.Errorf("%s: temporary copy %s, want orchard-audio-*%s in TMPDIR", tc.path, name, tc.ext)
		}
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", tc.path, st.Mode().Perm())
		}
		if got, _ := os.ReadFile(name); string(got) != string(data) {
			t.Errorf("%s: copy holds %q", tc.path, got)
		}
		os.Remove(name)
	}
}
