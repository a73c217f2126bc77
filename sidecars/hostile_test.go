package sidecars

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// npyWith builds a version 1.0 .npy file with the given header dict and
// data bytes (no alignment padding, which the reader does not require).
func npyWith(dict string, data int) []byte {
	b := []byte(npyMagic + "\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	b = append(b, dict...)
	return append(b, make([]byte, data)...)
}

// npyCases are headers a probe used against the reader; they seed
// FuzzNPYHeader too.
var npyCases = []struct {
	what string
	raw  []byte
	want string
}{
	{"shape overflows int64", npyWith("{'descr': '<f2', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 64),
		"too large for any file"},
	{"product wraps to the file size", npyWith(fmt.Sprintf("{'descr': '<f2', 'fortran_order': False, 'shape': (%d, %d), }", uint64(1)<<32, uint64(1)<<31), 0),
		"too large for any file"},
	{"dimension past int", npyWith("{'descr': '<f2', 'fortran_order': False, 'shape': (99999999999999999999999, 1), }", 0), "non-negative integer"},
	{"negative dimension", npyWith("{'descr': '<f2', 'fortran_order': False, 'shape': (-4, 4), }", 0), "non-negative integer"},
	{"header past the end", append([]byte(npyMagic+"\x01\x00\xff\xff"), "{}"...), "runs past the end"},
	{"version 2 header past the end", append([]byte(npyMagic+"\x02\x00\xff\xff\xff\xff"), "{}"...), "runs past the end"},
	{"three dimensions", npyWith("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2, 2), }", 16), "3 dimensions"},
	{"unterminated string", npyWith("{'descr': '<f2", 0), "unterminated string"},
	{"repeated key", npyWith("{'descr': '<f2', 'descr': '<f2', }", 0), "repeats key"},
	{"wrong dtype", npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", 4), "want '<f2'"},
	{"truncated magic", []byte("\x93NUM"), "bad magic"},
}

func TestHostileNPY(t *testing.T) {
	for _, c := range npyCases {
		_, err := parseNPY(c.raw)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
}

// A FIFO or a device in a table's place is refused, not read forever.
func TestMapRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cos_full.npy")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 2)
	go func() { _, err := OpenNPY(fifo); done <- err }()
	go func() { _, err := OpenF16("/dev/zero", 4, 4); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("got %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("opening a special file blocked")
		}
	}
	os.Remove(fifo)
}
