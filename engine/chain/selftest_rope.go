package chain

import (
	"fmt"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/f16"
)

// RopeCheck checks v2's RoPE rows (float32 angles, cosf/sinf) against the
// system's libm on macOS, where orchard calls libm itself: the portable Go
// path must give the same fp16 rows at every position, so a Linux run and a
// Mac run of the same bundle feed the graphs the same bits. Elsewhere, and
// for families with other RoPE paths, it is skipped.
func RopeCheck(b *bundle.Bundle) Check {
	return Check{Name: "v2 RoPE rows equal libm cosf/sinf", Run: func() (string, error) {
		switch {
		case b.Family != bundle.V2 || b.V2 == nil:
			return "", Skip{"only v2 computes RoPE with float32 cosf/sinf"}
		case !f16.LibmCosSinF32:
			return "", Skip{"libm's cosf is compared on macOS only"}
		}
		for _, inv := range [][]float64{b.V2.HostIO.InvSlide, b.V2.HostIO.InvFull} {
			for p := range b.Geometry.Context {
				for _, f := range inv {
					a := float32(float32(f) * float32(p))
					lc, ls := f16.CosSinF32(a)
					gc, gs := f16.GoCosSinF32(a)
					if f16.FromF32(lc) != f16.FromF32(gc) || f16.FromF32(ls) != f16.FromF32(gs) {
						return fmt.Sprintf("position %d, angle %v: libm %v/%v, Go %v/%v", p, a, lc, ls, gc, gs), nil
					}
				}
			}
		}
		return "", nil
	}}
}
