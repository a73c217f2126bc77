//go:build darwin && cgo

package f16

/*
#cgo LDFLAGS: -lm
#include <math.h>

static float orchard_cosf(float a) { return cosf(a); }
static float orchard_sinf(float a) { return sinf(a); }
*/
import "C"

// LibmCosSinF32 reports that CosSinF32 is the system's libm cosf/sinf here:
// the very functions the published v2 runtime calls for its RoPE rows.
const LibmCosSinF32 = true

// CosSinF32 returns libm's cosf(a) and sinf(a). On macOS these are the
// functions the Swift runtime's float32 RoPE path calls (HostInputsV2), so
// orchard's v2 RoPE rows match it bit for bit by construction.
func CosSinF32(a float32) (float32, float32) {
	return float32(C.orchard_cosf(C.float(a))), float32(C.orchard_sinf(C.float(a)))
}

// GoCosSinF32 is the portable path, for selftest to compare with libm.
func GoCosSinF32(a float32) (float32, float32) { return goCosSinF32(a) }
