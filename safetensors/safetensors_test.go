package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The format, written out by hand: u64le header length, compact JSON header
// padded with spaces to 8 bytes, then the tensors' little-endian bytes.
func TestGoldenBytes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tiny.safetensors")
	w := Create(p)
	w.Add("b", "F32", []int{2}, []float32{1, -2})
	w.Add("a", "F16", []int{1}, []float32{1})
	if err := w.Close(map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	hdr := `{"__metadata__":{"k":"v"},` +
		`"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]},` +
		`"b":{"dtype":"F32","shape":[2],"data_offsets":[2,10]}}` + "   " // 133 + 3 = 136
	want := append([]byte{0x88, 0, 0, 0, 0, 0, 0, 0}, hdr...)
	want = append(want,
		0x00, 0x3C, // a: fp16 1.0
		0x00, 0x00, 0x80, 0x3F, // b[0]: 1.0
		0x00, 0x00, 0x00, 0xC0, // b[1]: -2.0
	)
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("file\n%q\nwant\n%q", got, want)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}

	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Metadata["k"] != "v" || len(f.Metadata) != 1 {
		t.Errorf("metadata %v", f.Metadata)
	}
	if !slices.Equal(f.Names(), []string{"a", "b"}) {
		t.Errorf("names %v", f.Names())
	}
	if i := f.Tensors["b"]; i.DType != "F32" || !slices.Equal(i.Shape, []int{2}) || i.Begin != 2 || i.End != 10 {
		t.Errorf("info %+v", i)
	}
}

func TestRoundTrip(t *testing.T) {
	vals := []float32{0, 1, -2.5, 0.1, 65504, 1e-8, float32(math.Inf(-1)), 3.14159, 1e30, -0.0}
	want := map[string][]float32{
		"F32": vals,
		// fp16: 0.1 -> 0.0999755859375, 1e-8 -> 0 (below half a subnormal),
		// 1e30 overflows, pi -> 3.140625
		"F16": {0, 1, -2.5, 0.0999755859375, 65504, 0, float32(math.Inf(-1)), 3.140625, float32(math.Inf(1)), 0},
		// bf16 keeps 8 significant bits: 0.1 -> 0.10009765625, pi -> 3.140625
		"BF16": {0, 1, -2.5, 0.10009765625, 65536, 1.0011717677116394e-08, float32(math.Inf(-1)), 3.140625, math.Float32frombits(0x714A0000), 0}, // 1e30 = 0x7149F2CA rounds up
	}
	p := filepath.Join(t.TempDir(), "rt.safetensors")
	w := Create(p)
	for dt := range want {
		w.Add("t_"+dt, dt, []int{2, 5}, vals)
	}
	w.Add("scalar", "F32", nil, []float32{7})
	w.Add("empty", "BF16", []int{0, 3}, nil)
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Metadata != nil {
		t.Errorf("metadata %v, want none", f.Metadata)
	}
	for dt, wv := range want {
		got, shape, err := f.Float32("t_" + dt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(shape, []int{2, 5}) {
			t.Errorf("%s shape %v", dt, shape)
		}
		for i := range wv {
			if got[i] != wv[i] {
				t.Errorf("%s[%d] = %g, want %g", dt, i, got[i], wv[i])
			}
		}
	}
	if got, shape, err := f.Float32("scalar"); err != nil || len(shape) != 0 || got[0] != 7 {
		t.Errorf("scalar: %v %v %v", got, shape, err)
	}
	if got, shape, err := f.Float32("empty"); err != nil || len(got) != 0 || !slices.Equal(shape, []int{0, 3}) {
		t.Errorf("empty: %v %v %v", got, shape, err)
	}
	if _, _, err := f.Float32("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing tensor: %v", err)
	}
}

