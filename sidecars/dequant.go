package sidecars

import (
	"encoding/binary"
	"math"

	"github.com/orchard-llm/orchard/f16"
)

// SqrtMult is the r1 runtime multiplier, Float(sqrt(runtime_scale_sqrt)):
// the square root is taken in float64 and then narrowed.
func SqrtMult(runtimeScaleSqrt float64) float32 {
	return float32(math.Sqrt(runtimeScaleSqrt))
}

// rowFactor is (scale/127)*mult in float32, in that order, as every Swift
// runtime computes it once per row.
func (t *Table) rowFactor(row int) float32 {
	var scale float32
	if t.st == ScaleF16 {
		scale = f16.ToF32FTZ(binary.LittleEndian.Uint16(t.scales[2*row:]))
	} else {
		scale = math.Float32frombits(binary.LittleEndian.Uint32(t.scales[4*row:]))
	}
	f := scale / 127
	if t.mult != 1 {
		f *= t.mult
	}
	return f
}

// lutMin is the width from which a 256-entry lookup table of converted values
// is cheaper than converting every element; the results are identical.
const lutMin = 256

// dequantRow sets dst[i] = fp16(float32(q[i]) * factor), rounding once.
func dequantRow(dst []uint16, q []byte, factor float32) {
	if len(q) >= lutMin {
		var lut [256]uint16
		for b := range lut {
			lut[b] = f16.FromF32(float32(int8(b)) * factor)
		}
		for i, b := range q {
			dst[i] = lut[b]
		}
		return
	}
	for i, b := range q {
		dst[i] = f16.FromF32(float32(int8(b)) * factor)
	}
}

func copyF16(dst []uint16, src []byte) {
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint16(src[2*i:])
	}
}
