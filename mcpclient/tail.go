package mcpclient

import (
	"strings"
	"sync"
)

// Bounds of a server's stderr kept for errors.
const (
	tailKeep  = 8 << 10 // bytes kept of the latest output
	tailLines = 20      // lines an error shows
)

// tail keeps the end of what a server writes to stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailKeep; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Tail is the last lines written, "" for none (or a nil tail).
func (t *tail) Tail() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	s := strings.TrimSpace(string(t.buf))
	t.mu.Unlock()
	lines := strings.Split(s, "\n")
	if len(lines) > tailLines {
		lines = append([]string{"…"}, lines[len(lines)-tailLines:]...)
	}
	return strings.Join(lines, "\n")
}
