package f16

import (
	"math"
	"testing"
)

// TestCosSinF32IsCorrectlyRounded: for every angle of Gemma 4's RoPE tables
// (sliding θ=10⁴ over 256 dims, full θ=10⁶ over 512 with a quarter rotated,
// positions up to 8,192), the float64 cos and sin are never within four
// float64 ulps of a point halfway between two float32s. Rounding them to
// float32 therefore gives the correctly rounded cosf/sinf, the value a
// correctly rounded libm returns — on a Mac, `orchard selftest` checks the
// table against libm itself.
func TestCosSinF32IsCorrectlyRounded(t *testing.T) {
	inv := func(theta float64, d int, partial float64) []float64 {
		half := d / 2
		rot := int(partial * float64(half))
		out := make([]float64, half)
		for j := range rot {
			out[j] = math.Pow(theta, -2*float64(j)/float64(d))
		}
		return out
	}
	tables := [][]float64{inv(1e4, 256, 1), inv(1e6, 512, 0.25)}
	checked, close := 0, 0
	for _, tab := range tables {
		for p := 0; p < 8192; p++ {
			for _, f := range tab {
				a := float32(float32(f) * float32(p))
				s, c := math.Sincos(float64(a))
				for _, v := range []float64{c, s} {
					checked++
					if nearMidpoint(v) {
						close++
						t.Errorf("angle %v (position %d): %v lies within 4 ulps of a float32 rounding midpoint", a, p, v)
					}
				}
			}
		}
	}
	t.Logf("%d values checked, %d ambiguous", checked, close)
}

// nearMidpoint reports whether v is within four float64 ulps of the point
// halfway between the two float32s around it.
func nearMidpoint(v float64) bool {
	f := float32(v)
	if float64(f) == v {
		return false
	}
	lo, hi := f, f
	if float64(f) < v {
		hi = math.Nextafter32(f, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	mid := (float64(lo) + float64(hi)) / 2
	ulp := math.Nextafter(math.Abs(v), math.Inf(1)) - math.Abs(v)
	return math.Abs(v-mid) <= 4*ulp
}

func TestCosSinF32MatchesFloat64Rounding(t *testing.T) {
	for _, a := range []float32{0, 1, -1, 0.5, 3.14159, 100, 2047.5, 1e4} {
		c, s := CosSinF32(a)
		if !LibmCosSinF32 && (c != float32(math.Cos(float64(a))) || s != float32(math.Sin(float64(a)))) {
			t.Errorf("CosSinF32(%v) = %v, %v", a, c, s)
		}
	}
}
