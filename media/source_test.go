package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDecodeFromBytes: a file's bytes decode exactly as the file does —
// the same patches, samples and identity but for the name — so a server
// that receives a picture from a client needs no temporary file.
func TestDecodeFromBytes(t *testing.T) {
	dir := t.TempDir()
	var jpg, pic bytes.Buffer
	if err := jpeg.Encode(&jpg, uprightQuadrants(40, 24), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&pic, uprightQuadrants(20, 36)); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"q.jpg": jpg.Bytes(), "q.png": pic.Bytes()} {
		path := writeFile(t, dir, name, data)
		fromFile, err := LoadImage(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fromBytes, err := DecodeImage(BytesSource("messages[0].content[1]", data), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := fromFile.Patches(VisionGeometry{Grid: 4, Side: 64})
		got, _ := fromBytes.Patches(VisionGeometry{Grid: 4, Side: 64})
		if !slices.Equal(got, want) || fromBytes.Width != fromFile.Width || fromBytes.Orientation != fromFile.Orientation {
			t.Errorf("%s: bytes and file decode differently", name)
		}
		if fromBytes.Info.SHA256 != fromFile.Info.SHA256 || fromBytes.Info.Bytes != fromFile.Info.Bytes || fromBytes.Info.Name != "messages[0].content[1]" {
			t.Errorf("%s: info %+v, file %+v", name, fromBytes.Info, fromFile.Info)
		}
	}

	var pcm []byte
	for i := range 8000 {
		pcm = binary.LittleEndian.AppendUint16(pcm, uint16(int16(9000*math.Sin(float64(i)/7))))
	}
	wav := wavFile(wavePCM, 1, 22050, 16, false, nil, pcm)
	path := filepath.Join(dir, "clip.wav")
	if err := os.WriteFile(path, wav, 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadAudio(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromBytes, err := DecodeAudio(BytesSource("clip.wav", wav), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fromBytes.Samples, fromFile.Samples) || fromBytes.Info != (FileInfo{Path: "clip.wav", Name: "clip.wav", Bytes: fromFile.Info.Bytes, SHA256: fromFile.Info.SHA256}) {
		t.Errorf("audio from bytes %+v, from the file %+v", fromBytes.Info, fromFile.Info)
	}
}

// TestDecodeFromBytesRefusals: bytes get the checks a file gets — the size
// limit, emptiness, the format — and the messages name them by the name
// given.
func TestDecodeFromBytesRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		o    Options
		says string
	}{
		{"empty", nil, Options{}, "part 3 is empty"},
		{"too large", make([]byte, 2048), Options{MaxBytes: 1024}, "part 3 is 2.0 KB, over the 1.0 KB"},
		{"not an image", []byte("plain words"), Options{}, "part 3: unsupported format"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeImage(BytesSource("part 3", tt.data), tt.o); err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("image: %v", err)
			}
			if _, err := DecodeAudio(BytesSource("part 3", tt.data), tt.o); err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("audio: %v", err)
			}
		})
	}
}

// TestLimitErrorsNameTheirOption: every refusal over a limit is a
// *LimitError naming the Options field, so that front ends can say which
// setting raises it.
func TestLimitErrorsNameTheirOption(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.wav")
	if err := os.WriteFile(big, wavFile(wavePCM, 1, 8000, 16, false, nil, make([]byte, 2*8000*3)), 0o600); err != nil {
		t.Fatal(err)
	}
	wide := filepath.Join(dir, "wide.png")
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 400, 10))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wide, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, option string
		load         func() error
	}{
		{"file size", "MaxBytes", func() error { _, err := LoadAudio(big, Options{MaxBytes: 1000}); return err }},
		{"seconds", "MaxSeconds", func() error { _, err := LoadAudio(big, Options{MaxSeconds: 2}); return err }},
		{"pixels", "MaxPixels", func() error { _, err := LoadImage(wide, Options{MaxPixels: 3000}); return err }},
		{"side", "MaxSide", func() error { _, err := LoadImage(wide, Options{MaxSide: 300}); return err }},
	} {
		var le *LimitError
		if err := c.load(); !errors.As(err, &le) || le.Option != c.option {
			t.Errorf("%s: %v, want a LimitError of %s", c.name, err, c.option)
		}
	}
}

// TestAttachingAFIFOFailsAtOnce: a named pipe in a file's place is refused
// without waiting for a writer that never comes.
func TestAttachingAFIFOFailsAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "clip.wav")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadAudio(p, Options{}); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), p) {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LoadAudio waited on a FIFO")
	}
}
