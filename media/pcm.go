package media

import (
	"fmt"
	"math"
)

// PCM is decoded audio before resampling: mono samples in [-1, 1] (the
// file's channels averaged) at the file's own rate.
type PCM struct {
	Samples  []float32
	Rate     int    // Hz
	Channels int    // channels in the file, before averaging
	Format   string // "wav", "flac", "mp3", or the platform decoder's name
}

// clipLimit is the length limit of one clip, in frames at its rate: a
// small compressed file can decode to hours of samples, so decoders stop
// at the limit rather than after it.
type clipLimit struct {
	seconds float64
	rate    int
	frames  int // the most frames that fit in seconds
}

func limitAt(rate int, seconds float64) clipLimit {
	return clipLimit{seconds: seconds, rate: rate, frames: int(min(math.Floor(seconds*float64(rate)), math.MaxInt32))}
}

// check refuses a clip whose length, known from its header, is over the
// limit, before anything is decoded.
func (l clipLimit) check(frames int64) error {
	if frames > int64(l.frames) {
		return &TooLongError{Seconds: float64(frames) / float64(l.rate), Limit: l.seconds}
	}
	return nil
}

// reached refuses a clip that decoding found to run past the limit.
func (l clipLimit) reached() error { return &TooLongError{Limit: l.seconds} }

// mixer averages interleaved frames into mono as they are decoded, so a
// long stereo file never needs its interleaved copy in memory. It holds at
// most one frame past the limit.
type mixer struct {
	channels int
	scale    float32 // 1/channels
	out      []float32
	limit    int
}

// newMixer reserves room for frames (never more than the limit): the
// frames the data holds when that is certain, or declared(n) for a
// header's claim.
func newMixer(channels, frames int, l clipLimit) *mixer {
	return &mixer{channels: channels, scale: 1 / float32(channels), out: make([]float32, 0, min(max(frames, 0), l.frames+1)), limit: l.frames}
}

// declared is what a header's length claim may reserve: a lying header
// gets at most 64 MB of buffer, and past that the samples grow it as they
// really arrive.
func declared(frames int64) int {
	return int(min(max(frames, 0), 1<<24))
}

// add appends one frame given as channel values; false once the clip is
// past the limit (the caller stops decoding: clipLimit.reached).
func (m *mixer) add(frame []float32) bool {
	var s float32
	for _, v := range frame {
		s += v
	}
	m.out = append(m.out, s*m.scale)
	return len(m.out) <= m.limit
}

// TooLongError refuses a clip over the length limit, found while decoding
// it: Seconds is its length when the file's header tells it, 0 when
// decoding stopped at the limit without knowing the rest.
type TooLongError struct {
	Seconds float64
	Limit   float64
}

func (e *TooLongError) Error() string {
	if e.Seconds > 0 {
		return fmt.Sprintf("is %s long; orchard reads at most %s of audio (each 30 s takes 750 tokens of context)",
			formatSeconds(e.Seconds), formatSeconds(e.Limit))
	}
	return fmt.Sprintf("is longer than %s, the most audio orchard reads (each 30 s takes 750 tokens of context)", formatSeconds(e.Limit))
}
