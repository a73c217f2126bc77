package media

// PCM is decoded audio before resampling: mono samples in [-1, 1] (the
// file's channels averaged) at the file's own rate.
type PCM struct {
	Samples  []float32
	Rate     int    // Hz
	Channels int    // channels in the file, before averaging
	Format   string // "wav", "flac", "mp3", or the platform decoder's name
}

// mixer averages interleaved frames into mono as they are decoded, so a
// long stereo file never needs its interleaved copy in memory.
type mixer struct {
	channels int
	scale    float32 // 1/channels
	out      []float32
}

func newMixer(channels, frames int) *mixer {
	return &mixer{channels: channels, scale: 1 / float32(channels), out: make([]float32, 0, frames)}
}

// add appends one frame given as channel values.
func (m *mixer) add(frame []float32) {
	var s float32
	for _, v := range frame {
		s += v
	}
	m.out = append(m.out, s*m.scale)
}
