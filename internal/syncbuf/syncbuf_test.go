package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestBuffer: writes from several goroutines while another reads all
// arrive whole (go test -race checks the locking).
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "line %d\n", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}
