package sidecars

import (
	"math"
	"testing"

	"github.com/orchard-llm/orchard/f16"
)

func TestRopeRowGolden(t *testing.T) {
	// inv 0.5 at p=2 is angle 1: cos 1 = 1.0806·2^-1 (mantissa 82.54 -> 83),
	// sin 1 = 1.6829·2^-1 (mantissa 699.33 -> 699). inv 0 gives cos 1, sin 0.
	inv := []float64{0.5, 0}
	for name, f := range map[string]func([]float64, int, []uint16, []uint16){
		"F64": RopeRowF64, "F32": RopeRowF32,
	} {
		cos, sin := make([]uint16, 4), make([]uint16, 4)
		f(inv, 2, cos, sin)
		wantCos := []uint16{0x3853, 0x3C00, 0x3853, 0x3C00}
		wantSin := []uint16{0x3ABB, 0x0000, 0x3ABB, 0x0000}
		for i := range 4 {
			if cos[i] != wantCos[i] || sin[i] != wantSin[i] {
				t.Errorf("%s: [%d] cos %#04x sin %#04x, want %#04x %#04x", name, i, cos[i], sin[i], wantCos[i], wantSin[i])
			}
		}
	}
}

// The two precisions differ where the float32 angle is a poor copy of the
// float64 one; each must follow its own recipe element by element.
func TestRopeRowPrecision(t *testing.T) {
	inv := make([]float64, 128)
	for i := range inv {
		inv[i] = math.Pow(10000, -float64(2*i)/256)
	}
	cos, sin := make([]uint16, 256), make([]uint16, 256)
	differ := 0
	for _, p := range []int{0, 1, 7, 511, 1000, 2047, 8191} {
		RopeRowF64(inv, p, cos, sin)
		c64 := append([]uint16(nil), cos...)
		for i, f := range inv {
			a := f * float64(p)
			if cos[i] != f16.FromF64(math.Cos(a)) || sin[i+128] != f16.FromF64(math.Sin(a)) {
				t.Fatalf("F64 p=%d i=%d", p, i)
			}
		}
		RopeRowF32(inv, p, cos, sin)
		for i, f := range inv {
			a := float64(float32(f) * float32(p))
			if cos[i+128] != f16.FromF32(float32(math.Cos(a))) || sin[i] != f16.FromF32(float32(math.Sin(a))) {
				t.Fatalf("F32 p=%d i=%d", p, i)
			}
			if cos[i] != c64[i] {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("float32 and float64 angles never differed; the test positions are too small")
	}
}

func TestRopeTableF32(t *testing.T) {
	inv := []float64{1, 0.01, 1e-4}
	cos, sin := RopeTableF32(inv, 50)
	if len(cos) != 300 || len(sin) != 300 {
		t.Fatalf("lengths %d, %d", len(cos), len(sin))
	}
	c, s := make([]uint16, 6), make([]uint16, 6)
	for r := range 50 {
		RopeRowF32(inv, r, c, s)
		for i := range 6 {
			if cos[r*6+i] != c[i] || sin[r*6+i] != s[i] {
				t.Fatalf("row %d col %d", r, i)
			}
		}
	}
	if cos[0] != 0x3C00 || sin[0] != 0 {
		t.Errorf("row 0 = %#04x %#04x", cos[0], sin[0])
	}
}

func TestRopeAllocs(t *testing.T) {
	inv := make([]float64, 256)
	for i := range inv {
		inv[i] = 1 / float64(i+1)
	}
	cos, sin := make([]uint16, 512), make([]uint16, 512)
	if n := testing.AllocsPerRun(50, func() {
		RopeRowF64(inv, 1234, cos, sin)
		RopeRowF32(inv, 1234, cos, sin)
	}); n != 0 {
		t.Errorf("RoPE rows allocate %v times", n)
	}
}
