package media

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wavFile builds a WAV file by hand: a fmt chunk (plain or extensible), any
// extra chunks before the data, then the data chunk.
func wavFile(tag, channels, rate, bits int, extensible bool, extra [][2]string, data []byte) []byte {
	le16 := func(b []byte, v int) []byte { return binary.LittleEndian.AppendUint16(b, uint16(v)) }
	le32 := func(b []byte, v int) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }
	var fmtc []byte
	t := tag
	if extensible {
		t = waveExtensible
	}
	fmtc = le16(fmtc, t)
	fmtc = le16(fmtc, channels)
	fmtc = le32(fmtc, rate)
	fmtc = le32(fmtc, rate*channels*bits/8)
	fmtc = le16(fmtc, channels*bits/8)
	fmtc = le16(fmtc, bits)
	if extensible {
		fmtc = le16(fmtc, 22)
		fmtc = le16(fmtc, bits)
		fmtc = le32(fmtc, 3)
		fmtc = le16(fmtc, tag)
		fmtc = append(fmtc, "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"...)
	}
	chunk := func(b []byte, id string, body []byte) []byte {
		b = append(b, id...)
		b = le32(b, len(body))
		b = append(b, body...)
		if len(body)%2 == 1 {
			b = append(b, 0)
		}
		return b
	}
	body := []byte("WAVE")
	body = chunk(body, "fmt ", fmtc)
	for _, e := range extra {
		body = chunk(body, e[0], []byte(e[1]))
	}
	body = chunk(body, "data", data)
	return append(le32([]byte("RIFF"), len(body)), body...)
}

// TestDecodeWAVFormats decodes one stereo frame (L, R) and one more in
// every sample format and checks the channel average.
func TestDecodeWAVFormats(t *testing.T) {
	le := binary.LittleEndian
	for _, c := range []struct {
		name       string
		tag, bits  int
		extensible bool
		frames     []byte
		want       []float32
	}{
		{"pcm8", wavePCM, 8, false, []byte{255, 1, 128, 128}, []float32{(127.0/128 - 127.0/128) / 2, 0}},
		{"pcm8 asym", wavePCM, 8, false, []byte{192, 128, 0, 0}, []float32{0.25, -1}},
		{"pcm16", wavePCM, 16, false, le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(nil, 0x4000), 0x4000), 0x8000), 0x8000), []float32{0.5, -1}},
		{"pcm24", wavePCM, 24, false, []byte{0, 0, 0x40, 0, 0, 0x20, 0, 0, 0x80, 0, 0, 0x80}, []float32{0.375, -1}},
		{"pcm32", wavePCM, 32, false, le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 0x40000000), 0), 0x80000000), 0x80000000), []float32{0.25, -1}},
		{"float32", waveFloat, 32, false, le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, math.Float32bits(0.5)), math.Float32bits(0.25)), math.Float32bits(-1)), math.Float32bits(1)), []float32{0.375, 0}},
		{"float64", waveFloat, 64, false, le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, math.Float64bits(0.5)), math.Float64bits(0.25)), math.Float64bits(-1)), math.Float64bits(1)), []float32{0.375, 0}},
		{"extensible pcm24", wavePCM, 24, true, []byte{0, 0, 0x40, 0, 0, 0x20, 0, 0, 0x80, 0, 0, 0x80}, []float32{0.375, -1}},
		{"extensible float", waveFloat, 32, true, le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, math.Float32bits(0.5)), math.Float32bits(0.25)), math.Float32bits(-1)), math.Float32bits(1)), []float32{0.375, 0}},
	} {
		// An odd-sized chunk before the data exercises RIFF's pad byte.
		raw := wavFile(c.tag, 2, 22050, c.bits, c.extensible, [][2]string{{"LIST", "odd"}}, c.frames)
		pcm, err := decodeWAV(raw, DefaultMaxSeconds)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if pcm.Rate != 22050 || pcm.Channels != 2 || len(pcm.Samples) != len(c.want) {
			t.Fatalf("%s: %d Hz, %d channels, %d samples", c.name, pcm.Rate, pcm.Channels, len(pcm.Samples))
		}
		for i, w := range c.want {
			if math.Abs(float64(pcm.Samples[i]-w)) > 1e-7 {
				t.Errorf("%s: sample %d = %g, want %g", c.name, i, pcm.Samples[i], w)
			}
		}
	}
}

