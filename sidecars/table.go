// Package sidecars builds the host-side inputs of the chunked Gemma 4 models:
// embedding and per-layer-embedding rows from memory-mapped sidecar tables,
// RoPE rows, additive masks and one-hot write slots. Every per-token function
// writes into caller buffers and does not allocate.
package sidecars

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ScaleType is the element type of a per-row scale file.
type ScaleType uint8

const (
	// ScaleF32 scales are little-endian float32, one per row (r1, v2 bundles).
	ScaleF32 ScaleType = iota
	// ScaleF16 scales are little-endian fp16, one per row (stateful3 bundles).
	// They are widened with subnormals flushed to zero, as the Swift
	// EmbeddingLookup does.
	ScaleF16
)

func (st ScaleType) String() string {
	switch st {
	case ScaleF32:
		return "f32"
	case ScaleF16:
		return "f16"
	}
	return "ScaleType(" + strconv.Itoa(int(st)) + ")"
}

func (st ScaleType) size() int {
	if st == ScaleF16 {
		return 2
	}
	return 4
}

// SizeError reports a sidecar file whose size does not match its declared shape.
type SizeError struct {
	Path string // file as passed to the opener
	What string // element description, e.g. "int8" or "f32 scales"
	Dims []int  // factors of Want, e.g. rows, cols (and element size)
	Want int64
	Got  int64
}

func (e *SizeError) Error() string {
	dims := make([]string, len(e.Dims))
	for i, d := range e.Dims {
		dims[i] = strconv.Itoa(d)
	}
	return fmt.Sprintf("sidecar %s: size %d bytes, want %s = %d (%s)",
		e.Path, e.Got, strings.Join(dims, "×"), e.Want, e.What)
}

type tableKind uint8

const (
	kindInt8 tableKind = iota
	kindF16
)

// Table is one memory-mapped row-major [Rows, Cols] sidecar: int8 values with
// one scale per row, or raw fp16 values.
type Table struct {
	Rows, Cols int

	kind    tableKind
	st      ScaleType
	mult    float32
	data    []byte // int8 or fp16 LE values
	scales  []byte
	release []func() error
}

// OpenInt8 maps an int8 table and its per-row scales. data must hold exactly
// rows*cols bytes and scales rows*4 (ScaleF32) or rows*2 (ScaleF16) bytes.
// mult is the table's runtime multiplier: SqrtMult(runtime_scale_sqrt) for r1,
// 1 for v2, and embed_scale or per_layer_embed_scale for stateful3.
func OpenInt8(dataPath, scalePath string, rows, cols int, st ScaleType, mult float32) (*Table, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("sidecar %s: bad shape %d×%d", dataPath, rows, cols)
	}
	if st != ScaleF32 && st != ScaleF16 {
		return nil, fmt.Errorf("sidecar %s: unknown scale type %v", scalePath, st)
	}
	t := &Table{Rows: rows, Cols: cols, kind: kindInt8, st: st, mult: mult}
	var err error
	if t.data, err = t.mapChecked(dataPath, "int8", rows, cols); err != nil {
		return nil, err
	}
	what := st.String() + " scales"
	if t.scales, err = t.mapChecked(scalePath, what, rows, st.size()); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// OpenF16 maps a raw fp16 table of exactly rows*cols*2 bytes. Rows are copied
// out unchanged, with no multiplier.
func OpenF16(dataPath string, rows, cols int) (*Table, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("sidecar %s: bad shape %d×%d", dataPath, rows, cols)
	}
	t := &Table{Rows: rows, Cols: cols, kind: kindF16, mult: 1}
	var err error
	if t.data, err = t.mapChecked(dataPath, "fp16", rows, cols, 2); err != nil {
		return nil, err
	}
	return t, nil
}

// mapChecked maps path and checks its size is the product of dims.
func (t *Table) mapChecked(path, what string, dims ...int) ([]byte, error) {
	want := int64(1)
	for _, d := range dims {
		if d > 0 && want > math.MaxInt64/int64(d) {
			return nil, fmt.Errorf("sidecar %s: shape %v is too large", path, dims)
		}
		want *= int64(d)
	}
	data, release, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("sidecar %s: %w", path, err)
	}
	if int64(len(data)) != want {
		release()
		return nil, &SizeError{Path: path, What: what, Dims: dims, Want: want, Got: int64(len(data))}
	}
	t.release = append(t.release, release)
	return data, nil
}

// Close unmaps the table. It is safe to call more than once.
func (t *Table) Close() error {
	var errs []error
	for _, r := range t.release {
		errs = append(errs, r())
	}
	t.release, t.data, t.scales = nil, nil, nil
	return errors.Join(errs...)
}

// Row writes row's Cols fp16 values into dst[:Cols].
func (t *Table) Row(row int, dst []uint16) error {
	return t.RowSlice(row, 0, t.Cols, dst)
}

// RowSlice writes the n values of row starting at column off into dst[:n];
// v2 bundles feed each chunk only its layers' part of the PLE row.
func (t *Table) RowSlice(row, off, n int, dst []uint16) error {
	switch {
	case t.data == nil:
		return errors.New("sidecar: table is closed")
	case row < 0 || row >= t.Rows:
		return fmt.Errorf("sidecar: row %d out of range [0,%d)", row, t.Rows)
	case off < 0 || n < 0 || off > t.Cols || n > t.Cols-off:
		return fmt.Errorf("sidecar: columns [%d,%d) out of range [0,%d)", off, off+n, t.Cols)
	case len(dst) < n:
		return fmt.Errorf("sidecar: destination holds %d values, want %d", len(dst), n)
	}
	start := row*t.Cols + off
	if t.kind == kindF16 {
		copyF16(dst[:n], t.data[2*start:2*(start+n)])
		return nil
	}
	dequantRow(dst[:n], t.data[start:start+n], t.rowFactor(row))
	return nil
}
