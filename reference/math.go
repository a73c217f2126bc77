package reference

import (
	"math"

	"github.com/orchard-llm/orchard/f16"
)

// The decoder's arithmetic. Every row is computed on its own, with loops in
// a fixed order, so a row gives the same bits whether it is fed alone (T=1)
// or inside a batch.

// f16Table widens every fp16 bit pattern; attention reads caches through it.
type f16Table [1 << 16]float32

func newF16Table() *f16Table {
	var t f16Table
	for i := range t {
		t[i] = f16.ToF32(uint16(i))
	}
	return &t
}

// rmsNorm writes x/sqrt(mean(x²)+eps)·w into dst (w nil: no weight, as v_norm).
func rmsNorm(dst, x, w []float32, eps float64) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	inv := float32(1 / math.Sqrt(ss/float64(len(x))+eps))
	for i, v := range x {
		if w != nil {
			dst[i] = v * inv * w[i]
		} else {
			dst[i] = v * inv
		}
	}
}

// linear computes dst = W·x for W row-major [len(dst), len(x)]. Four
// partial sums per row (summed in a fixed order) keep the loop short; every
// caller uses this one function, so rows stay bit-identical across paths.
func linear(dst []float32, w []float32, x []float32) {
	n := len(x)
	n4 := n &^ 3
	for o := range dst {
		row := w[o*n : o*n+n]
		var s0, s1, s2, s3 float32
		for i := 0; i < n4; i += 4 {
			r, xx := row[i:i+4:i+4], x[i:i+4:i+4]
			s0 += r[0] * xx[0]
			s1 += r[1] * xx[1]
			s2 += r[2] * xx[2]
			s3 += r[3] * xx[3]
		}
		for i := n4; i < n; i++ {
			s0 += row[i] * x[i]
		}
		dst[o] = (s0 + s1) + (s2 + s3)
	}
}

// geluTanh is GELU with the tanh approximation.
func geluTanh(x float32) float32 {
	xf := float64(x)
	return float32(0.5 * xf * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(xf+0.044715*xf*xf*xf))))
}

// applyRope rotates one head in place with the duplicated-half tables.
func applyRope(x []float32, cos, sin []float32) {
	half := len(x) / 2
	for i := range half {
		a, b := x[i], x[i+half]
		x[i] = a*cos[i] - b*sin[i]
		x[i+half] = b*cos[i+half] + a*sin[i+half]
	}
}

// roundF16Slice rounds every value to fp16 precision in place.
func roundF16Slice(x []float32) {
	for i, v := range x {
		x[i] = f16.Round(v)
	}
}

// softcapArgmax applies cap·tanh(x/cap), rounds to fp16 as the graphs emit
// logits, and returns the index of the largest value (lowest index on ties).
func softcapArgmax(logits []float32, limit float64) int {
	best := 0
	for i, v := range logits {
		if limit > 0 {
			v = float32(limit * math.Tanh(float64(v)/limit))
		}
		v = f16.Round(v)
		logits[i] = v
		if v > logits[best] {
			best = i
		}
	}
	return best
}
