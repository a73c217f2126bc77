//go:build !darwin || !cgo

package f16

// LibmCosSinF32 reports whether CosSinF32 is the system's libm cosf/sinf
// (macOS with cgo); here it is the portable Go path.
const LibmCosSinF32 = false

// CosSinF32 returns cos(a) and sin(a) rounded to float32, as a correctly
// rounded cosf/sinf does (see goCosSinF32).
func CosSinF32(a float32) (float32, float32) { return goCosSinF32(a) }

// GoCosSinF32 is the portable path (the same as CosSinF32 here).
func GoCosSinF32(a float32) (float32, float32) { return goCosSinF32(a) }
