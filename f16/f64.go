package f16

import "math"

// FromF64 rounds f directly to the nearest fp16 (ties to even), overflowing
// to ±inf. Going through float32 first could round twice and differ in the
// last bit from Swift's Float16(Double).
func FromF64(f float64) uint16 {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	exp := int64(b>>52) & 0x7ff
	man := b & (1<<52 - 1)
	if exp == 0x7ff { // inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 1023 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // fp16 subnormal or zero
		if e < -10 {
			return sign
		}
		man |= 1 << 52
		shift := uint64(43 - e)
		half := uint64(1) << (shift - 1)
		r := man >> shift
		rem := man & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint64(e)<<10 | man>>42
	rem := man & (1<<42 - 1)
	const half = 1 << 41
	if rem > half || (rem == half && r&1 == 1) {
		r++ // a carry into the exponent is still correct, up to inf
	}
	return sign | uint16(r)
}

// ToF32FTZ widens fp16 bits, flushing subnormals to signed zero as the
// Swift EmbeddingLookup does for its fp16 row scales.
func ToF32FTZ(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch exp {
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case 0:
		return math.Float32frombits(sign)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}
