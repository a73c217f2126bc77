package sidecars

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/f16"
)

// QuantizeInt8 quantizes a row-major [rows, cols] float32 table to int8 with
// one float32 scale per row: scale = max|row|, q = round(w*127/scale) with
// ties to even (numpy's round), clamped to ±127. All-zero rows get scale 0.
func QuantizeInt8(rowsF32 []float32, rows, cols int) (q []int8, scales []float32) {
	return QuantizeInt8Scales(rowsF32, rows, cols, ScaleF32)
}

// QuantizeInt8Scales is QuantizeInt8 for a given scale file type. With
// ScaleF16 the scale is rounded to fp16 before quantizing, as the stateful3
// bundle builder does, so the values match the scale that is stored.
func QuantizeInt8Scales(rowsF32 []float32, rows, cols int, st ScaleType) (q []int8, scales []float32) {
	if rows < 0 || cols < 0 || len(rowsF32) != rows*cols {
		panic(fmt.Sprintf("sidecars: QuantizeInt8 of %d values as %d×%d", len(rowsF32), rows, cols))
	}
	q = make([]int8, rows*cols)
	scales = make([]float32, rows)
	for r := range rows {
		row := rowsF32[r*cols : (r+1)*cols]
		var m float32
		for _, w := range row {
			m = max(m, float32(math.Abs(float64(w))))
		}
		if st == ScaleF16 {
			m = f16.Round(m)
		}
		scales[r] = m
		if m == 0 || math.IsInf(float64(m), 0) || math.IsNaN(float64(m)) {
			continue
		}
		out := q[r*cols : (r+1)*cols]
		for i, w := range row {
			v := math.RoundToEven(float64(w * 127 / m))
			out[i] = int8(min(max(v, -127), 127))
		}
	}
	return q, scales
}

// WriteInt8 writes an int8 table and its per-row scales atomically (0600).
func WriteInt8(dataPath, scalePath string, q []int8, scales []float32, st ScaleType) error {
	if len(scales) == 0 || len(q)%len(scales) != 0 {
		return fmt.Errorf("sidecar %s: %d values do not split into %d rows", dataPath, len(q), len(scales))
	}
	if st != ScaleF32 && st != ScaleF16 {
		return fmt.Errorf("sidecar %s: unknown scale type %v", scalePath, st)
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(q))), len(q))
	if err := writeAtomic(dataPath, func(w io.Writer) error {
		_, err := w.Write(raw)
		return err
	}); err != nil {
		return err
	}
	return writeAtomic(scalePath, func(w io.Writer) error {
		var b [4]byte
		for _, s := range scales {
			n := 4
			if st == ScaleF16 {
				binary.LittleEndian.PutUint16(b[:], f16.FromF32(s))
				n = 2
			} else {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(s))
			}
			if _, err := w.Write(b[:n]); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteF16 writes raw little-endian fp16 values atomically (0600).
func WriteF16(path string, vals []uint16) error {
	return writeAtomic(path, func(w io.Writer) error { return writeF16(w, vals) })
}

func writeF16(w io.Writer, vals []uint16) error {
	var b [2]byte
	for _, v := range vals {
		binary.LittleEndian.PutUint16(b[:], v)
		if _, err := w.Write(b[:]); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic streams into a temporary file beside path and renames it
// over path, so readers never map a half-written table.
func writeAtomic(path string, fill func(io.Writer) error) error {
	return atomicfile.WriteFunc(path, fill)
}
