package sidecars

// Masks are additive fp16: 0 keeps a key slot visible and neg (the fill
// value's fp16 bits, see NegF16) hides it. The stateful3 engine uses
// -65504 (0xFBFF); -inf would also work but NaN never must.

const f16One = 0x3C00

// band sets dst[lo..hi] (inclusive, clipped to dst) to 0 and the rest to neg.
func band(dst []uint16, lo, hi int, neg uint16) {
	lo = max(lo, 0)
	hi = min(hi+1, len(dst)) // exclusive from here on
	if hi <= lo {
		fill(dst, neg)
		return
	}
	fill(dst[:lo], neg)
	fill(dst[lo:hi], 0)
	fill(dst[hi:], neg)
}

func fill(dst []uint16, v uint16) {
	for i := range dst {
		dst[i] = v
	}
}

// window is the first visible slot for query position p under a sliding
// window of sliding keys (0 means full attention).
func window(p, sliding int) int {
	if sliding == 0 {
		return 0
	}
	return p - sliding + 1
}

// MaskRow writes the r1/v2 decode mask for position p over len(dst) slots:
// slot s is visible iff s <= p && (sliding == 0 || p-s < sliding).
func MaskRow(dst []uint16, p, sliding int, neg uint16) {
	band(dst, window(p, sliding), p, neg)
}

// MaskOffset writes the r1 offset-prefill/verify mask [n, ctx] for a block of
// valid real rows starting at position base. Row i (query g = base+i) sees
// slot s iff i < valid && s <= g && s < base+valid &&
// (sliding == 0 || g-s < sliding); padding rows i >= valid are fully masked.
func MaskOffset(dst []uint16, n, ctx, base, valid, sliding int, neg uint16) {
	dst = dst[:n*ctx]
	for i := range n {
		row := dst[i*ctx : (i+1)*ctx]
		if i >= valid {
			fill(row, neg)
			continue
		}
		g := base + i
		band(row, window(g, sliding), min(g, base+valid-1), neg)
	}
}

// MaskPlain writes the r1 plain-prefill mask [n, n]: row i sees column j iff
// j <= i && j < valid && (sliding == 0 || i-j < sliding).
func MaskPlain(dst []uint16, n, valid, sliding int, neg uint16) {
	dst = dst[:n*n]
	for i := range n {
		band(dst[i*n:(i+1)*n], window(i, sliding), min(i, valid-1), neg)
	}
}

// MaskFullRow writes the stateful3 full-attention mask over len(dst) = ctx
// slots: slot i is visible iff i <= min(p, ctx-1).
func MaskFullRow(dst []uint16, p int, neg uint16) {
	band(dst, 0, min(p, len(dst)-1), neg)
}

// MaskSlidingRing writes the stateful3 sliding mask over the W = len(dst)
// ring slots. It is left-aligned: slot s is visible iff s < min(p+1, W),
// because the ring is written from slot 0 and, once full, every slot holds
// one of the last W positions.
func MaskSlidingRing(dst []uint16, p int, neg uint16) {
	band(dst, 0, min(p+1, len(dst))-1, neg)
}

// OneHot writes the [rows, ctx] KV write-slot matrix: row r < valid has fp16
// 1.0 at column base+r and zeros elsewhere; rows r >= valid are all zero.
func OneHot(dst []uint16, base, rows, valid, ctx int) {
	dst = dst[:rows*ctx]
	fill(dst, 0)
	for r := range min(valid, rows) {
		if c := base + r; c >= 0 && c < ctx {
			dst[r*ctx+c] = f16One
		}
	}
}

// RingPos is the sliding-cache slot of position p in a ring of w slots. RoPE
// rows are still chosen by p itself, never by the slot.
func RingPos(p, w int) int {
	r := p % w
	if r < 0 {
		r += w
	}
	return r
}
