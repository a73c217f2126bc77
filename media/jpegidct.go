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
	if k == 4 {
		t.block4((*[16]int32)(coef), (*[16]float32)(t.m), dst, stride)
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

// block4 is block for k = 4 (a 768 px side from a 12-megapixel photo)
// with the loops unrolled.
func (t *scaledIDCT) block4(c *[16]int32, m *[16]float32, dst []byte, stride int) {
	var tmp [16]float32
	for v := 0; v < 16; v += 4 {
		f0, f1, f2, f3 := float32(c[v]), float32(c[v+1]), float32(c[v+2]), float32(c[v+3])
		if f1 == 0 && f2 == 0 && f3 == 0 {
			d := f0 * m[0]
			tmp[v], tmp[v+1], tmp[v+2], tmp[v+3] = d, d, d, d
			continue
		}
		tmp[v] = f0*m[0] + f1*m[1] + f2*m[2] + f3*m[3]
		tmp[v+1] = f0*m[4] + f1*m[5] + f2*m[6] + f3*m[7]
		tmp[v+2] = f0*m[8] + f1*m[9] + f2*m[10] + f3*m[11]
		tmp[v+3] = f0*m[12] + f1*m[13] + f2*m[14] + f3*m[15]
	}
	for y := range 4 {
		a0, a1, a2, a3 := m[4*y], m[4*y+1], m[4*y+2], m[4*y+3]
		row := dst[y*stride : y*stride+4]
		row[0] = to8(a0*tmp[0] + a1*tmp[4] + a2*tmp[8] + a3*tmp[12] + 128)
		row[1] = to8(a0*tmp[1] + a1*tmp[5] + a2*tmp[9] + a3*tmp[13] + 128)
		row[2] = to8(a0*tmp[2] + a1*tmp[6] + a2*tmp[10] + a3*tmp[14] + 128)
		row[3] = to8(a0*tmp[3] + a1*tmp[7] + a2*tmp[11] + a3*tmp[15] + 128)
	}
}
