package media

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/orchard-llm/orchard/f16"
)

// TestHannPeriodic checks the window against the values quoted in
// multimodal.md §2.3 (the symmetric N-1 form gives 9.698e-05 at n=1).
func TestHannPeriodic(t *testing.T) {
	w := hannPeriodic()
	for _, c := range []struct {
		n    int
		want float32
	}{{0, 0}, {1, 9.63797575e-05}, {80, 0.5}, {160, 1}, {240, 0.5}, {319, 9.63797575e-05}} {
		if w[c.n] != c.want {
			t.Errorf("hann[%d] = %.9g, want %.9g", c.n, w[c.n], c.want)
		}
	}
}

// TestMelBankQuotedValues checks the filterbank against the Swift table
// values quoted in multimodal.md §2.3, to full printed precision.
func TestMelBankQuotedValues(t *testing.T) {
	b := newMelBank()
	if b.weight0[1] != 0.7660076749659691 {
		t.Errorf("filterValue0[1] = %.17g, want 0.7660076749659691", b.weight0[1])
	}
	if b.weight0[8] != 0.3696272924271083 {
		t.Errorf("filterValue0[8] = %.17g, want 0.3696272924271083", b.weight0[8])
	}
	if b.weight0[256] != 1.0807754552086897e-14 || b.first[256] != 127 {
		t.Errorf("bin 256: column %d weight %.17g, want 127 and 1.0807754552086897e-14", b.first[256], b.weight0[256])
	}
	wantTail := []int{124, 125, 125, 125, 125, 125, 126, 126, 126, 126, 126, 127, 127, 127, 127, 127, 127}
	for i, want := range wantTail {
		if k := 240 + i; b.first[k] != want {
			t.Errorf("firstColumn[%d] = %d, want %d", k, b.first[k], want)
		}
	}
	for k := 251; k <= 256; k++ {
		if b.weight1[k] != 0 {
			t.Errorf("filterValue1[%d] = %g, want 0", k, b.weight1[k])
		}
	}
	if b.first[0] != -1 {
		t.Errorf("bin 0 feeds column %d, want none", b.first[0])
	}
	// Every bin with a pair of triangles splits its weight 1 between them.
	for k := 2; k < 240; k++ {
		if s := b.weight0[k] + b.weight1[k]; math.Abs(s-1) > 1e-12 {
			t.Errorf("bin %d weights sum to %g", k, s)
		}
	}
}

// refLogMel computes the encoder input independently, straight from the
// formulas of multimodal.md §2.3: a direct DFT instead of the FFT, a dense
// filterbank from math.Log10/math.Pow, the window from its formula.
func refLogMel(samples []float32) (mel [][]float32, valid []bool) {
	n := len(samples)
	padded := (n + 127) / 128 * 128
	wave := make([]float64, 160+padded)
	for i, s := range samples {
		wave[160+i] = float64(s)
	}
	frames := (len(wave)-321)/160 + 1
	melMax := 2595 * math.Log10(1+8000.0/700)
	hz := func(i int) float64 { return 700 * (math.Pow(10, melMax*float64(i)/129/2595) - 1) }
	for f := range frames {
		base := f * 160
		ok := base+320 < 160+n
		valid = append(valid, ok)
		row := make([]float32, 128)
		mel = append(mel, row)
		if !ok {
			continue
		}
		var x [320]float64
		for i := range x {
			h := float32(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/320))
			x[i] = float64(float32(wave[base+i]) * h)
		}
		for j := range 128 {
			lo, c, hi := hz(j), hz(j+1), hz(j+2)
			var sum float64
			for k := range 257 {
				fk := float64(k) * 8000 / 256
				w := math.Max(0, math.Min((fk-lo)/(c-lo), (hi-fk)/(hi-c)))
				if w == 0 {
					continue
				}
				var re, im float64
				for i, v := range x {
					s, co := math.Sincos(-2 * math.Pi * float64(k*i%512) / 512)
					re += v * co
					im += v * s
				}
				sum += math.Hypot(re, im) * w
			}
			row[j] = float32(math.Log(sum + 1e-3))
		}
	}
	return mel, valid
}

func testClip(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	s := make([]float32, n)
	for i := range s {
		t := float64(i) / 16000
		s[i] = float32(0.4*math.Sin(2*math.Pi*440*t) + 0.2*math.Sin(2*math.Pi*3100*t) + 0.1*(r.Float64()*2-1))
	}
	return s
}

