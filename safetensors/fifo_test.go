//go:build unix

package safetensors

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/regfile"
)

// A FIFO, a device or a folder in a weights file's place is refused at
// once: os.Open waited for a FIFO's writer, and `orchard run` hung.
func TestOpenRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, p := range []string{fifo, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { _, err := Open(p); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, regfile.ErrNotRegular) || !strings.Contains(err.Error(), p) {
				t.Errorf("Open(%s): %v", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Open(%s) blocked", p)
		}
	}
}
