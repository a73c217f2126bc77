package media

import (
	"fmt"
	"strings"
)

// Summary describes an attached file in a few fields a chat chip shows and
// a checkpoint stores (with the thumbnail, for images).
type Summary struct {
	Kind       string  `json:"kind"` // "image" or "audio"
	Name       string  `json:"name"`
	Bytes      int64   `json:"bytes"`
	SHA256     string  `json:"sha256"`
	Format     string  `json:"format"`
	Width      int     `json:"width,omitempty"`      // image, upright
	Height     int     `json:"height,omitempty"`     // image, upright
	Seconds    float64 `json:"seconds,omitempty"`    // audio
	SampleRate int     `json:"sampleRate,omitempty"` // audio, the file's
	Channels   int     `json:"channels,omitempty"`   // audio, the file's
	Segments   int     `json:"segments,omitempty"`   // audio: encoder calls (30 s each at most)
	Tokens     int     `json:"tokens"`               // soft tokens the prompt holds
}

// Summary describes the image; tokens is the vision encoder's row count
// (256 for vision_fp16), which only the encoder's output shape tells.
func (im *Image) Summary(tokens int) Summary {
	return Summary{Kind: "image", Name: im.Info.Name, Bytes: im.Info.Bytes, SHA256: im.Info.SHA256,
		Format: im.Format, Width: im.Width, Height: im.Height, Tokens: tokens}
}

// Summary describes the clip; Tokens adds up its segments when it is over
// 30 s and gets split.
func (a *Audio) Summary() Summary {
	s := Summary{Kind: "audio", Name: a.Info.Name, Bytes: a.Info.Bytes, SHA256: a.Info.SHA256,
		Format: a.Format, Seconds: a.Seconds(), SampleRate: a.SourceRate, Channels: a.Channels}
	for _, seg := range a.Split() {
		s.Segments++
		s.Tokens += SoftTokens(len(seg.Samples))
	}
	return s
}

// String is the chip text: "photo.jpg · 2.1 MB · 4032×3024 · 256 tokens",
// "memo.wav · 312.0 KB · 9.8 s · 245 tokens".
func (s Summary) String() string {
	parts := []string{s.Name, formatBytes(s.Bytes)}
	switch s.Kind {
	case "image":
		parts = append(parts, fmt.Sprintf("%d×%d", s.Width, s.Height))
	case "audio":
		d := formatSeconds(s.Seconds)
		if s.Segments > 1 {
			d += fmt.Sprintf(" in %d parts", s.Segments)
		}
		parts = append(parts, d)
	}
	if s.Tokens > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", s.Tokens))
	}
	return strings.Join(parts, " · ")
}
