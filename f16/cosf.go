package f16

import "math"

// goCosSinF32 stands in for a correctly rounded cosf/sinf: the float64
// functions (within an ulp of float64) rounded once to float32. That equals
// the correctly rounded float32 result unless the exact value lies within
// a float64 ulp or two of a point halfway between two float32s, which
// TestCosSinF32IsCorrectlyRounded shows never happens for the angles of a
// Gemma 4 RoPE table. On macOS orchard calls libm itself (cosf_darwin.go).
func goCosSinF32(a float32) (float32, float32) {
	s, c := math.Sincos(float64(a))
	return float32(c), float32(s)
}
