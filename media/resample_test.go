package media

import (
	"math"
	"testing"
)

func tone(rate int, freq, amp float64, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return x
}

// toneAmplitude is the amplitude of the component at freq in y[lo:lo+n],
// n a whole number of periods (a single DFT bin, no leakage).
func toneAmplitude(y []float32, rate int, freq float64, lo, n int) float64 {
	var re, im float64
	for i := range n {
		s, c := math.Sincos(2 * math.Pi * freq * float64(lo+i) / float64(rate))
		re += float64(y[lo+i]) * c
		im += float64(y[lo+i]) * s
	}
	return 2 * math.Hypot(re, im) / float64(n)
}

func rms(y []float32) float64 {
	var s float64
	for _, v := range y {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(y)))
}

// TestResamplePassband: a 1 kHz and a 6 kHz tone keep their amplitude
// (within 0.001 dB) through every common rate change to 16 kHz.
func TestResamplePassband(t *testing.T) {
	for _, from := range []int{8000, 11025, 22050, 24000, 32000, 44100, 48000, 96000, 44101} {
		r := newResampler(from, SampleRate)
		for _, f := range []float64{1000, 3000, 6000} {
			if f >= float64(from)/2*resamplePassband {
				continue
			}
			y := r.run(tone(from, f, 0.5, 3*from/2))
			a := toneAmplitude(y, SampleRate, f, SampleRate/4, SampleRate)
			if db := 20 * math.Log10(a/0.5); math.Abs(db) > 0.001 {
				t.Errorf("%d Hz → 16 kHz: %g Hz tone changed by %.5f dB", from, f, db)
			}
		}
		if n := r.outLen(3 * from); n != 3*SampleRate {
			t.Errorf("%d Hz: %d output samples for 3 s", from, n)
		}
		// Every output whose position falls inside the input, no more.
		in := from/2 + 1
		if n, want := r.outLen(in), int(math.Ceil(float64(in)*SampleRate/float64(from))); n != want {
			t.Errorf("%d Hz: %d output samples for %d input samples, want %d", from, n, in, want)
		}
	}
}

// TestResampleStopband: tones above the new Nyquist frequency (8 kHz) are
// attenuated by at least 80 dB instead of folding back into the band.
func TestResampleStopband(t *testing.T) {
	for _, c := range []struct {
		from int
		freq float64
	}{
		{48000, 8000}, {48000, 8100}, {48000, 9000}, {48000, 12000}, {48000, 15000}, {48000, 23000},
		{44100, 8050}, {44100, 10000}, {44100, 20000}, {22050, 8500}, {22050, 11000}, {96000, 40000},
	} {
		y := newResampler(c.from, SampleRate).run(tone(c.from, c.freq, 0.5, 2*c.from))
		mid := y[SampleRate/2 : 3*SampleRate/2] // away from the edges
		if db := 20 * math.Log10(rms(mid)/(0.5/math.Sqrt2)); db > -80 {
			t.Errorf("%d Hz → 16 kHz: %g Hz tone only %.1f dB down", c.from, c.freq, db)
		}
	}
}

// TestResampleUpImages: going up from 8 kHz, a 3 kHz tone keeps its level
// and its image at 5 kHz stays 80 dB down.
func TestResampleUpImages(t *testing.T) {
	y := newResampler(8000, SampleRate).run(tone(8000, 3000, 0.5, 16000))
	if a := toneAmplitude(y, SampleRate, 3000, 8000, 16000); math.Abs(20*math.Log10(a/0.5)) > 0.001 {
		t.Errorf("3 kHz amplitude %g", a)
	}
	if a := toneAmplitude(y, SampleRate, 5000, 8000, 16000); 20*math.Log10(a/0.5) > -80 {
		t.Errorf("5 kHz image at %.1f dB", 20*math.Log10(a/0.5))
	}
}
