package sidecars

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/f16"
)

// writeRaw writes a scale or data file byte by byte, independently of WriteInt8.
func writeRaw(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func f32le(vals ...float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func u16le(vals ...uint16) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

func i8(vals ...int8) []byte {
	b := make([]byte, len(vals))
	for i, v := range vals {
		b[i] = byte(v)
	}
	return b
}

// Expected bits below were worked out by hand from the fp16 layout
// (sign, 5-bit exponent biased by 15, 10-bit mantissa).
func TestRowGolden(t *testing.T) {
	tests := []struct {
		name  string
		st    ScaleType
		scale []byte
		mult  float32
		q     []int8
		want  []uint16
	}{
		{
			name: "unit factor", st: ScaleF32, scale: f32le(127), mult: 1,
			q:    []int8{1, -1, 127, -128, 0},
			want: []uint16{0x3C00, 0xBC00, 0x57F0, 0xD800, 0x0000},
		},
		{
			// factor (1+2^-11)/1 is exact: q=1 lands on a tie (to even, 1.0),
			// q=3 is 0.75 ulp above 3 and rounds up.
			name: "single rounding", st: ScaleF32, scale: f32le(127 * (1 + 0x1p-11)), mult: 1,
			q:    []int8{1, 3, -3},
			want: []uint16{0x3C00, 0x4201, 0xC201},
		},
		{
			// 1/127 = 1.00787·2^-7: mantissa 8.06 rounds to 8.
			name: "small factor", st: ScaleF32, scale: f32le(1), mult: 1,
			q:    []int8{1, 127},
			want: []uint16{0x2008, 0x3C00},
		},
		{
			// r1: runtime_scale_sqrt 256 gives mult 16; 63.5/127*16 = 8.
			name: "r1 multiplier", st: ScaleF32, scale: f32le(63.5), mult: SqrtMult(256),
			q:    []int8{3, -1},
			want: []uint16{0x4E00, 0xC800},
		},
		{
			// stateful3: fp16 scale 127.0 (0x57F0), embed_scale 39.25:
			// 78.5 = 1.2265625·2^6, 39.25 = 1.2265625·2^5 (mantissa 232).
			name: "f16 scale", st: ScaleF16, scale: u16le(0x57F0), mult: 39.25,
			q:    []int8{2, -1},
			want: []uint16{0x54E8, 0xD0E8},
		},
		{
			// A subnormal fp16 scale is flushed to zero, so the row is zeros;
			// negative q times +0 is -0.
			name: "f16 subnormal scale flushed", st: ScaleF16, scale: u16le(0x03FF), mult: 16,
			q:    []int8{5, -5, 0},
			want: []uint16{0x0000, 0x8000, 0x0000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dp, sp := filepath.Join(dir, "q.bin"), filepath.Join(dir, "s.bin")
			writeRaw(t, dp, i8(tt.q...))
			writeRaw(t, sp, tt.scale)
			tab, err := OpenInt8(dp, sp, 1, len(tt.q), tt.st, tt.mult)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			got := make([]uint16, len(tt.q))
			if err := tab.Row(0, got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("q=%d: got %#04x, want %#04x", tt.q[i], got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSqrtMult(t *testing.T) {
	if got := SqrtMult(256); got != 16 {
		t.Errorf("SqrtMult(256) = %g", got)
	}
	if got, want := SqrtMult(1536), float32(39.191835884530846); got != want {
		t.Errorf("SqrtMult(1536) = %g, want %g", got, want)
	}
}

// The lookup-table path (wide rows) and the direct path (short slices) must
// agree with the formula element by element.
func TestRowMatchesFormula(t *testing.T) {
	const rows, cols = 7, 600
	r := rand.New(rand.NewPCG(3, 4))
	q := make([]int8, rows*cols)
	for i := range q {
		q[i] = int8(r.IntN(256) - 128)
	}
	scales := []float32{0, 1, 0.37, 12.5, 1e-3, 3e4, 255}
	for _, st := range []ScaleType{ScaleF32, ScaleF16} {
		for _, mult := range []float32{1, SqrtMult(1536), 16} {
			dir := t.TempDir()
			dp, sp := filepath.Join(dir, "q.bin"), filepath.Join(dir, "s.bin")
			if err := WriteInt8(dp, sp, q, scales, st); err != nil {
				t.Fatal(err)
			}
			tab, err := OpenInt8(dp, sp, rows, cols, st, mult)
			if err != nil {
				t.Fatal(err)
			}
			full := make([]uint16, cols)
			part := make([]uint16, 100)
			for row := range rows {
				s := scales[row]
				if st == ScaleF16 {
					s = f16.ToF32FTZ(f16.FromF32(s))
				}
				factor := s / 127 * mult
				if err := tab.Row(row, full); err != nil {
					t.Fatal(err)
				}
				if err := tab.RowSlice(row, 250, 100, part); err != nil {
					t.Fatal(err)
				}
				for i := range cols {
					want := f16.FromF32(float32(q[row*cols+i]) * factor)
					if full[i] != want {
						t.Fatalf("st=%v mult=%g row %d col %d: %#04x, want %#04x", st, mult, row, i, full[i], want)
					}
					if i >= 250 && i < 350 && part[i-250] != want {
						t.Fatalf("slice row %d col %d: %#04x, want %#04x", row, i, part[i-250], want)
					}
				}
			}
			tab.Close()
		}
	}
}

func TestOpenF16(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.bin")
	vals := []uint16{0x3C00, 0x0001, 0xFBFF, 0x1234, 0x8000, 0x7C00}
	if err := WriteF16(p, vals); err != nil {
		t.Fatal(err)
	}
	tab, err := OpenF16(p, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	got := make([]uint16, 3)
	for row := range 2 {
		if err := tab.Row(row, got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != vals[row*3+i] {
				t.Errorf("row %d col %d = %#04x, want %#04x", row, i, v, vals[row*3+i])
			}
		}
	}
	one := make([]uint16, 1)
	if err := tab.RowSlice(1, 2, 1, one); err != nil || one[0] != 0x7C00 {
		t.Errorf("RowSlice(1,2,1) = %#04x, %v", one[0], err)
	}
}

func TestSizeErrors(t *testing.T) {
	dir := t.TempDir()
	dp, sp := filepath.Join(dir, "embed_int8.bin"), filepath.Join(dir, "embed_scale.bin")
	writeRaw(t, dp, make([]byte, 1000))
	writeRaw(t, sp, make([]byte, 16))
	_, err := OpenInt8(dp, sp, 4, 256, ScaleF32, 1)
	var se *SizeError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *SizeError", err)
	}
	if se.Path != dp || se.Want != 1024 || se.Got != 1000 || se.What != "int8" {
		t.Errorf("SizeError = %+v", se)
	}
	if want := "sidecar " + dp + ": size 1000 bytes, want 4×256 = 1024 (int8)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}

	writeRaw(t, dp, make([]byte, 1024))
	_, err = OpenInt8(dp, sp, 4, 256, ScaleF16, 1)
	if !errors.As(err, &se) || se.Path != sp || se.Want != 8 || se.Got != 16 {
		t.Errorf("f16 scale size: %v", err)
	} else if !strings.Contains(err.Error(), "want 4×2 = 8 (f16 scales)") {
		t.Errorf("message %q", err)
	}
	_, err = OpenF16(dp, 4, 256)
	if !errors.As(err, &se) || se.Want != 2048 || !strings.Contains(err.Error(), "4×256×2 = 2048 (fp16)") {
		t.Errorf("f16 table size: %v", err)
	}

	if _, err := OpenInt8(filepath.Join(dir, "missing.bin"), sp, 4, 256, ScaleF32, 1); err == nil ||
		!strings.Contains(err.Error(), "missing.bin") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := OpenInt8(dp, sp, 0, 256, ScaleF32, 1); err == nil {
		t.Error("zero rows accepted")
	}
	writeRaw(t, sp, make([]byte, 0))
	if _, err := OpenInt8(dp, sp, 4, 256, ScaleF32, 1); !errors.As(err, &se) || se.Got != 0 {
		t.Errorf("empty scale file: %v", err)
	}
}

func TestRowErrors(t *testing.T) {
	dir := t.TempDir()
	dp, sp := filepath.Join(dir, "q.bin"), filepath.Join(dir, "s.bin")
	if err := WriteInt8(dp, sp, make([]int8, 8), []float32{1, 2}, ScaleF32); err != nil {
		t.Fatal(err)
	}
	tab, err := OpenInt8(dp, sp, 2, 4, ScaleF32, 1)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]uint16, 4)
	for _, tt := range []struct {
		row, off, n int
		dst         []uint16
	}{
		{-1, 0, 4, dst}, {2, 0, 4, dst}, {0, 0, 4, dst[:3]}, {0, 3, 2, dst}, {0, -1, 1, dst}, {0, 0, -1, dst},
	} {
		if err := tab.RowSlice(tt.row, tt.off, tt.n, tt.dst); err == nil {
			t.Errorf("RowSlice(%d, %d, %d, len %d) accepted", tt.row, tt.off, tt.n, len(tt.dst))
		}
	}
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tab.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := tab.Row(0, dst); err == nil {
		t.Error("Row after Close accepted")
	}
}

func TestRowAllocs(t *testing.T) {
	dir := t.TempDir()
	dp, sp := filepath.Join(dir, "q.bin"), filepath.Join(dir, "s.bin")
	q, s := QuantizeInt8(make([]float32, 4*512), 4, 512)
	if err := WriteInt8(dp, sp, q, s, ScaleF16); err != nil {
		t.Fatal(err)
	}
	tab, err := OpenInt8(dp, sp, 4, 512, ScaleF16, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	dst := make([]uint16, 512)
	if n := testing.AllocsPerRun(100, func() {
		tab.Row(3, dst)
		tab.RowSlice(2, 256, 10, dst)
	}); n != 0 {
		t.Errorf("Row allocates %v times", n)
	}
}
