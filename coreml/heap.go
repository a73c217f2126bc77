package coreml

import (
	"maps"
	"sync"
	"sync/atomic"
)

// HeapMemory is the backend memory of a runtime that computes in Go memory
// (the reference runtime, test runtimes): the buffers it allocated or
// produced, which it treats as its own the way Core ML treats its arena.
// It lets such runtimes plan calls exactly as the Core ML backend does. A
// recorded buffer that the GC later frees stays recorded; the record only
// steers the copy accounting, never memory safety. Lookups take no lock:
// the record is an immutable map replaced whole when a buffer is added,
// which happens while a chain warms up, not per token.
type HeapMemory struct {
	mu    sync.Mutex // serializes writers
	bases atomic.Pointer[map[uintptr]int]
}

// Alloc returns a zeroed tensor in memory the runtime owns.
func (h *HeapMemory) Alloc(shape []int, dt DType) *Tensor {
	t := NewTensor(shape, dt)
	h.Record(t.Data)
	return t
}

// Record marks b as the runtime's memory.
func (h *HeapMemory) Record(b []byte) {
	if len(b) == 0 {
		return
	}
	lo, _ := span(b)
	if m := h.bases.Load(); m != nil && (*m)[lo] >= len(b) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	next := map[uintptr]int{}
	if m := h.bases.Load(); m != nil {
		next = maps.Clone(*m)
	}
	next[lo] = max(next[lo], len(b))
	h.bases.Store(&next)
}

// Owns reports whether b lies inside a recorded buffer. A buffer seen from
// its start is found at once; a slice into the middle of one needs a scan.
func (h *HeapMemory) Owns(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	m := h.bases.Load()
	if m == nil {
		return false
	}
	lo, hi := span(b)
	if n, ok := (*m)[lo]; ok && hi <= lo+uintptr(n) {
		return true
	}
	for base, n := range *m {
		if lo >= base && hi <= base+uintptr(n) {
			return true
		}
	}
	return false
}
