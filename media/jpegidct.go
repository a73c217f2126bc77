package media

import "math"

// scaledIDCT is the k-point inverse DCT (k = 8, 4, 2 or 1) of a block's
// top-left k×k coefficients: the 8-point transform evaluated at the centres
// of k equal groups of pixels, f(n) = Σ_{u<k} C(u)/2·F(u)·cos((2n+1)·s·u·π/16)
// with s = 8/k and C(0) = 1/√2, applied to rows then columns, so
// F(0,0)/8 stays the block's mean at every k.
type scaledIDCT struct {
	k int
	m []float32 // m[n*k+u]
}

func newScaledIDCT(k int) *scaledIDCT {
	t := &scaledIDCT{k: k, m: make([]float32, k*k)}
	s := float64(8 / k)
	for n := range k {
		for u := range k {
			c := 0.5
			if u == 0 {
				c = 0.5 / math.Sqrt2
			}
			t.m[n*k+u] = float32(c * math.Cos(float64(2*n+1)*s*float64(u)*math.Pi/16))
		}
	}
	return t
}

// block writes the k×k pixels of dequantised coefficients coef (k×k,
// row-major) at dst with the given stride, level-shifted by 128.
func (t *scaledIDCT) block(coef []int32, dst []byte, stride int) {
	k := t.k
	// A block with only its DC coefficient is flat: the common case in
	// smooth areas, and the only one at k = 1.
	flat := true
	for _, v := range coef[1:] {
		if v != 0 {
			flat = false
			break
		}
	}
	if flat {
		p := to8(float32(coef[0])/8 + 128)
		for y := range k {
			row := dst[y*stride : y*stride+k]
			for x := range row {
				row[x] = p
			}
		}
		return
	}
	var tmp [64]float32
	m := t.m
	// Rows: tmp[v][n] = Σ_u F[v][u]·m[n][u].
	for v := range k {
		f := coef[v*k : v*k+k]
		zero := true
		for _, c := range f {
			if c != 0 {
				zero = false
				break
			}
		}
		if zero {
			continue
		}
		for n := range k {
			var s float32
			mr := m[n*k : n*k+k]
			for u, c := range f {
				s += float32(c) * mr[u]
			}
			tmp[v*k+n] = s
		}
	}
	// Columns: out[y][n] = Σ_v m[y][v]·tmp[v][n].
	for y := range k {
		mr := m[y*k : y*k+k]
		row := dst[y*stride : y*stride+k]
		for n := range k {
			var s float32
			for v, mv := range mr {
				s += mv * tmp[v*k+n]
			}
			row[n] = to8(s + 128)
		}
	}
}
