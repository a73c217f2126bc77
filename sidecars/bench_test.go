package sidecars

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// benchTable writes a synthetic rows×cols int8 table into b.TempDir.
func benchTable(b *testing.B, rows, cols int, st ScaleType, mult float32) *Table {
	b.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	q := make([]int8, rows*cols)
	for i := range q {
		q[i] = int8(r.IntN(255) - 127)
	}
	s := make([]float32, rows)
	for i := range s {
		s[i] = 0.01 + r.Float32()
	}
	dir := b.TempDir()
	dp, sp := filepath.Join(dir, "q.bin"), filepath.Join(dir, "s.bin")
	if err := WriteInt8(dp, sp, q, s, st); err != nil {
		b.Fatal(err)
	}
	t, err := OpenInt8(dp, sp, rows, cols, st, mult)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { t.Close() })
	return t
}

func BenchmarkRow(b *testing.B) {
	for _, c := range []struct {
		name string
		cols int
		st   ScaleType
		mult float32
	}{
		{"E2B/embed1536/r1", 1536, ScaleF32, SqrtMult(1536)},
		{"E2B/ple8960/stateful3", 8960, ScaleF16, 16},
		{"E4B/embed2560/v2", 2560, ScaleF32, 1},
		{"E4B/ple10752/v2", 10752, ScaleF32, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			const rows = 64
			t := benchTable(b, rows, c.cols, c.st, c.mult)
			dst := make([]uint16, c.cols)
			b.SetBytes(int64(c.cols) * 2)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := t.Row(i%rows, dst); err != nil {
					b.Fatal(err)
				}
				i += 7
			}
		})
	}
}

// BenchmarkRowSlice is one v2 chunk's per-layer slice of a PLE row.
func BenchmarkRowSlice(b *testing.B) {
	t := benchTable(b, 64, 10752, ScaleF32, 1)
	const n = 14 * 256
	dst := make([]uint16, n)
	b.SetBytes(n * 2)
	b.ReportAllocs()
	for b.Loop() {
		t.RowSlice(9, 12*256, n, dst)
	}
}

func BenchmarkRope(b *testing.B) {
	for _, half := range []int{128, 256} {
		inv := make([]float64, half)
		for i := range inv {
			inv[i] = math.Pow(10000, -float64(2*i)/float64(2*half))
		}
		cos, sin := make([]uint16, 2*half), make([]uint16, 2*half)
		for name, f := range map[string]func([]float64, int, []uint16, []uint16){"F64": RopeRowF64, "F32": RopeRowF32} {
			b.Run(fmt.Sprintf("%s/width%d", name, 2*half), func(b *testing.B) {
				b.SetBytes(int64(8 * half))
				b.ReportAllocs()
				p := 0
				for b.Loop() {
					f(inv, p%2048, cos, sin)
					p++
				}
			})
		}
	}
}

func BenchmarkMask(b *testing.B) {
	const ctx, w = 2048, 512
	row, ring, blk := make([]uint16, ctx), make([]uint16, w), make([]uint16, 8*ctx)
	bench := func(name string, bytes int, f func(p int)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(bytes) * 2)
			b.ReportAllocs()
			p := 0
			for b.Loop() {
				f(p % ctx)
				p++
			}
		})
	}
	bench("Row/ctx2048", ctx, func(p int) { MaskRow(row, p, 512, neg) })
	bench("FullRow/ctx2048", ctx, func(p int) { MaskFullRow(row, p, neg) })
	bench("SlidingRing/w512", w, func(p int) { MaskSlidingRing(ring, p, neg) })
	bench("Offset/8x2048", 8*ctx, func(p int) { MaskOffset(blk, 8, ctx, min(p, ctx-8), 8, 512, neg) })
	bench("OneHot/8x2048", 8*ctx, func(p int) { OneHot(blk, min(p, ctx-8), 8, 8, ctx) })
}
