package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesPrivately(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "f")
	if err := Write(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	dst, _ := os.Stat(filepath.Dir(path))
	if string(got) != "two" || st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Fatalf("%q %v %v", got, st.Mode(), dst.Mode())
	}
}

// TestFailedWriteKeepsOld: a writer that fails half way leaves the old
// file and no temporary file behind.
func TestFailedWriteKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	Write(path, []byte("old"))
	boom := errors.New("disk full")
	err := WriteFunc(path, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	got, _ := os.ReadFile(path)
	ents, _ := os.ReadDir(dir)
	if string(got) != "old" || len(ents) != 1 {
		t.Fatalf("%q, %d entries", got, len(ents))
	}
}
