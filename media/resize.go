package media

import (
	"math"
	"runtime"
	"sync"
)

// Resizing: a separable Catmull-Rom (Keys bicubic, a = -0.5) filter,
// widened by the scale factor when shrinking so it also antialiases. That
// is PIL's BICUBIC, which Hugging Face's Gemma 4 image processor resizes
// with, so the pictures the model was trained on went through the same
// kernel; it is also what CoreGraphics' "high" interpolation is reported to
// be (multimodal.md §1.2 step 3). Lanczos would ring more on the hard edges
// of screenshots and text for no gain at these scales.
//
// The weights of each axis are computed once per resize, the horizontal
// pass runs over source rows and the vertical pass over output rows, each
// split across the CPUs, and sources are read a row at a time through a
// loader specialised per image type (no image.Image call per pixel).

// catmullRom is the Keys cubic kernel with a = -0.5.
func catmullRom(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x < 1:
		return (1.5*x-2.5)*x*x + 1
	case x < 2:
		return ((-0.5*x+2.5)*x-4)*x + 2
	}
	return 0
}

// axisWeights are the filter taps of one axis: output i reads n inputs
// from start[i] with weights w[i*n : i*n+n].
type axisWeights struct {
	n     int
	start []int
	w     []float32
}

// newAxisWeights computes PIL-style weights for mapping inLen samples to
// outLen, where one output sample spans scale input samples (scale may
// differ from inLen/outLen for a subsampled chroma plane). Output i is
// centred on input position (i + 0.5)·scale; weights are normalised to sum
// to one, so edges are handled by renormalising rather than padding.
func newAxisWeights(inLen, outLen int, scale float64) axisWeights {
	fs := max(scale, 1)
	support := 2 * fs
	n := min(inLen, 2*int(math.Ceil(support))+1)
	a := axisWeights{n: n, start: make([]int, outLen), w: make([]float32, outLen*n)}
	raw := make([]float64, 2*int(math.Ceil(support))+2)
	for i := range outLen {
		center := (float64(i) + 0.5) * scale
		lo := max(0, int(math.Floor(center-support+0.5)))
		hi := min(inLen, int(math.Floor(center+support+0.5)))
		if hi <= lo { // a centre past the edge: take the nearest sample
			lo = min(max(0, int(center)), inLen-1)
			hi = lo + 1
		}
		var sum float64
		for x := lo; x < hi; x++ {
			raw[x-lo] = catmullRom((float64(x) + 0.5 - center) / fs)
			sum += raw[x-lo]
		}
		st := min(lo, inLen-n)
		a.start[i] = st
		for x := lo; x < hi; x++ {
			a.w[i*n+x-st] = float32(raw[x-lo] / sum)
		}
	}
	return a
}

// rowSource is a picture the resizer reads one row at a time: load fills
// dst with row y's w·ch samples (channels interleaved), on a 0–255 scale.
type rowSource struct {
	w, h, ch int
	load     func(y int, dst []float32)
}

// resize filters src to outW×outH samples per channel (interleaved,
// float32, 0–255 scale, not rounded). scaleX and scaleY are the input
// samples one output sample spans.
func resize(src rowSource, outW, outH int, scaleX, scaleY float64) []float32 {
	wx := newAxisWeights(src.w, outW, scaleX)
	wy := newAxisWeights(src.h, outH, scaleY)
	ch := src.ch
	stride := outW * ch
	mid := make([]float32, src.h*stride)
	workers := runtime.GOMAXPROCS(0)

	// Horizontal pass over the source rows the vertical taps reach.
	first, last := wy.start[0], wy.start[outH-1]+wy.n
	parallelRows(first, last, workers, func(lo, hi int) {
		row := make([]float32, src.w*ch)
		for y := lo; y < hi; y++ {
			src.load(y, row)
			horizontal(row, mid[y*stride:(y+1)*stride], wx, ch)
		}
	})

	// Vertical pass.
	out := make([]float32, outH*stride)
	parallelRows(0, outH, workers, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			dst := out[y*stride : (y+1)*stride]
			ws := wy.w[y*wy.n : (y+1)*wy.n]
			for k, wk := range ws {
				if wk == 0 {
					continue
				}
				srow := mid[(wy.start[y]+k)*stride : (wy.start[y]+k+1)*stride]
				axpy(wk, srow, dst)
			}
		}
	})
	return out
}

// horizontal filters one row of interleaved samples.
func horizontal(row, dst []float32, wx axisWeights, ch int) {
	n := wx.n
	switch ch {
	case 1:
		for i, st := range wx.start {
			dst[i] = dot(wx.w[i*n:i*n+n], row[st:st+n])
		}
	case 3:
		for i, st := range wx.start {
			var r, g, b float32
			src := row[3*st : 3*(st+n)]
			for k, w := range wx.w[i*n : i*n+n] {
				r += w * src[3*k]
				g += w * src[3*k+1]
				b += w * src[3*k+2]
			}
			dst[3*i], dst[3*i+1], dst[3*i+2] = r, g, b
		}
	}
}

// axpy adds a·x to y.
func axpy(a float32, x, y []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// parallelRows runs fn over [lo, hi) split into one contiguous band per
// worker.
func parallelRows(lo, hi, workers int, fn func(lo, hi int)) {
	n := hi - lo
	workers = max(1, min(workers, n/16))
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		a, b := lo+w*per, min(hi, lo+(w+1)*per)
		if a >= b {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(a, b)
		}()
	}
	wg.Wait()
}

// to8 rounds a 0–255 sample to a byte, as an 8-bit bitmap context stores it.
func to8(v float32) byte {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return byte(v + 0.5)
}
