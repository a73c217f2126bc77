// Package syncbuf holds a buffer that one goroutine writes while another
// reads it: what a server or a command wrote to its log, stderr or screen,
// as a test waits for a line in it.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer is an io.Writer whose text may be read while it is written.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
