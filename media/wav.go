package media

import (
	"encoding/binary"
	"fmt"
	"math"
)

// WAV format tags (the fmt chunk's first field, or an extensible file's
// sub-format GUID's first two bytes).
const (
	wavePCM        = 1
	waveFloat      = 3
	waveExtensible = 0xfffe
)

// decodeWAV reads a RIFF WAVE file: PCM of 8 (unsigned), 16, 24 or 32 bits,
// IEEE float of 32 or 64 bits, plain or WAVE_FORMAT_EXTENSIBLE, any channel
// count. Chunks other than "fmt " and "data" are skipped, with the pad byte
// RIFF puts after an odd-sized chunk. A data size of 0 or 0xFFFFFFFF (left
// by writers that stream) means "to the end of the file". A clip longer
// than maxSeconds is refused from its header, before any sample is read.
func decodeWAV(data []byte, maxSeconds float64) (*PCM, error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		switch {
		case len(data) >= 4 && string(data[0:4]) == "RIFX":
			return nil, fmt.Errorf("big-endian WAV (RIFX) is not supported: convert it to a little-endian WAV")
		case len(data) >= 4 && string(data[0:4]) == "RF64":
			return nil, fmt.Errorf("RF64 WAV is not supported: convert it to a plain WAV, FLAC or MP3")
		}
		return nil, fmt.Errorf("not a WAV file (no RIFF/WAVE header)")
	}
	var (
		haveFmt                   bool
		tag, channels, blockAlign int
		rate, bits                int
	)
	for p := 12; ; {
		if len(data)-p < 8 {
			if !haveFmt {
				return nil, fmt.Errorf("WAV has no fmt chunk")
			}
			return nil, fmt.Errorf("WAV has no data chunk")
		}
		id := string(data[p : p+4])
		size := int64(binary.LittleEndian.Uint32(data[p+4 : p+8]))
		body := int64(p + 8)
		rest := int64(len(data)) - body
		if id == "data" && (size == 0 || size == 0xffffffff) {
			size = rest
		}
		if size > rest {
			return nil, fmt.Errorf("WAV is truncated: chunk %q declares %d bytes but %d remain", id, size, rest)
		}
		chunk := data[body : body+size]
		switch id {
		case "fmt ":
			if len(chunk) < 16 {
				return nil, fmt.Errorf("WAV fmt chunk is %d bytes, want at least 16", len(chunk))
			}
			tag = int(binary.LittleEndian.Uint16(chunk[0:2]))
			channels = int(binary.LittleEndian.Uint16(chunk[2:4]))
			rate = int(binary.LittleEndian.Uint32(chunk[4:8]))
			blockAlign = int(binary.LittleEndian.Uint16(chunk[12:14]))
			bits = int(binary.LittleEndian.Uint16(chunk[14:16]))
			if tag == waveExtensible {
				if len(chunk) < 40 {
					return nil, fmt.Errorf("WAV extensible fmt chunk is %d bytes, want 40", len(chunk))
				}
				// The GUID's first two bytes carry the plain format tag.
				tag = int(binary.LittleEndian.Uint16(chunk[24:26]))
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, fmt.Errorf("WAV data chunk comes before its fmt chunk")
			}
			return wavSamples(chunk, tag, channels, rate, bits, blockAlign, maxSeconds)
		}
		p = int(body + size + size&1)
	}
}

func wavSamples(chunk []byte, tag, channels, rate, bits, blockAlign int, maxSeconds float64) (*PCM, error) {
	switch {
	case channels < 1:
		return nil, fmt.Errorf("WAV declares %d channels", channels)
	case rate < 1000 || rate > 768000:
		return nil, fmt.Errorf("WAV sample rate %d Hz is outside 1000–768000", rate)
	case tag != wavePCM && tag != waveFloat:
		return nil, fmt.Errorf("WAV format tag %#x is not PCM or IEEE float (compressed WAV is not supported: convert it to PCM)", tag)
	case tag == wavePCM && bits != 8 && bits != 16 && bits != 24 && bits != 32:
		return nil, fmt.Errorf("WAV PCM of %d bits is not supported (8, 16, 24 or 32)", bits)
	case tag == waveFloat && bits != 32 && bits != 64:
		return nil, fmt.Errorf("WAV float of %d bits is not supported (32 or 64)", bits)
	case blockAlign != channels*bits/8:
		return nil, fmt.Errorf("WAV block align %d does not match %d channels of %d bits", blockAlign, channels, bits)
	}
	if len(chunk)%blockAlign != 0 {
		// A torn last frame (a writer killed mid-write) is dropped.
		chunk = chunk[:len(chunk)/blockAlign*blockAlign]
	}
	width := bits / 8
	frames := len(chunk) / blockAlign
	limit := limitAt(rate, maxSeconds)
	if err := limit.check(int64(frames)); err != nil {
		return nil, err
	}
	m := newMixer(channels, frames, limit)
	frame := make([]float32, channels)
	for f := range frames {
		b := chunk[f*blockAlign:]
		for c := range channels {
			s := b[c*width:]
			var v float32
			switch {
			case tag == waveFloat && bits == 32:
				v = math.Float32frombits(binary.LittleEndian.Uint32(s))
			case tag == waveFloat:
				v = float32(math.Float64frombits(binary.LittleEndian.Uint64(s)))
			case bits == 8:
				v = float32(int(s[0])-128) / 128
			case bits == 16:
				v = float32(int16(binary.LittleEndian.Uint16(s))) / (1 << 15)
			case bits == 24:
				v = float32(int32(uint32(s[0])<<8|uint32(s[1])<<16|uint32(s[2])<<24)>>8) / (1 << 23)
			default:
				v = float32(float64(int32(binary.LittleEndian.Uint32(s))) / (1 << 31))
			}
			frame[c] = v
		}
		m.add(frame)
	}
	return &PCM{Samples: m.out, Rate: rate, Channels: channels, Format: "wav"}, nil
}
