package media

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchard-llm/orchard/sidecars"
)

// TestWriteNPY checks the exact bytes of small files of each dtype, and
// that the project's reader maps a 2-D fp16 one back.
func TestWriteNPY(t *testing.T) {
	dir := t.TempDir()
	header := func(dict string) []byte {
		pad := 64 - (10+len(dict)+1)%64
		if pad == 64 {
			pad = 0
		}
		h := []byte("\x93NUMPY\x01\x00")
		h = binary.LittleEndian.AppendUint16(h, uint16(len(dict)+pad+1))
		h = append(h, dict...)
		h = append(h, bytes.Repeat([]byte{' '}, pad)...)
		return append(h, '\n')
	}
	for _, c := range []struct {
		name  string
		write func(string) error
		want  []byte
	}{
		{"mask.npy", func(p string) error { return WriteNPYF16(p, []int{1, 3}, []uint16{0x3c00, 0, 0x3c00}) },
			append(header("{'descr': '<f2', 'fortran_order': False, 'shape': (1, 3), }"), 0x00, 0x3c, 0, 0, 0x00, 0x3c)},
		{"v.npy", func(p string) error { return WriteNPYF32(p, []int{2}, []float32{1, -2}) },
			append(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"), 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0)},
		{"ids.npy", func(p string) error { return WriteNPYI32(p, []int{1, 1, 1}, []int32{-1}) },
			append(header("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1, 1), }"), 0xff, 0xff, 0xff, 0xff)},
	} {
		p := filepath.Join(dir, c.name)
		if err := c.write(p); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", c.name, st.Mode())
		}
	}

	// A large fp16 array, read back through sidecars.OpenNPY.
	data := make([]uint16, 300*128)
	for i := range data {
		data[i] = uint16(i * 7)
	}
	p := filepath.Join(dir, "mel.npy")
	if err := WriteNPYF16(p, []int{300, 128}, data); err != nil {
		t.Fatal(err)
	}
	n, err := sidecars.OpenNPY(p)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	row := make([]uint16, 128)
	if err := n.Row(299, row); err != nil || row[5] != data[299*128+5] {
		t.Fatalf("row 299: %v %d", err, row[5])
	}

	if err := WriteNPYF32(filepath.Join(dir, "bad.npy"), []int{2, 2}, []float32{math.Pi}); err == nil {
		t.Error("shape mismatch accepted")
	}
}