// TestLogMelMatchesFormulas compares every value of the fp16 input with the
// independent reference (within one fp16 step: the FFT and the direct DFT
// round differently), and the mask and zero padding exactly.
func TestLogMelMatchesFormulas(t *testing.T) {
	m := NewMelExtractor()
	for _, n := range []int{129, 161, 1413, 2050, 4000, 4001} {
		samples := testClip(n, uint64(n))
		in, err := m.Compute(samples)
		if err != nil {
			t.Fatal(err)
		}
		ref, valid := refLogMel(samples)
		if in.Frames != len(ref) {
			t.Fatalf("n=%d: %d frames, reference %d", n, in.Frames, len(ref))
		}
		nValid := 0
		for f := range MelFrames {
			wantMask := f < len(valid) && valid[f]
			if wantMask {
				nValid++
			}
			if got := in.Mask[f] == f16.FromF32(1); got != wantMask || (!got && in.Mask[f] != 0) {
				t.Fatalf("n=%d frame %d: mask %#04x, want valid=%v", n, f, in.Mask[f], wantMask)
			}
			for j := range MelBins {
				got := in.Mel[f*MelBins+j]
				if !wantMask {
					if got != 0 {
						t.Fatalf("n=%d frame %d bin %d: %#04x in an invalid frame, want 0", n, f, j, got)
					}
					continue
				}
				want := f16.FromF32(ref[f][j])
				if d := int(got) - int(want); d < -1 || d > 1 {
					t.Fatalf("n=%d frame %d bin %d: %g, reference %g", n, f, j, f16.ToF32(got), ref[f][j])
				}
			}
		}
		if in.Valid != nValid {
			t.Errorf("n=%d: Valid = %d, want %d", n, in.Valid, nValid)
		}
	}
}

// TestLogMelSilenceIsFloor: silence gives ln(1e-3) in every valid bin.
func TestLogMelSilenceIsFloor(t *testing.T) {
	in, err := NewMelExtractor().Compute(make([]float32, 16000))
	if err != nil {
		t.Fatal(err)
	}
	want := f16.FromF32(float32(math.Log(1e-3)))
	for f := range in.Frames {
		for j := range MelBins {
			if got := in.Mel[f*MelBins+j]; got != want {
				t.Fatalf("frame %d bin %d = %g, want ln(1e-3)", f, j, f16.ToF32(got))
			}
		}
	}
}

// TestMelGeometry: frame and token counts of multimodal.md §2.5, and the
// tiny-clip and 30 s edges.
func TestMelGeometry(t *testing.T) {
	m := NewMelExtractor()
	for _, c := range []struct {
		n, frames, valid, tokens int
		err                      bool
	}{
		{n: 0, err: true},
		{n: 1, err: true},
		{n: 128, err: true},                          // Swift reads past its buffer here
		{n: 129, frames: 1, valid: 0, tokens: 1},     // one window, none of it past the audio
		{n: 160, frames: 1, valid: 0, tokens: 1},     //
		{n: 161, frames: 1, valid: 1, tokens: 1},     // first valid frame
		{n: 8000, frames: 50, valid: 49, tokens: 13}, // 0.5 s: the 128-padding adds an invalid frame
		{n: 16000, frames: 99, valid: 99, tokens: 25},
		{n: 16001, frames: 100, valid: 100, tokens: 25},
		{n: 479999, frames: 2999, valid: 2999, tokens: 750},
		{n: 480000, frames: 2999, valid: 2999, tokens: 750}, // 30 s
		{n: 480001, err: true},                              // never truncated
	} {
		in, err := m.Compute(make([]float32, c.n))
		if c.err {
			if err == nil {
				t.Errorf("n=%d: no error", c.n)
			}
			continue
		}
		if err != nil {
			t.Fatalf("n=%d: %v", c.n, err)
		}
		if in.Frames != c.frames || in.Valid != c.valid || in.Tokens != c.tokens {
			t.Errorf("n=%d: frames %d valid %d tokens %d, want %d %d %d",
				c.n, in.Frames, in.Valid, in.Tokens, c.frames, c.valid, c.tokens)
		}
		if len(in.Mel) != 3000*128 || len(in.Mask) != 3000 {
			t.Errorf("n=%d: shapes %d, %d", c.n, len(in.Mel), len(in.Mask))
		}
	}
}

// TestSoftTokens checks the Swift count, computed here independently, and
// the examples of multimodal.md §2.5 where it exceeds HF's by one.
func TestSoftTokens(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{16000, 25}, {8000, 13}, {480000, 750}, {1413, 3}, {2050, 4}, {128, 0}, {129, 1}, {999999, 750},
	} {
		if got := SoftTokens(c.n); got != c.want {
			t.Errorf("SoftTokens(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for n := MinSamples; n <= MaxSamples; n += 997 {
		padded := int(math.Ceil(float64(n)/128)) * 128
		frames := int(math.Floor(float64(padded+160-321)/160)) + 1
		tok := frames
		for range 2 {
			tok = int(math.Floor(float64(tok-1)/2)) + 1
		}
		if got := SoftTokens(n); got != tok {
			t.Fatalf("SoftTokens(%d) = %d, want %d", n, got, tok)
		}
	}
}
