package media

import (
	"bytes"
	"errors"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// needTool skips a test when a Debian tool is missing. .ci/run installs
// them (flac, lame, espeak-ng), so a skip only happens where installing is
// impossible.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed (apt-get install %s; .ci/run installs it)", name, name)
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// speech makes a real spoken sentence with espeak-ng (22050 Hz mono WAV).
func speech(t *testing.T, dir string) string {
	needTool(t, "espeak-ng")
	p := filepath.Join(dir, "speech.wav")
	run(t, "espeak-ng", "-w", p, "The quick brown fox jumps over the lazy dog.")
	return p
}

// TestLoadAudioFLAC: FLAC is lossless, so the decoded clip equals the WAV
// it was made from, sample for sample.
func TestLoadAudioFLAC(t *testing.T) {
	needTool(t, "flac")
	dir := t.TempDir()
	w := speech(t, dir)
	f := filepath.Join(dir, "speech.flac")
	run(t, "flac", "--silent", "-o", f, w)
	aw, err := LoadAudio(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	af, err := LoadAudio(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if af.Format != "flac" || af.SourceRate != aw.SourceRate || len(af.Samples) != len(aw.Samples) {
		t.Fatalf("flac %s %d Hz %d samples, wav %d Hz %d samples", af.Format, af.SourceRate, len(af.Samples), aw.SourceRate, len(aw.Samples))
	}
	for i := range af.Samples {
		if af.Samples[i] != aw.Samples[i] {
			t.Fatalf("sample %d: flac %g, wav %g", i, af.Samples[i], aw.Samples[i])
		}
	}
	if s := aw.Seconds(); s < 1 || s > 10 {
		t.Errorf("speech is %g s", s)
	}
}

// TestLoadAudioMP3: a lossy MP3 of the same speech keeps its length (within
// the codec's padding) and its loudness (within 1 dB), stereo or mono.
func TestLoadAudioMP3(t *testing.T) {
	needTool(t, "lame")
	dir := t.TempDir()
	w := speech(t, dir)
	aw, err := LoadAudio(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A stereo copy (by hand) for the joint-stereo encoding.
	raw, _ := os.ReadFile(w)
	mono, err := decodeWAV(raw, DefaultMaxSeconds)
	if err != nil {
		t.Fatal(err)
	}
	var frames []byte
	for _, v := range mono.Samples {
		s := uint16(int16(v * 32767))
		frames = append(frames, byte(s), byte(s>>8), byte(s), byte(s>>8))
	}
	stereo := filepath.Join(dir, "stereo.wav")
	os.WriteFile(stereo, wavFile(wavePCM, 2, mono.Rate, 16, false, nil, frames), 0o600)
	for _, mode := range []string{"m", "j"} {
		m := filepath.Join(dir, "speech-"+mode+".mp3")
		src := map[string]string{"m": w, "j": stereo}[mode]
		run(t, "lame", "--quiet", "-m", mode, "-b", "128", src, m)
		am, err := LoadAudio(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		wantCh := map[string]int{"m": 1, "j": 2}[mode]
		if am.Format != "mp3" || am.Channels != wantCh || am.SourceRate != 22050 {
			t.Errorf("mode %s: %s, %d channels, %d Hz", mode, am.Format, am.Channels, am.SourceRate)
		}
		if d := am.Seconds() - aw.Seconds(); d < 0 || d > 0.2 {
			t.Errorf("mode %s: mp3 %g s, wav %g s", mode, am.Seconds(), aw.Seconds())
		}
		if db := 20 * math.Log10(rms(am.Samples)/rms(aw.Samples)); math.Abs(db) > 1 {
			t.Errorf("mode %s: loudness differs by %.2f dB", mode, db)
		}
	}
}

// TestSpeechMel: real speech gives a log-mel above the silence floor in
// its voiced frames and the published token count.
func TestSpeechMel(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadAudio(speech(t, dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := a.Mel(NewMelExtractor())
	if err != nil {
		t.Fatal(err)
	}
	if in.Tokens != SoftTokens(len(a.Samples)) || in.Tokens < 25 {
		t.Errorf("%d tokens for %g s", in.Tokens, a.Seconds())
	}
	loud := 0
	for f := range in.Valid {
		for j := range MelBins {
			if v := in.Mel[f*MelBins+j]; v < 0x8000 && v != 0 { // positive: x+1e-3 > 1
				loud++
				break
			}
		}
	}
	if loud < in.Valid/4 {
		t.Errorf("only %d of %d frames have energy", loud, in.Valid)
	}
}

// TestLoadImageWebP: lossy and lossless WebP (made with Debian's cwebp,
// which Go cannot encode) decode upright with the right colours.
func TestLoadImageWebP(t *testing.T) {
	needTool(t, "cwebp")
	dir := t.TempDir()
	var b bytes.Buffer
	png.Encode(&b, uprightQuadrants(64, 48))
	src := writeFile(t, dir, "q.png", b.Bytes())
	for _, mode := range []string{"-lossless", "-q"} {
		args := []string{"-quiet", mode}
		if mode == "-q" {
			args = append(args, "95")
		}
		out := filepath.Join(dir, "q.webp")
		run(t, "cwebp", append(args, src, "-o", out)...)
		im, err := LoadImage(out, Options{})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if im.Format != "webp" || im.Width != 64 || im.Height != 48 {
			t.Fatalf("%s: %s %d×%d", mode, im.Format, im.Width, im.Height)
		}
		got := mustResized(t, im, 64, 48)
		for q, pt := range [][2]int{{16, 12}, {48, 12}, {16, 36}, {48, 36}} {
			p := got[3*(pt[1]*64+pt[0]):]
			if c := quadrants[q]; absDiff(p[0], c.R) > 6 || absDiff(p[1], c.G) > 6 || absDiff(p[2], c.B) > 6 {
				t.Errorf("%s: quadrant %d = %v, want %v", mode, q, p[:3], c)
			}
		}
	}

	// Lossy with alpha (NYCbCrA): the transparent left half is black.
	m := uprightQuadrants(64, 48)
	for y := range 48 {
		for x := range 32 {
			m.Pix[m.PixOffset(x, y)+3] = 0
		}
	}
	b.Reset()
	png.Encode(&b, m)
	src = writeFile(t, dir, "alpha.png", b.Bytes())
	out := filepath.Join(dir, "alpha.webp")
	run(t, "cwebp", "-quiet", "-q", "95", "-exact", src, "-o", out)
	im, err := LoadImage(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := mustResized(t, im, 64, 48)
	for _, c := range []struct {
		x, y int
		want color.NRGBA
	}{{10, 12, color.NRGBA{}}, {10, 36, color.NRGBA{}}, {48, 12, quadrants[1]}, {48, 36, quadrants[3]}} {
		p := got[3*(c.y*64+c.x):]
		if absDiff(p[0], c.want.R) > 6 || absDiff(p[1], c.want.G) > 6 || absDiff(p[2], c.want.B) > 6 {
			t.Errorf("alpha: (%d,%d) = %v, want %v", c.x, c.y, p[:3], c.want)
		}
	}
}

// TestLongClipStopsAtTheLimit: a small compressed file can hold hours of
// audio, so decoding stops at the length limit. Each format refuses a
// clip over it with a *TooLongError, allocating for the limit rather than
// the clip: a quarter of what decoding the whole clip takes, at most.
func TestLongClipStopsAtTheLimit(t *testing.T) {
	needTool(t, "flac")
	needTool(t, "lame")
	dir := t.TempDir()
	const rate, secs = 22050, 60
	pcm := make([]byte, 0, 2*rate*secs)
	for i := range rate * secs {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
		pcm = append(pcm, byte(v), byte(uint16(v)>>8))
	}
	wav := filepath.Join(dir, "long.wav")
	if err := os.WriteFile(wav, wavFile(wavePCM, 1, rate, 16, false, nil, pcm), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, "flac", "--silent", "-o", filepath.Join(dir, "long.flac"), wav)
	run(t, "lame", "--quiet", "-b", "32", wav, filepath.Join(dir, "long.mp3"))
	flac, err := os.ReadFile(filepath.Join(dir, "long.flac"))
	if err != nil {
		t.Fatal(err)
	}
	// A stream that does not declare its length (STREAMINFO's 36-bit total
	// is 0) is stopped while decoding, not from its header.
	unsized := bytes.Clone(flac)
	unsized[21] &= 0xf0
	clear(unsized[22:26])
	if err := os.WriteFile(filepath.Join(dir, "unsized.flac"), unsized, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file   string
		header bool // refused from the header, knowing the length
	}{{"long.wav", true}, {"long.flac", true}, {"unsized.flac", false}, {"long.mp3", false}} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			var whole *PCM
			full := allocated(func() { whole, err = decodeAudio(c.file, data, Options{}) })
			if err != nil {
				t.Fatal(err)
			}
			if s := float64(len(whole.Samples)) / float64(whole.Rate); s < secs-0.1 || s > secs+0.2 {
				t.Fatalf("decoded %g s of %d", s, secs)
			}
			cut := allocated(func() { _, err = decodeAudio(c.file, data, Options{MaxSeconds: 2}) })
			var tl *TooLongError
			if !errors.As(err, &tl) || tl.Limit != 2 || (tl.Seconds > 0) != c.header {
				t.Fatalf("over the limit: %v (%+v)", err, tl)
			}
			t.Logf("refused with %d KiB allocated; the whole clip takes %d KiB", cut>>10, full>>10)
			if cut*4 > full {
				t.Errorf("refusing took %d bytes, decoding all of it %d", cut, full)
			}
		})
	}
	// The message a user reads.
	_, err = LoadAudio(filepath.Join(dir, "long.mp3"), Options{MaxSeconds: 2})
	if want := "long.mp3 is longer than 2.0 s, the most audio orchard reads"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v lacks %q", err, want)
	}
	_, err = LoadAudio(wav, Options{MaxSeconds: 2})
	if want := "long.wav is 1 min 00 s long; orchard reads at most 2.0 s of audio"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v lacks %q", err, want)
	}
}

// allocated is the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