func TestToBF16(t *testing.T) {
	for _, tt := range []struct {
		in   uint32
		want uint16
	}{
		{0x3F800000, 0x3F80},
		{0x3F808000, 0x3F80}, // tie, even below: down
		{0x3F818000, 0x3F82}, // tie, odd below: up
		{0x3F808001, 0x3F81},
		{0x7F7FFFFF, 0x7F80}, // max float32 rounds to inf
		{0x7FC00000, 0x7FC0},
		{0x7F800001, 0x7FC0}, // signalling NaN stays NaN
		{0x80000000, 0x8000},
	} {
		if got := toBF16(math.Float32frombits(tt.in)); got != tt.want {
			t.Errorf("toBF16(%#08x) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

func TestFloat32RejectsOtherDTypes(t *testing.T) {
	p := writeFile(t, `{"x":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}`, 4)
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := f.Float32("x"); err == nil || !strings.Contains(err.Error(), "I32") {
		t.Errorf("I32: %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	dir := t.TempDir()
	for name, add := range map[string]func(*Writer){
		"dtype":    func(w *Writer) { w.Add("x", "F64", []int{1}, []float32{1}) },
		"count":    func(w *Writer) { w.Add("x", "F32", []int{2, 2}, []float32{1}) },
		"twice":    func(w *Writer) { w.Add("x", "F32", nil, []float32{1}); w.Add("x", "F32", nil, []float32{1}) },
		"negative": func(w *Writer) { w.Add("x", "F32", []int{-1}, nil) },
		"reserved": func(w *Writer) { w.Add("__metadata__", "F32", nil, []float32{1}) },
	} {
		p := filepath.Join(dir, name)
		w := Create(p)
		add(w)
		if err := w.Close(nil); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s: file written despite the error", name)
		}
	}
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	if err := Create(filepath.Join(blocker, "dir", "x")).Close(nil); err == nil {
		t.Error("write below a regular file succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("left %d files behind", len(ents))
	}
}

// writeFile assembles a file from a raw header and dataLen zero bytes.
func writeFile(t *testing.T, hdr string, dataLen int) string {
	t.Helper()
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	b = append(b, hdr...)
	b = append(b, make([]byte, dataLen)...)
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name, hdr string
		data      int
		err       string
	}{
		{"not an object", `[1]`, 0, "not a JSON object"},
		{"blank", `   `, 0, "not a JSON object"},
		{"bad json", `{"x":`, 0, "header"},
		{"trailing", `{} {}`, 0, "trailing data"},
		{"duplicate", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4, `"x" appears twice`},
		{"metadata not strings", `{"__metadata__":{"k":1}}`, 0, "__metadata__ must map strings to strings"},
		{"tensor not object", `{"x":3}`, 0, `tensor "x"`},
		{"unknown field", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}}`, 4, `unknown field "extra"`},
		{"no dtype", `{"x":{"shape":[1],"data_offsets":[0,4]}}`, 4, "missing dtype"},
		{"no shape", `{"x":{"dtype":"F32","data_offsets":[0,4]}}`, 4, "missing shape"},
		{"no offsets", `{"x":{"dtype":"F32","shape":[1]}}`, 4, "missing data_offsets"},
		{"three offsets", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, 4, "3 entries, want 2"},
		{"unknown dtype", `{"x":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, 16, `unknown dtype "F128"`},
		{"reversed offsets", `{"x":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, 4, "not an ordered range"},
		{"negative dim", `{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, 0, "negative dimension"},
		{"fractional dim", `{"x":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`, 4, `tensor "x"`},
		{"overflow", `{"x":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,8]}}`, 8, "overflows"},
		{"size mismatch", `{"x":{"dtype":"F16","shape":[3],"data_offsets":[0,4]}}`, 4, "4 bytes for F16 shape [3], want 6"},
		{"gap", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8, `"x" starts at 4, leaving a gap after byte 0`},
		{"overlap", `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8, `"y" [4, 8) overlaps "x"`},
		{"past end", `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4, "cover 8 data bytes, file holds 4"},
		{"extra data", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8, "cover 4 data bytes, file holds 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, tt.hdr, tt.data)
			f, err := Open(p)
			if err == nil {
				f.Close()
				t.Fatalf("accepted, want %q", tt.err)
			}
			if !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %q, want it to name %s and contain %q", err, p, tt.err)
			}
		})
	}
}

func TestBadLength(t *testing.T) {
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"short":     {1, 2, 3},
		"past end":  binary.LittleEndian.AppendUint64(nil, 100),
		"too large": append(binary.LittleEndian.AppendUint64(nil, 1<<40), make([]byte, 16)...),
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		if _, err := Open(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file opened")
	}
}
