package media

import (
	"math"
	"runtime"
	"sync"
)

// Resampler design. The filter is a Kaiser-windowed sinc, evaluated as a
// polyphase bank: the output rate over the input rate is reduced to L/M,
// and output sample m sits at input time m·M/L, whose fractional part picks
// one of L phases. The band edges are relative to the lower of the two
// Nyquist frequencies (8 kHz when going down to 16 kHz):
//
//   - passband up to 90 % of it (7.2 kHz), ripple below 0.001 dB;
//   - stopband from 100 % of it (8 kHz), at least 80 dB down, so nothing
//     above the new Nyquist folds back into the spectrum the mel filterbank
//     reads (its top band spans 7.7–8 kHz);
//   - cutoff (-6 dB) half way, at 95 %.
//
// Every phase is normalised to unit DC gain. Rates whose L exceeds
// maxPhases (odd rates such as 44101 Hz) round each output's position to
// the nearest of maxPhases phases, a timing error below 1/(2·maxPhases) of
// an input sample (under -77 dB at 8 kHz).
const (
	resampleStopbandDB = 80
	resamplePassband   = 0.90
	maxPhases          = 4096
)

// resampler converts between two fixed rates. It holds only immutable
// tables, so one resampler may run on several goroutines.
type resampler struct {
	up, down int         // L, M (after dropping common factors)
	phases   int         // filter phases stored: up, or maxPhases
	half     int         // taps on each side of the output position
	bank     [][]float32 // [phase][2·half] weights, oldest input first
}

func newResampler(from, to int) *resampler {
	g := gcd(from, to)
	r := &resampler{up: to / g, down: from / g}
	r.phases = min(r.up, maxPhases)
	nyq := float64(min(from, to)) / 2
	cutoff := (1 + resamplePassband) / 2 * nyq / float64(from) // cycles per input sample
	width := (1 - resamplePassband) * nyq / float64(from)
	// Kaiser's estimates for the length and shape of the window.
	a := float64(resampleStopbandDB)
	beta := 0.1102 * (a - 8.7)
	taps := (a - 7.95) / (2.285 * 2 * math.Pi * width)
	r.half = int(math.Ceil(taps/2)) + 1
	i0beta := besselI0(beta)
	r.bank = make([][]float32, r.phases)
	for p := range r.bank {
		frac := float64(p) / float64(r.phases)
		w := make([]float32, 2*r.half)
		var sum float64
		ws := make([]float64, len(w))
		for j := range w {
			// tau: from input sample base-half+1+j to the output position.
			tau := float64(r.half-1-j) + frac
			x := tau / float64(r.half)
			if x <= -1 || x >= 1 {
				continue
			}
			ws[j] = 2 * cutoff * sinc(2*cutoff*tau) * besselI0(beta*math.Sqrt(1-x*x)) / i0beta
			sum += ws[j]
		}
		for j := range w {
			w[j] = float32(ws[j] / sum)
		}
		r.bank[p] = w
	}
	return r
}

// outLen is the number of output samples for n input samples: those whose
// position m·M/L lies before the end of the input.
func (r *resampler) outLen(n int) int {
	return int((int64(n)*int64(r.up) + int64(r.down) - 1) / int64(r.down))
}

// run resamples x. Samples outside x count as zeros. The work is split over
// up to GOMAXPROCS goroutines by output range.
func (r *resampler) run(x []float32) []float32 {
	out := make([]float32, r.outLen(len(x)))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(out)/65536))
	per := (len(out) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min(len(out), (w+1)*per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.span(x, out, lo, hi)
		}()
	}
	wg.Wait()
	return out
}

func (r *resampler) span(x, out []float32, lo, hi int) {
	n := len(x)
	taps := 2 * r.half
	if r.up == 1 {
		r.spanDecimate(x, out, lo, hi)
		return
	}
	for m := lo; m < hi; m++ {
		pos := int64(m) * int64(r.down)
		base := int(pos / int64(r.up))
		p := int(pos % int64(r.up))
		if r.phases != r.up {
			p = int((int64(p)*int64(r.phases) + int64(r.up)/2) / int64(r.up))
			if p == r.phases {
				p, base = 0, base+1
			}
		}
		w := r.bank[p]
		start := base - r.half + 1
		if start >= 0 && start+taps <= n {
			out[m] = dot(w, x[start:start+taps])
			continue
		}
		var s float32
		for j, v := range w {
			if i := start + j; i >= 0 && i < n {
				s += v * x[i]
			}
		}
		out[m] = s
	}
}

// spanDecimate is span for an integer ratio (48, 32 or 96 kHz to 16 kHz):
// one phase, whose taps are symmetric about the output position, so each
// pair of inputs shares a multiply.
func (r *resampler) spanDecimate(x, out []float32, lo, hi int) {
	w := r.bank[0]
	c := r.half - 1 // w[c] is the centre tap; w[c-k] == w[c+k]
	side := w[:c]   // w[c-1], …, w[0] pair with offsets 1 … c
	for m := lo; m < hi; m++ {
		i := m * r.down
		if i-c < 0 || i+c >= len(x) {
			var s float32
			for j, v := range w {
				if k := i - c + j; k >= 0 && k < len(x) {
					s += v * x[k]
				}
			}
			out[m] = s
			continue
		}
		out[m] = w[c]*x[i] + foldedDot(side, x[i-c:i], x[i+1:i+c+1])
	}
}

// foldedDot is Σ side[j]·(left[j] + right[c-1-j]): left runs up to the
// centre, right away from it.
func foldedDot(side, left, right []float32) float32 {
	c := len(side)
	left, right = left[:c], right[:c]
	var s0, s1 float32
	j := 0
	for ; j+2 <= c; j += 2 {
		s0 += side[j] * (left[j] + right[c-1-j])
		s1 += side[j+1] * (left[j+1] + right[c-2-j])
	}
	for ; j < c; j++ {
		s0 += side[j] * (left[j] + right[c-1-j])
	}
	return s0 + s1
}

// dot is the inner loop, four accumulators wide so the adds pipeline.
func dot(w, x []float32) float32 {
	x = x[:len(w)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(w); i += 4 {
		s0 += w[i] * x[i]
		s1 += w[i+1] * x[i+1]
		s2 += w[i+2] * x[i+2]
		s3 += w[i+3] * x[i+3]
	}
	for ; i < len(w); i++ {
		s0 += w[i] * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the modified Bessel function of the first kind, order 0,
// by its power series (converges quickly for the β used here).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 200 && term > sum*1e-17; k++ {
		term *= (x / 2) * (x / 2) / float64(k*k)
		sum += term
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
