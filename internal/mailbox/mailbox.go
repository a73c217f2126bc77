// Package mailbox hands values from producers that must never block to
// one consumer that may be slow: the engine's events to their reader, a
// screen's engine calls to the goroutine that makes them, a server's
// events to each attached stream.
//
// Semantics:
//   - FIFO: values are taken in the order they were pushed (a value
//     pushed by one goroutine before another's is taken before it).
//   - Unbounded unless a limit is given. Past the limit the box gives up
//     on its reader: it closes, and Push reports false.
//   - Coalescing: with a merge function, a value pushed while the last
//     one is still queued may be merged into it (consecutive deltas
//     become one), so a slow reader costs memory only for the values
//     that cannot merge. A value already taken is never changed.
//   - Close: later pushes are refused (false); what is queued can still
//     be taken. Take and Next report the box open until it is closed, so
//     a reader that waits on Wake only while the box is open never misses
//     the last values.
//   - Wake has room for one signal: a reader takes everything queued
//     after each wake, not one value per wake.
package mailbox

import "sync"

// Box is a mailbox of T. The zero value is not usable; call New.
type Box[T any] struct {
	mu     sync.Mutex
	items  []T
	head   int // items[head:] are queued (Next takes from the front)
	merge  func(last *T, next T) bool
	limit  int
	wake   chan struct{}
	closed bool
}

// New returns an open box. limit bounds the values queued (0: no bound);
// merge, when not nil, may fold next into the last queued value and
// return true, else it returns false and next is queued after it.
func New[T any](limit int, merge func(last *T, next T) bool) *Box[T] {
	return &Box[T]{limit: limit, merge: merge, wake: make(chan struct{}, 1)}
}

// Push queues v without blocking; false when the box is closed, or full
// (which closes it).
func (b *Box[T]) Push(v T) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	if n := len(b.items); n > b.head && b.merge != nil && b.merge(&b.items[n-1], v) {
		b.mu.Unlock()
		return true
	}
	if b.limit > 0 && len(b.items)-b.head >= b.limit {
		b.closed = true
		b.mu.Unlock()
		b.signal()
		return false
	}
	if b.head > 0 && len(b.items) == cap(b.items) {
		// Reuse the room Next left at the front instead of growing.
		n := copy(b.items, b.items[b.head:])
		clear(b.items[n:])
		b.items, b.head = b.items[:n], 0
	}
	b.items = append(b.items, v)
	b.mu.Unlock()
	b.signal()
	return true
}

func (b *Box[T]) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Wake receives a signal after a push or a close; the reader then takes
// what is queued.
func (b *Box[T]) Wake() <-chan struct{} { return b.wake }

// Take returns everything queued (nil when empty) and whether more may
// come (false once the box is closed).
func (b *Box[T]) Take() ([]T, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	items := b.items[b.head:]
	if len(items) == 0 {
		items = nil
	}
	b.items, b.head = nil, 0
	return items, !b.closed
}

// Next returns the first value queued (ok false when none) and whether
// more may come. A reader that hands values on one at a time uses it, so
// the values still queued behind a slow hand-over can go on merging.
func (b *Box[T]) Next() (v T, ok, open bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.head == len(b.items) {
		return v, false, !b.closed
	}
	v = b.items[b.head]
	var zero T
	b.items[b.head] = zero // the box keeps no reference to what it gave
	b.head++
	if b.head == len(b.items) {
		b.items, b.head = b.items[:0], 0
	}
	return v, true, !b.closed
}

// Len is how many values are queued.
func (b *Box[T]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items) - b.head
}

// Close refuses further pushes; what is queued can still be taken.
func (b *Box[T]) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.signal()
}
