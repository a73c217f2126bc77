package media

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/orchard-llm/orchard/f16"
)

// The audio encoder's input geometry (multimodal.md §2.3, §2.4).
const (
	SampleRate  = 16000  // Hz, mono
	MelBins     = 128    // mel channels per frame
	MelFrames   = 3000   // frames in the fixed encoder input
	AudioTokens = 750    // soft rows the encoder emits for MelFrames
	MaxSamples  = 480000 // 30 s: the most one encoder call takes
	// MinSamples is the shortest clip with a defined log-mel. Below it the
	// padded wave (160 + 128 samples) is shorter than one 320-sample window,
	// yet the frame count formula still yields one frame; the Swift code
	// then reads past its buffer, so orchard refuses such clips.
	MinSamples = 129

	sampleRateHz = float64(SampleRate)
	frameLength  = 320 // 20 ms window
	hopLength    = 160 // 10 ms hop
	unfoldLength = frameLength + 1
	padLeft      = frameLength / 2 // semicausal left padding
	padMultiple  = 128
	spectrumBins = 257 // 512-point real FFT
	melFloor     = 1e-3
)

// MelInput is the audio encoder's input for one clip of at most 30 s.
type MelInput struct {
	Mel    []uint16 // fp16 [1, MelFrames, MelBins], C order; rows past Frames are 0
	Mask   []uint16 // fp16 [1, MelFrames]: 1 for a frame inside the real audio, else 0
	Frames int      // frames computed from the clip (at most 2999)
	Valid  int      // frames whose mask is 1
	Tokens int      // soft rows that enter the prompt: SoftTokens(samples)
}

// MelExtractor computes the log-mel input of the audio encoder. Its tables
// (periodic Hann window, mel filterbank, FFT twiddles) are built once by
// NewMelExtractor; Compute may be called from one goroutine at a time.
type MelExtractor struct {
	hann    [frameLength]float32
	bank    *melBank
	workers []*melWorker
}

type melWorker struct {
	fft      *rfft512
	windowed [frameLength]float64
	mag      [spectrumBins]float64
	mel      [MelBins]float64
}

// NewMelExtractor builds the tables.
func NewMelExtractor() *MelExtractor {
	m := &MelExtractor{bank: newMelBank()}
	m.hann = hannPeriodic()
	for range max(1, min(runtime.GOMAXPROCS(0), 4)) {
		m.workers = append(m.workers, &melWorker{fft: newRFFT512()})
	}
	return m
}

// hannPeriodic is the periodic Hann window of length 320,
// w[n] = 0.5 - 0.5·cos(2πn/320), computed in float64 and stored as float32
// as the Swift table is.
func hannPeriodic() [frameLength]float32 {
	var w [frameLength]float32
	for n := range w {
		w[n] = float32(0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/frameLength))
	}
	return w
}

// Compute turns 16 kHz mono samples into the encoder input, following the
// Swift runtime's AudioPreprocess.logMel step for step (multimodal.md §2.3):
// pad to a multiple of 128, 160 zeros of left padding, frames of 320
// samples every 160 (the 321-sample unfold minus its last sample), the
// periodic Hann window applied in float32, a float64 512-point FFT
// magnitude, the HTK filterbank, ln(x + 1e-3), and frames whose window
// leaves the real audio zeroed. A clip shorter than MinSamples or longer
// than MaxSamples is refused: split long clips first (Audio.Split).
func (m *MelExtractor) Compute(samples []float32) (*MelInput, error) {
	n := len(samples)
	if n < MinSamples {
		return nil, fmt.Errorf("audio of %d samples (%.1f ms) is too short: the log-mel needs at least %d samples at 16 kHz",
			n, float64(n)*1000/sampleRateHz, MinSamples)
	}
	if n > MaxSamples {
		return nil, fmt.Errorf("audio of %.2f s is longer than the 30 s the audio encoder takes: split it into segments first",
			float64(n)/sampleRateHz)
	}
	padded := roundUp(n, padMultiple)
	wave := make([]float32, padLeft+padded)
	copy(wave[padLeft:], samples)
	frames := melFrameCount(padded)

	in := &MelInput{
		Mel:    make([]uint16, MelFrames*MelBins),
		Mask:   make([]uint16, MelFrames),
		Frames: frames,
		Tokens: SoftTokens(n),
	}
	one := f16.FromF32(1)
	for f := range frames {
		if f*hopLength+frameLength < padLeft+n {
			in.Mask[f] = one
			in.Valid++
		}
	}

	// Frames are independent: split them over the workers.
	var wg sync.WaitGroup
	per := (frames + len(m.workers) - 1) / len(m.workers)
	for i, w := range m.workers {
		lo, hi := i*per, min(frames, (i+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := lo; f < hi; f++ {
				if in.Mask[f] != 0 {
					w.frame(m, wave[f*hopLength:f*hopLength+frameLength], in.Mel[f*MelBins:(f+1)*MelBins])
				}
			}
		}()
	}
	wg.Wait()
	return in, nil
}

// frame writes one frame's 128 fp16 log-mel values.
func (w *melWorker) frame(m *MelExtractor, x []float32, dst []uint16) {
	for i, s := range x {
		// The product is rounded to float32 before widening, as in Swift.
		w.windowed[i] = float64(float32(s * m.hann[i]))
	}
	w.fft.magnitude(w.windowed[:], &w.mag)
	m.bank.apply(&w.mag, &w.mel)
	for j, v := range w.mel {
		dst[j] = f16.FromF32(float32(math.Log(v + melFloor)))
	}
}

// melFrameCount is the number of 321-sample windows, hop 160, over the
// left-padded wave of padded samples, with Swift's truncating division.
func melFrameCount(padded int) int {
	return max(0, (padLeft+padded-unfoldLength)/hopLength+1)
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }
