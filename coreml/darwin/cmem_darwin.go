//go:build darwin && cgo

package darwin

/*
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// orchard_alloc returns n zeroed bytes, page-aligned and rounded up to whole
// pages (Core ML reads page-aligned buffers fastest), or NULL.
static void *orchard_alloc(size_t n) {
	size_t page = (size_t)getpagesize();
	size_t size = n == 0 ? page : (n + page - 1) / page * page;
	void *p = NULL;
	if (posix_memalign(&p, page, size) != 0) {
		return NULL;
	}
	memset(p, 0, size);
	return p;
}
*/
import "C"

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"
)

// arena hands out memory outside the Go heap and remembers it, so Predict
// can tell buffers Core ML may point into from Go memory, which it must copy
// first: cgo forbids C code keeping Go pointers, and an MLMultiArray made
// with initWithDataPointer keeps its pointer.
type arena struct {
	mu   sync.Mutex
	live []region // tens to a few hundred entries
}

type region struct {
	base unsafe.Pointer
	size int
}

// alloc returns n zeroed bytes of C memory.
func (a *arena) alloc(n int) (unsafe.Pointer, error) {
	p := C.orchard_alloc(C.size_t(n))
	if p == nil {
		return nil, fmt.Errorf("coreml: cannot allocate %d bytes outside the Go heap", n)
	}
	a.mu.Lock()
	a.live = append(a.live, region{base: p, size: n})
	a.mu.Unlock()
	return p, nil
}

// free returns memory from alloc; other pointers are ignored.
func (a *arena) free(p unsafe.Pointer) {
	a.mu.Lock()
	i := slices.IndexFunc(a.live, func(r region) bool { return r.base == p })
	if i >= 0 {
		a.live = slices.Delete(a.live, i, i+1)
	}
	a.mu.Unlock()
	if i >= 0 {
		C.free(p)
	}
}

// Owns is owns, for the shared Plan (coreml.Owner).
func (a *arena) Owns(b []byte) bool { return a.owns(b) }

// owns reports whether b lies wholly inside memory from alloc.
func (a *arena) owns(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.live {
		if within(b, r) {
			return true
		}
	}
	return false
}

// within reports whether b lies wholly inside r.
func within(b []byte, r region) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(r.base)
	return p >= base && p+uintptr(len(b)) <= base+uintptr(r.size)
}

// bytesAt is the n bytes at C memory p.
func bytesAt(p unsafe.Pointer, n int) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(p), n)
}
