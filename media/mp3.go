package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/hajimehoshi/go-mp3"
)

// decodeMP3 decodes an MPEG-1/2 layer III stream with
// github.com/hajimehoshi/go-mp3, which always yields 16-bit stereo (a mono
// file's two channels are equal, so their average is the file's channel).
// It decodes a buffer at a time and stops once the clip is past
// maxSeconds: a few megabytes of MP3 can hold hours. The encoder's priming
// delay is not removed: a few dozen milliseconds of silence lead the clip.
func decodeMP3(data []byte, maxSeconds float64) (_ *PCM, err error) {
	defer guard("MP3", &err)
	d, err := mp3.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("MP3: %w", err)
	}
	if d.SampleRate() < 1 {
		return nil, fmt.Errorf("MP3 declares a sample rate of %d Hz", d.SampleRate())
	}
	limit := limitAt(d.SampleRate(), maxSeconds)
	m := newMixer(2, declared(d.Length()/4), limit)
	buf := make([]byte, 1<<16)
	var frame [2]float32
	for {
		n, err := io.ReadFull(d, buf)
		for i := 0; i+4 <= n; i += 4 {
			frame[0] = float32(int16(binary.LittleEndian.Uint16(buf[i:]))) / (1 << 15)
			frame[1] = float32(int16(binary.LittleEndian.Uint16(buf[i+2:]))) / (1 << 15)
			if !m.add(frame[:]) {
				return nil, limit.reached()
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("MP3: %w", err)
		}
	}
	return &PCM{Samples: m.out, Rate: d.SampleRate(), Channels: mp3Channels(data), Format: "mp3"}, nil
}

// mp3Channels reads the channel mode of the first frame header (after an
// ID3v2 tag): 1 for mono, else 2.
func mp3Channels(data []byte) int {
	p := 0
	if len(data) >= 10 && string(data[:3]) == "ID3" {
		size := int(data[6]&0x7f)<<21 | int(data[7]&0x7f)<<14 | int(data[8]&0x7f)<<7 | int(data[9]&0x7f)
		p = 10 + size
	}
	for ; p+4 <= len(data); p++ {
		h := binary.BigEndian.Uint32(data[p:])
		if h>>21 == 0x7ff && (h>>17)&3 == 1 { // frame sync, layer III
			if (h>>6)&3 == 3 {
				return 1
			}
			return 2
		}
	}
	return 2
}
