package sidecars

import (
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/fuzzing"
)

// FuzzNPY: a .npy file, however damaged, is parsed or refused; never a
// panic, never an allocation beyond a small multiple of the header; and
// an accepted one's every row can be read within the file.
func FuzzNPY(f *testing.F) {
	good := append(npyHeaderV1(3, 4), make([]byte, 24)...)
	seeds := map[string][]byte{"good-3x4": good, "empty-0x8": npyHeaderV1(0, 8)}
	for _, c := range npyCases {
		seeds["probe-"+strings.ReplaceAll(c.what, " ", "-")] = c.raw
	}
	fuzzing.WriteSeeds(f, "FuzzNPY", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var n *NPY
		var err error
		fuzzing.Alloc(t, 256<<10+16*uint64(len(raw)), func() { n, err = parseNPY(raw) })
		if err != nil {
			return
		}
		rows, cols := n.Shape[0], n.Shape[1]
		if int64(rows)*int64(cols)*2 != int64(len(n.data)) {
			t.Fatalf("shape %v over %d data bytes", n.Shape, len(n.data))
		}
		if rows == 0 {
			return // no row to read; cols is then unbounded by the file
		}
		dst := make([]uint16, cols)
		for _, r := range []int{0, rows - 1, rows, -1} {
			err := n.Row(r, dst)
			if (err == nil) != (r >= 0 && r < rows) {
				t.Fatalf("Row(%d) of %d rows: %v", r, rows, err)
			}
		}
	})
}
