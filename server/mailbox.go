package server

import (
	"sync"

	"github.com/orchard-llm/orchard/engine"
)

// mailbox hands values from a producer that must never block (the engine
// goroutine, the event pump) to one reader. Consecutive deltas merge, so
// a slow reader costs memory only for the other events; past limit the
// mailbox gives up on the reader (push returns false).
type mailbox[T any] struct {
	mu     sync.Mutex
	items  []T
	merge  func(last *T, next T) bool // nil: never merge
	limit  int
	wake   chan struct{}
	closed bool
}

func newMailbox[T any](limit int, merge func(last *T, next T) bool) *mailbox[T] {
	return &mailbox[T]{limit: limit, merge: merge, wake: make(chan struct{}, 1)}
}

// push queues v; false when the mailbox is closed or full.
func (m *mailbox[T]) push(v T) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	if n := len(m.items); n > 0 && m.merge != nil && m.merge(&m.items[n-1], v) {
		m.mu.Unlock()
		return true
	}
	if m.limit > 0 && len(m.items) >= m.limit {
		m.closed = true
		m.mu.Unlock()
		m.signal()
		return false
	}
	m.items = append(m.items, v)
	m.mu.Unlock()
	m.signal()
	return true
}

func (m *mailbox[T]) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// take returns what is queued (nil when empty) and whether more may
// come: false once the mailbox is closed, so a reader that waits for the
// next wake only while it is open never misses the last values (a close
// right after a push wakes it once).
func (m *mailbox[T]) take() ([]T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.items
	m.items = nil
	return items, !m.closed
}

// close stops further pushes; queued values can still be taken.
func (m *mailbox[T]) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.signal()
}

// mergeDelta merges consecutive engine deltas, as the engine does.
func mergeDelta(last *engine.Event, next engine.Event) bool {
	d, ok := next.(*engine.Delta)
	if !ok {
		return false
	}
	tail, ok := (*last).(*engine.Delta)
	if !ok {
		return false
	}
	*last = d.After(tail)
	return true
}

// mergeWireDelta merges consecutive stream deltas of the same source.
func mergeWireDelta(last *wireEvent, next wireEvent) bool {
	if next.Type != "delta" || last.Type != "delta" || last.Request != next.Request {
		return false
	}
	last.Text += next.Text
	last.Tokens = append(last.Tokens[:len(last.Tokens):len(last.Tokens)], next.Tokens...)
	last.FromDraft = append(last.FromDraft[:len(last.FromDraft):len(last.FromDraft)], next.FromDraft...)
	last.Live = next.Live
	return true
}
