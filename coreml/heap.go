package coreml

import (
	"sync"
	"unsafe"
)

// HeapMemory is the backend memory of a runtime that computes in Go memory
// (the reference runtime, test runtimes): the buffers it allocated or
// produced, which it treats as its own the way Core ML treats its arena.
// It lets such runtimes plan calls exactly as the Core ML backend does. A
// recorded buffer that the GC later frees stays recorded; the record only
// steers the copy accounting, never memory safety.
type HeapMemory struct {
	mu    sync.Mutex
	bases map[uintptr]int // start address → length
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
	h.mu.Lock()
	if h.bases == nil {
		h.bases = map[uintptr]int{}
	}
	h.bases[uintptr(unsafe.Pointer(unsafe.SliceData(b)))] = len(b)
	h.mu.Unlock()
}

// Owns reports whether b lies inside a recorded buffer. A buffer seen from
// its start is found at once; a slice into the middle of one needs a scan.
func (h *HeapMemory) Owns(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo, hi := span(b)
	h.mu.Lock()
	defer h.mu.Unlock()
	if n, ok := h.bases[lo]; ok && hi <= lo+uintptr(n) {
		return true
	}
	for base, n := range h.bases {
		if lo >= base && hi <= base+uintptr(n) {
			return true
		}
	}
	return false
}
