package media

import (
	"bytes"
	"errors"
	"image/gif"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/testmedia"
)

// TestProbeAgreesWithTheDecoders: what Probe accepts from a file's first
// bytes, the decoders read, and what it refuses they refuse, for either
// kind asked; a file of the other kind is named for what it is.
func TestProbeAgreesWithTheDecoders(t *testing.T) {
	var jpg, gf bytes.Buffer
	if err := jpeg.Encode(&jpg, uprightQuadrants(16, 8), nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gf, uprightQuadrants(8, 8), nil); err != nil {
		t.Fatal(err)
	}
	files := []struct {
		name   string
		data   []byte
		format string // "" for neither kind
		kind   string
	}{
		{"a.png", testmedia.PNG(1, 24, 16), "png", "image"},
		{"a.jpg", jpg.Bytes(), "jpeg", "image"},
		{"a.gif", gf.Bytes(), "gif", "image"},
		{"a.wav", testmedia.WAV(0.5, 440), "wav", "audio"},
		{"notimage.png", []byte("hello"), "", ""},
		{"a.heic", append([]byte("\x00\x00\x00\x18ftypheic"), make([]byte, 16)...), "", ""}, // macOS only
	}
	for _, f := range files {
		for _, kind := range []string{"image", "audio"} {
			head := f.data[:min(len(f.data), ProbeBytes)]
			format, err := Probe(kind, f.name, head, Options{})
			var decErr error
			if kind == "image" {
				_, decErr = DecodeImage(BytesSource(f.name, f.data), Options{})
			} else {
				_, decErr = DecodeAudio(BytesSource(f.name, f.data), Options{})
			}
			switch {
			case (err == nil) != (decErr == nil):
				t.Errorf("%s as %s: Probe says %q, %v; the decoder %v", f.name, kind, format, err, decErr)
			case err == nil && (kind != f.kind || format != f.format):
				t.Errorf("%s as %s: format %q", f.name, kind, format)
			case err != nil && !errors.Is(err, ErrUnsupportedFormat):
				t.Errorf("%s as %s: %v does not wrap ErrUnsupportedFormat", f.name, kind, err)
			case err != nil && f.kind != "" && !strings.Contains(err.Error(), "not "+map[string]string{"image": "a picture", "audio": "audio"}[kind]):
				t.Errorf("%s as %s: %v does not say what it is", f.name, kind, err)
			}
		}
	}
	if _, err := Probe("image", "empty.png", nil, Options{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: %v", err)
	}
}
