package media

import "math"

// rfft512 is a 512-point real FFT in float64, the precision of the Swift
// runtime's vDSP_fft_zripD: the 512 reals are packed as 256 complex values,
// transformed by an iterative radix-2 FFT and split into the 257 bins of
// the real spectrum. Tables are built once; magnitude allocates nothing.
type rfft512 struct {
	rev   [256]uint8
	tw    [128]complex128 // e^{-2πik/256}
	split [257]complex128 // e^{-2πik/512}
	buf   [256]complex128
}

func newRFFT512() *rfft512 {
	f := &rfft512{}
	for i := range 256 {
		r := 0
		for b := 0; b < 8; b++ {
			r |= (i >> b & 1) << (7 - b)
		}
		f.rev[i] = uint8(r)
	}
	for k := range f.tw {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / 256)
		f.tw[k] = complex(c, s)
	}
	for k := range f.split {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / 512)
		f.split[k] = complex(c, s)
	}
	return f
}

// magnitude writes |X[k]| for k = 0..256 of the real DFT of x, zero-padded
// to 512 (len(x) ≤ 512), with no 1/N scaling: numpy's abs(rfft(x, n=512)).
func (f *rfft512) magnitude(x []float64, mag *[spectrumBins]float64) {
	z := &f.buf
	for n := range 256 {
		var re, im float64
		if 2*n < len(x) {
			re = x[2*n]
		}
		if 2*n+1 < len(x) {
			im = x[2*n+1]
		}
		z[f.rev[n]] = complex(re, im)
	}
	for size := 2; size <= 256; size <<= 1 {
		half, step := size>>1, 256/size
		for start := 0; start < 256; start += size {
			for j := range half {
				t := f.tw[j*step] * z[start+j+half]
				u := z[start+j]
				z[start+j] = u + t
				z[start+j+half] = u - t
			}
		}
	}
	z0 := z[0]
	mag[0] = math.Abs(real(z0) + imag(z0))
	mag[256] = math.Abs(real(z0) - imag(z0))
	for k := 1; k < 256; k++ {
		a, b := z[k], z[256-k]
		bc := complex(real(b), -imag(b))
		even := (a + bc) * 0.5
		odd := (a - bc) * complex(0, -0.5)
		x := even + f.split[k]*odd
		mag[k] = math.Sqrt(real(x)*real(x) + imag(x)*imag(x))
	}
}
