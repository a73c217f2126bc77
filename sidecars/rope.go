package sidecars

import (
	"math"

	"github.com/orchard-llm/orchard/f16"
)

// RoPE rows use the duplicated "rotate_half" layout: with half = len(inv),
// cos[i] = cos[i+half] = fp16(cos(inv[i]*p)), and the same for sin. cos and
// sin must hold at least 2*half values. Each bundle family computes the angle
// in its own precision; a bit-exact port reproduces each.

// RopeRowF64 writes position p's row as the r1 runtime does: the angle in
// float64, math.Cos/Sin, then one rounding straight to fp16.
func RopeRowF64(inv []float64, p int, cos, sin []uint16) {
	half := len(inv)
	cos, sin = cos[:2*half], sin[:2*half]
	for i, f := range inv {
		a := f * float64(p)
		c, s := f16.FromF64(math.Cos(a)), f16.FromF64(math.Sin(a))
		cos[i], cos[i+half] = c, c
		sin[i], sin[i+half] = s, s
	}
}

// RopeRowF32 writes position p's row as the v2 runtime does
// (HostInputsV2.write): the angle is a float32 product, cosf and sinf
// give float32 values, each then rounded to fp16. On macOS cosf/sinf are
// libm's, as in the Swift runtime; elsewhere a correctly rounded stand-in.
func RopeRowF32(inv []float64, p int, cos, sin []uint16) {
	half := len(inv)
	cos, sin = cos[:2*half], sin[:2*half]
	for i, f := range inv {
		a := float32(float32(f) * float32(p)) // the explicit conversion keeps the product in float32
		cf, sf := f16.CosSinF32(a)
		c, s := f16.FromF32(cf), f16.FromF32(sf)
		cos[i], cos[i+half] = c, c
		sin[i], sin[i+half] = s, s
	}
}

// RopeTableF32 returns the rows×(2*len(inv)) cos and sin tables of the
// stateful3 .npy files: row r is absolute position r, angles in float32,
// values stored as fp16.
func RopeTableF32(inv []float64, rows int) (cos, sin []uint16) {
	w := 2 * len(inv)
	cos, sin = make([]uint16, rows*w), make([]uint16, rows*w)
	for r := range rows {
		RopeRowF32(inv, r, cos[r*w:(r+1)*w], sin[r*w:(r+1)*w])
	}
	return cos, sin
}
