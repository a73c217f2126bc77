package media

import (
	"bytes"
	"errors"
	"fmt"
)

// Audio is a clip ready for the audio encoder: 16 kHz mono samples.
type Audio struct {
	Info       FileInfo
	Format     string    // "wav", "flac", "mp3", or the platform decoder's
	SourceRate int       // the file's sample rate, Hz
	Channels   int       // the file's channels (averaged into Samples)
	Samples    []float32 // 16 kHz mono
}

// LoadAudio reads an audio file (WAV, FLAC or MP3; more through
// o.Audio), averages its channels and resamples it to 16 kHz. Any length up
// to o.MaxSeconds loads; CheckLength or Split then decide what reaches the
// encoder.
func LoadAudio(path string, o Options) (*Audio, error) {
	src, err := ReadSource(path, o)
	if err != nil {
		return nil, fmt.Errorf("audio %s: %w", path, err)
	}
	return DecodeAudio(src, o)
}

// DecodeAudio reads a clip from its bytes, as LoadAudio does from a file;
// src.Info.Path names it in messages.
func DecodeAudio(src Source, o Options) (*Audio, error) {
	path, data, info := src.Info.Path, src.Data, src.Info
	if err := src.checkSize(o); err != nil {
		return nil, fmt.Errorf("audio %w", err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("audio %s is empty", path)
	}
	pcm, err := decodeAudio(path, data, o)
	if err == nil {
		// The decoders stop at the limit; a platform decoder may not.
		if secs := float64(len(pcm.Samples)) / float64(pcm.Rate); secs > o.maxSeconds() {
			err = &TooLongError{Seconds: secs, Limit: o.maxSeconds()}
		}
	}
	if tl := (*TooLongError)(nil); errors.As(err, &tl) {
		return nil, &LimitError{Option: "MaxSeconds", Err: fmt.Errorf("audio %s %w", path, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("audio %s: %w", path, err)
	}
	if len(pcm.Samples) == 0 {
		return nil, fmt.Errorf("audio %s: the file holds no samples", path)
	}
	a := &Audio{Info: info, Format: pcm.Format, SourceRate: pcm.Rate, Channels: pcm.Channels, Samples: pcm.Samples}
	if pcm.Rate != SampleRate {
		a.Samples = newResampler(pcm.Rate, SampleRate).run(pcm.Samples)
	}
	return a, nil
}

// decodeAudio picks the decoder from the file's first bytes, not its name.
func decodeAudio(path string, data []byte, o Options) (*PCM, error) {
	var pcm *PCM
	var err error
	switch sniffAudio(data) {
	case "wav":
		pcm, err = decodeWAV(data, o.maxSeconds())
	case "flac":
		pcm, err = decodeFLAC(data, o.maxSeconds())
	case "mp3":
		pcm, err = decodeMP3(data, o.maxSeconds())
	default:
		if o.Audio == nil {
			return nil, fmt.Errorf("%w: orchard reads WAV, FLAC and MP3 here (m4a, caf and other formats only on macOS, through AVFoundation); convert it, e.g. to WAV", ErrUnsupportedFormat)
		}
		pcm, err = o.Audio.DecodeAudio(path, data, o.maxSeconds())
		if errors.Is(err, ErrUnsupportedFormat) {
			return nil, fmt.Errorf("%w: not WAV, FLAC, MP3 or a format the system decoder reads", ErrUnsupportedFormat)
		}
	}
	if err != nil {
		return nil, err
	}
	if pcm.Rate < 1000 {
		return nil, fmt.Errorf("sample rate %d Hz is too low", pcm.Rate)
	}
	return pcm, nil
}

// sniffAudio names an audio container from its magic bytes.
func sniffAudio(b []byte) string {
	switch {
	case len(b) >= 12 && (string(b[0:4]) == "RIFF" || string(b[0:4]) == "RIFX" || string(b[0:4]) == "RF64") && string(b[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(b, []byte("fLaC")):
		return "flac"
	case bytes.HasPrefix(b, []byte("ID3")):
		// An ID3v2 tag may lead a FLAC file too.
		if len(b) >= 10 {
			size := int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f)
			if p := 10 + size; p+4 <= len(b) && string(b[p:p+4]) == "fLaC" {
				return "flac"
			}
		}
		return "mp3"
	case len(b) >= 2 && b[0] == 0xff && b[1]&0xe6 == 0xe2: // frame sync, layer III
		return "mp3"
	}
	return ""
}

// Seconds is the clip's duration.
func (a *Audio) Seconds() float64 { return float64(len(a.Samples)) / SampleRate }

// CheckLength refuses a clip the encoder cannot take in one call: longer
// than 30 s (split it with Split) or shorter than MinSamples.
func (a *Audio) CheckLength() error {
	n := len(a.Samples)
	switch {
	case n > MaxSamples:
		return fmt.Errorf("audio %s is %s long; the audio encoder takes at most 30 s: attach a shorter clip or let orchard split it into %d parts",
			a.Info.Path, formatSeconds(a.Seconds()), len(a.Split()))
	case n < MinSamples:
		return fmt.Errorf("audio %s is %s long, too short to transcribe", a.Info.Path, formatSeconds(a.Seconds()))
	}
	return nil
}

// Mel computes the encoder input of a clip of at most 30 s.
func (a *Audio) Mel(m *MelExtractor) (*MelInput, error) {
	if err := a.CheckLength(); err != nil {
		return nil, err
	}
	in, err := m.Compute(a.Samples)
	if err != nil {
		return nil, fmt.Errorf("audio %s: %w", a.Info.Path, err)
	}
	return in, nil
}

// formatSeconds is a duration for people: 0.8 s, 12.4 s, 3 min 05 s.
func formatSeconds(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.1f s", s)
	}
	m := int(s) / 60
	return fmt.Sprintf("%d min %02d s", m, int(s)-60*m)
}
