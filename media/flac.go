package media

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/mewkiz/flac"
)

// decodeFLAC decodes a FLAC stream with github.com/mewkiz/flac, frame by
// frame, averaging channels as it goes and stopping once the clip is past
// maxSeconds.
func decodeFLAC(data []byte, maxSeconds float64) (_ *PCM, err error) {
	defer guard("FLAC", &err)
	s, err := flac.New(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("FLAC: %w", err)
	}
	info := s.Info
	channels, bps := int(info.NChannels), int(info.BitsPerSample)
	if channels < 1 || bps < 4 || bps > 32 || info.SampleRate == 0 {
		return nil, fmt.Errorf("FLAC stream info is invalid (%d channels, %d bits, %d Hz)", channels, bps, info.SampleRate)
	}
	scale := 1 / float32(uint64(1)<<(bps-1))
	limit := limitAt(int(info.SampleRate), maxSeconds)
	if err := limit.check(int64(info.NSamples)); err != nil { // a 36-bit count: no overflow
		return nil, err
	}
	m := newMixer(channels, declared(int64(info.NSamples)), limit)
	frame := make([]float32, channels)
	for {
		f, err := s.ParseNext()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("FLAC frame after %d samples: %w", len(m.out), err)
		}
		if len(f.Subframes) != channels {
			return nil, fmt.Errorf("FLAC frame has %d channels, the stream %d", len(f.Subframes), channels)
		}
		for i := range f.Subframes[0].NSamples {
			for c, sub := range f.Subframes {
				frame[c] = float32(sub.Samples[i]) * scale
			}
			if !m.add(frame) {
				return nil, limit.reached()
			}
		}
	}
	return &PCM{Samples: m.out, Rate: int(info.SampleRate), Channels: channels, Format: "flac"}, nil
}
