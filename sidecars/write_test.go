package sidecars

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestQuantizeInt8(t *testing.T) {
	// Row 0: scale 2; w*127/2 = 63.5 (tie to even 64), -63.5 (-64),
	// 0.5*127/2 = 31.75 (32), 2 -> 127.
	// Row 1: all zero -> scale 0, q 0.
	// Row 2: 1/254*127 = 0.5 ties to 0; 3/254 -> 1.5 ties to 2.
	w := []float32{
		1, -1, 0.5, 2,
		0, 0, 0, 0,
		1.0 / 254, 3.0 / 254, -1, 0,
	}
	q, s := QuantizeInt8(w, 3, 4)
	wantQ := []int8{64, -64, 32, 127, 0, 0, 0, 0, 0, 2, -127, 0}
	wantS := []float32{2, 0, 1}
	for i := range wantQ {
		if q[i] != wantQ[i] {
			t.Errorf("q[%d] = %d, want %d", i, q[i], wantQ[i])
		}
	}
	for i := range wantS {
		if s[i] != wantS[i] {
			t.Errorf("scale[%d] = %g, want %g", i, s[i], wantS[i])
		}
	}
}

// With fp16 scales the stored scale may be below max|row|; q clamps at ±127.
func TestQuantizeInt8ScalesF16(t *testing.T) {
	// 1.0009765625 = 1+2^-10 is fp16; 1+2^-11 (tie) rounds down to 1.
	w := []float32{1 + 0x1p-11, -(1 + 0x1p-11), 0.5}
	q, s := QuantizeInt8Scales(w, 1, 3, ScaleF16)
	if s[0] != 1 {
		t.Fatalf("scale = %g, want 1", s[0])
	}
	if q[0] != 127 || q[1] != -127 || q[2] != 64 {
		t.Errorf("q = %v, want [127 -127 64]", q)
	}
}

func TestWriteInt8Bytes(t *testing.T) {
	dir := t.TempDir()
	dp, sp := filepath.Join(dir, "q.bin"), filepath.Join(dir, "s.bin")
	if err := WriteInt8(dp, sp, []int8{-128, -1, 0, 127}, []float32{1, 0x1p-24}, ScaleF16); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dp)
	if want := []byte{0x80, 0xFF, 0x00, 0x7F}; !bytes.Equal(got, want) {
		t.Errorf("data = % x, want % x", got, want)
	}
	got, _ = os.ReadFile(sp)
	if want := []byte{0x00, 0x3C, 0x01, 0x00}; !bytes.Equal(got, want) {
		t.Errorf("scales = % x, want % x", got, want)
	}
	if err := WriteInt8(dp, sp, []int8{1}, []float32{1.5}, ScaleF32); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(sp)
	if want := []byte{0x00, 0x00, 0xC0, 0x3F}; !bytes.Equal(got, want) {
		t.Errorf("f32 scales = % x, want % x", got, want)
	}
	fi, err := os.Stat(dp)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("directory holds %d entries, want 2 (temp files left behind?)", len(ents))
	}
	if err := WriteInt8(dp, sp, []int8{1, 2, 3}, []float32{1, 2}, ScaleF32); err == nil {
		t.Error("ragged rows accepted")
	}
	if err := WriteF16(filepath.Join(dp, "below", "a", "file"), []uint16{1}); err == nil {
		t.Error("write below a regular file succeeded")
	}
}
