package f16

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFromF64(t *testing.T) {
	tests := []struct {
		in   float64
		want uint16
	}{
		{0, 0x0000},
		{math.Copysign(0, -1), 0x8000},
		{1, 0x3C00},
		{-2, 0xC000},
		{0.5403023058681398, 0x3853}, // cos(1): mantissa 82.54 rounds up
		{65504, 0x7BFF},
		{-65504, 0xFBFF},
		{65519.99, 0x7BFF},
		{65520, 0x7C00}, // tie between 65504 (odd) and 65536: to even, i.e. inf
		{-1e9, 0xFC00},
		{math.Inf(1), 0x7C00},
		{math.Inf(-1), 0xFC00},
		{math.NaN(), 0x7E00},
		{0x1p-14, 0x0400},               // smallest normal
		{0x1p-14 - 0x1p-25, 0x0400},     // 1023.5 subnormal units: tie to even rounds up into the normals
		{0x1p-24, 0x0001},               // smallest subnormal
		{0x1p-25, 0x0000},               // tie between 0 and 1: to even
		{0x1p-25 + 0x1p-40, 0x0001},     // just above the tie
		{0x1.8p-24, 0x0002},             // 1.5 units: tie to even
		{0x1.8p-25, 0x0001},             // 0.75 units
		{0x1p-26, 0x0000},               // below half a unit
		{1e-300, 0x0000},                // float64 far below fp16 range
		{1 + 0x1p-11, 0x3C00},           // tie: to even
		{1 + 0x1p-11 + 0x1p-40, 0x3C01}, // above the tie
		{1 + 3*0x1p-11, 0x3C02},         // tie, odd below: up
		{2047, 0x67FF},
		{2049, 0x6800}, // tie between 2048 and 2050: to even
	}
	for _, tt := range tests {
		if got := FromF64(tt.in); got != tt.want {
			t.Errorf("FromF64(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

// A float64 just above an fp16 tie narrows to a float32 exactly on the tie,
// so going through float32 rounds twice and loses a bit.
func TestFromF64AvoidsDoubleRounding(t *testing.T) {
	x := 1 + 0x1p-11 + 0x1p-40
	if via32 := FromF32(float32(x)); via32 != 0x3C00 {
		t.Fatalf("float32 route gave %#04x, expected the double-rounded 0x3C00", via32)
	}
	if got := FromF64(x); got != 0x3C01 {
		t.Fatalf("FromF64 = %#04x, want 0x3C01", got)
	}
}

// On values a float32 holds exactly the two conversions must agree.
func TestFromF64MatchesF32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		f := math.Float32frombits(r.Uint32())
		got, want := FromF64(float64(f)), FromF32(f)
		if math.IsNaN(float64(f)) {
			got, want = got&0x7e00, want&0x7e00
		}
		if got != want {
			t.Fatalf("FromF64(%g) = %#04x, FromF32 = %#04x", f, got, want)
		}
	}
}

func TestToF32FTZ(t *testing.T) {
	tests := []struct {
		in   uint16
		want float32
	}{
		{0x3C00, 1},
		{0x57F0, 127},
		{0x0400, 0x1p-14},
		{0x0001, 0}, // subnormal flushed
		{0x03FF, 0},
		{0x7BFF, 65504},
		{0x7C00, float32(math.Inf(1))},
	}
	for _, tt := range tests {
		if got := ToF32FTZ(tt.in); got != tt.want {
			t.Errorf("ToF32FTZ(%#04x) = %g, want %g", tt.in, got, tt.want)
		}
	}
	if got := ToF32FTZ(0x8001); math.Float32bits(got) != 0x80000000 {
		t.Errorf("ToF32FTZ(0x8001) = %g, want -0", got)
	}
}
