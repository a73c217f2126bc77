package media

import "math/big"

// The mel filterbank is built from log10 and 10^x. Go's math.Log10 and
// math.Pow are not correctly rounded, and one ulp matters there: HF (and
// the Swift tables generated from it) put the last mel point at 8000 Hz
// plus two ulps, which gives FFT bin 256 a weight of 1.08e-14 in mel bin
// 127; Go's float64 functions land four ulps below 8000 and drop it. So the
// table's few dozen values are computed to 256 bits and rounded once.

const exactPrec = 256

func exactFloat(x float64) *big.Float { return new(big.Float).SetPrec(exactPrec).SetFloat64(x) }

// exactLn is ln(x) for x > 0: x = m·2^e with m in [0.5, 1), then
// ln m = 2·atanh((m-1)/(m+1)) by its series, and e·ln 2 likewise.
func exactLn(x *big.Float) *big.Float {
	m := new(big.Float).SetPrec(exactPrec)
	e := x.MantExp(m)
	r := atanh2(new(big.Float).SetPrec(exactPrec).Quo(
		new(big.Float).SetPrec(exactPrec).Sub(m, exactFloat(1)),
		new(big.Float).SetPrec(exactPrec).Add(m, exactFloat(1))))
	ln2 := atanh2(new(big.Float).SetPrec(exactPrec).Quo(exactFloat(1), exactFloat(3)))
	return r.Add(r, ln2.Mul(ln2, exactFloat(float64(e))))
}

// atanh2 is 2·atanh(t) = 2·Σ t^(2k+1)/(2k+1) for |t| ≤ 1/3.
func atanh2(t *big.Float) *big.Float {
	t2 := new(big.Float).SetPrec(exactPrec).Mul(t, t)
	term := new(big.Float).SetPrec(exactPrec).Set(t)
	sum := new(big.Float).SetPrec(exactPrec)
	q := new(big.Float).SetPrec(exactPrec)
	for k := 1; term.Sign() != 0 && term.MantExp(nil) > -2*exactPrec; k += 2 {
		sum.Add(sum, q.Quo(term, exactFloat(float64(k))))
		term.Mul(term, t2)
	}
	return sum.Mul(sum, exactFloat(2))
}

// exactExp is e^x: halve x until it is tiny, sum the series, square back.
func exactExp(x *big.Float) *big.Float {
	if x.Sign() == 0 {
		return exactFloat(1)
	}
	r := new(big.Float).SetPrec(exactPrec).Set(x)
	k := 0
	for r.MantExp(nil) > -10 {
		r.Quo(r, exactFloat(2))
		k++
	}
	sum, term := exactFloat(1), exactFloat(1)
	for n := 1; n < 64; n++ {
		term.Mul(term, r)
		term.Quo(term, exactFloat(float64(n)))
		sum.Add(sum, term)
	}
	for ; k > 0; k-- {
		sum.Mul(sum, sum)
	}
	return sum
}

// log10Exact is log10(x) rounded once to float64.
func log10Exact(x float64) float64 {
	l := exactLn(exactFloat(x))
	f, _ := l.Quo(l, exactLn(exactFloat(10))).Float64()
	return f
}

// pow10Exact is 10^y rounded once to float64.
func pow10Exact(y float64) float64 {
	a := exactLn(exactFloat(10))
	f, _ := exactExp(a.Mul(a, exactFloat(y))).Float64()
	return f
}
