package media

import (
	"errors"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSplit: segments cover the clip exactly, none is over 30 s, and a cut
// lands in the quiet gap near the equal split when there is one.
func TestSplit(t *testing.T) {
	for _, n := range []int{MinSamples, 16000, MaxSamples, MaxSamples + 1, 2 * MaxSamples, 2*MaxSamples + 1, 75 * SampleRate, 5*MaxSamples - 7} {
		a := &Audio{Samples: testClip(n, 3)}
		segs := a.Split()
		want := (n + MaxSamples - 1) / MaxSamples
		if len(segs) != want {
			t.Errorf("n=%d: %d segments, want %d", n, len(segs), want)
		}
		next := 0
		for i, s := range segs {
			if s.Start != next || s.End-s.Start > MaxSamples || s.End <= s.Start || len(s.Samples) != s.End-s.Start {
				t.Fatalf("n=%d segment %d: [%d,%d) after %d", n, i, s.Start, s.End, next)
			}
			if &s.Samples[0] != &a.Samples[s.Start] {
				t.Fatalf("n=%d segment %d does not alias the clip", n, i)
			}
			next = s.End
		}
		if next != n {
			t.Errorf("n=%d: segments end at %d", n, next)
		}
		if err := a.CheckLength(); (err != nil) != (n > MaxSamples) {
			t.Errorf("n=%d: CheckLength = %v", n, err)
		}
	}

	// 40 s of sound with 100 ms of silence at 20.4 s: the cut goes there.
	a := &Audio{Samples: testClip(40*SampleRate, 4)}
	gap := 20*SampleRate + 6400
	for i := gap - 800; i < gap+800; i++ {
		a.Samples[i] = 0
	}
	segs := a.Split()
	if c := segs[1].Start; c < gap-640 || c > gap+640 {
		t.Errorf("cut at %d, silence at %d", c, gap)
	}
	if err := a.CheckLength(); err == nil || !strings.Contains(err.Error(), "2 parts") {
		t.Errorf("CheckLength: %v", err)
	}
}

type fakeAudio struct{ called bool }

func (f *fakeAudio) DecodeAudio(path string, data []byte, maxSeconds float64) (*PCM, error) {
	f.called = true
	if string(data[4:8]) != "ftyp" {
		return nil, ErrUnsupportedFormat
	}
	return &PCM{Samples: make([]float32, 48000), Rate: 48000, Channels: 2, Format: "m4a"}, nil
}

type fakeImages struct{}

func (fakeImages) DecodeImage(path string, data []byte, maxPixels int) (image.Image, error) {
	return nil, ErrUnsupportedFormat
}

// TestPlatformAudio: a format the pure-Go decoders do not read goes to the
// platform decoder when there is one, and is refused by name otherwise.
func TestPlatformAudio(t *testing.T) {
	p := filepath.Join(t.TempDir(), "voice.m4a")
	os.WriteFile(p, []byte("\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00"), 0o600)
	f := &fakeAudio{}
	a, err := LoadAudio(p, Options{Audio: f})
	if err != nil || a.Format != "m4a" || len(a.Samples) != 16000 {
		t.Fatalf("platform decoder: %v", err)
	}
	if _, err := LoadAudio(p, Options{}); err == nil || !errors.Is(err, ErrUnsupportedFormat) || !strings.Contains(err.Error(), "macOS") {
		t.Errorf("without one: %v", err)
	}
	os.WriteFile(p, []byte("\x00\x00\x00\x20junkjunkjunk"), 0o600)
	if _, err := LoadAudio(p, Options{Audio: f}); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("platform refuses: %v", err)
	}
}