// TestDecodeWAVRefusals: bad headers are refused with a message that says
// what is wrong.
func TestDecodeWAVRefusals(t *testing.T) {
	good := wavFile(wavePCM, 1, 16000, 16, false, nil, make([]byte, 8))
	swap := func(b []byte, at int, v string) []byte {
		c := append([]byte(nil), b...)
		copy(c[at:], v)
		return c
	}
	for _, c := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"not riff", []byte("hello world, not a wav"), "not a WAV"},
		{"rifx", swap(good, 0, "RIFX"), "big-endian"},
		{"truncated data", good[:len(good)-3], "truncated"},
		{"no data", wavFile(wavePCM, 1, 16000, 16, false, nil, nil)[:36], "no data chunk"},
		{"data before fmt", append([]byte("RIFF\x0c\x00\x00\x00WAVEdata\x00\x00\x00\x00"), 0), "before its fmt"},
		{"alaw", wavFile(6, 1, 8000, 8, false, nil, []byte{1, 2}), "not PCM or IEEE float"},
		{"12-bit", wavFile(wavePCM, 1, 8000, 12, false, nil, []byte{1, 2}), "12 bits"},
		{"float16", wavFile(waveFloat, 1, 8000, 16, false, nil, []byte{1, 2}), "float of 16 bits"},
		{"zero channels", wavFile(wavePCM, 0, 8000, 16, false, nil, []byte{1, 2}), "0 channels"},
		{"zero rate", wavFile(wavePCM, 1, 0, 16, false, nil, []byte{1, 2}), "sample rate 0"},
	} {
		_, err := decodeWAV(c.raw, DefaultMaxSeconds)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	// A streaming writer's size 0xFFFFFFFF means "to the end".
	stream := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(stream[40:], 0xffffffff)
	if pcm, err := decodeWAV(stream, DefaultMaxSeconds); err != nil || len(pcm.Samples) != 4 {
		t.Errorf("streamed WAV: %v", err)
	}
}

// TestLoadAudioWAV loads a 44.1 kHz stereo file end to end and names the
// file in its errors.
func TestLoadAudioWAV(t *testing.T) {
	dir := t.TempDir()
	var data []byte
	for i := range 44100 {
		v := int16(16384 * math.Sin(2*math.Pi*1000*float64(i)/44100))
		data = binary.LittleEndian.AppendUint16(data, uint16(v))
		data = binary.LittleEndian.AppendUint16(data, uint16(v))
	}
	p := filepath.Join(dir, "tone.wav")
	os.WriteFile(p, wavFile(wavePCM, 2, 44100, 16, false, nil, data), 0o600)
	a, err := LoadAudio(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Samples) != 16000 || a.SourceRate != 44100 || a.Channels != 2 || a.Format != "wav" || a.Info.Name != "tone.wav" || len(a.Info.SHA256) != 64 {
		t.Fatalf("%+v", a.Info)
	}
	if amp := toneAmplitude(a.Samples, SampleRate, 1000, 4000, 8000); math.Abs(amp-0.5) > 1e-3 {
		t.Errorf("1 kHz amplitude %g after decode and resampling", amp)
	}
	bad := filepath.Join(dir, "notes.txt")
	os.WriteFile(bad, []byte("not audio at all"), 0o600)
	if _, err := LoadAudio(bad, Options{}); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "macOS") {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := LoadAudio(p, Options{MaxSeconds: 0.5}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("over MaxSeconds: %v", err)
	}
}
