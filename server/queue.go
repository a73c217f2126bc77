package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errQueueFull is returned when the waiting line is full (HTTP 503).
var errQueueFull = errors.New("the server is busy: too many requests are waiting")

// scheduler lets one generation run at a time. Waiting requests are
// served round-robin by client — a client that sends ten requests at once
// does not make another wait for all ten — and in arrival order within a
// client. At most limit requests wait.
type scheduler struct {
	mu      sync.Mutex
	limit   int
	waiting map[string][]*ticket
	order   []string // clients with waiting tickets, next served first
	running *ticket
	n       int // tickets waiting
	mean    time.Duration
	closed  bool
	now     func() time.Time

	// changed is told the line after each change, outside the lock; seq
	// orders those calls, which may overtake one another.
	changed func(lineState)
	seq     uint64
	dirty   bool
}

// holder says whose a ticket is: the client it is served fairly as, and
// what it is for those watching the line.
type holder struct {
	client   string
	kind     string // "api" or "chat"
	api      string // an API request's: "openai", "ollama"
	endpoint string // its path
	request  string // its id
}

// lineState is the line at one moment.
type lineState struct {
	seq       uint64
	running   *holder // nil: the engine is free
	waiting   int
	chatPlace int // the chat's ticket's place in line (1: next), 0 when none waits
}

type ticket struct {
	holder
	ready   chan struct{}
	gone    chan struct{} // closed when the line is closed before its turn
	granted bool
	start   time.Time
}

func newScheduler(limit int) *scheduler {
	return &scheduler{limit: limit, waiting: map[string][]*ticket{}, now: time.Now, mean: time.Second}
}

// enqueue takes a place in line for h.client: the ticket is granted at
// once when the engine is free, else it waits (wait). It fails with
// errQueueFull when the line is full.
func (q *scheduler) enqueue(h holder) (*ticket, error) {
	q.mu.Lock()
	defer q.unlock()
	client := h.client
	t := &ticket{holder: h, ready: make(chan struct{}), gone: make(chan struct{})}
	if q.closed {
		return nil, errShuttingDown
	}
	if q.running == nil && q.n == 0 {
		q.grant(t)
		return t, nil
	}
	if q.n >= q.limit {
		return nil, errQueueFull
	}
	if len(q.waiting[client]) == 0 {
		q.order = append(q.order, client)
	}
	q.waiting[client] = append(q.waiting[client], t)
	q.n++
	q.dirty = true
	return t, nil
}

// wait blocks until t is granted, or ctx ends (t then leaves the line,
// or is released if it was granted meanwhile). release must follow a
// nil return.
func (q *scheduler) wait(ctx context.Context, t *ticket) error {
	select {
	case <-t.ready:
		return nil
	case <-t.gone:
		return errShuttingDown
	case <-ctx.Done():
	}
	q.mu.Lock()
	if t.granted {
		q.mu.Unlock()
		q.release(t)
		return ctx.Err()
	}
	q.remove(t)
	q.unlock()
	return ctx.Err()
}

// remove takes a waiting ticket out of the line (q.mu held).
func (q *scheduler) remove(t *ticket) bool {
	w := q.waiting[t.client]
	for i, x := range w {
		if x == t {
			q.waiting[t.client] = append(w[:i:i], w[i+1:]...)
			q.n--
			q.dirty = true
			if len(q.waiting[t.client]) == 0 {
				delete(q.waiting, t.client)
				for j, c := range q.order {
					if c == t.client {
						q.order = append(q.order[:j:j], q.order[j+1:]...)
						break
					}
				}
			}
			return true
		}
	}
	return false
}

func (q *scheduler) grant(t *ticket) {
	t.granted, t.start = true, q.now()
	q.running = t
	q.dirty = true
	close(t.ready)
}

// release ends t's turn and starts the next client's.
func (q *scheduler) release(t *ticket) {
	q.mu.Lock()
	defer q.unlock()
	if q.running != t {
		return
	}
	// A running mean of how long a turn holds the engine, for Retry-After.
	q.mean = (3*q.mean + q.now().Sub(t.start)) / 4
	q.running = nil
	q.dirty = true
	if len(q.order) == 0 {
		return
	}
	c := q.order[0]
	q.order = q.order[1:]
	next := q.waiting[c][0]
	q.waiting[c] = q.waiting[c][1:]
	q.n--
	if len(q.waiting[c]) > 0 {
		q.order = append(q.order, c)
	} else {
		delete(q.waiting, c)
	}
	q.grant(next)
}

// retryAfter estimates, in whole seconds, when a place frees up.
func (q *scheduler) retryAfter() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := int(q.mean.Seconds()+0.999) * max(1, q.n)
	return min(max(s, 1), 120)
}

// status reports what runs and how many wait.
func (q *scheduler) status() (running string, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running != nil {
		running = q.running.kind
	}
	return running, q.n
}

// close refuses new tickets and sends the waiting ones away.
func (q *scheduler) close() {
	q.mu.Lock()
	defer q.unlock()
	q.closed = true
	q.dirty = true
	for _, w := range q.waiting {
		for _, t := range w {
			close(t.gone)
		}
	}
	q.waiting, q.order, q.n = map[string][]*ticket{}, nil, 0
}

// unlock releases q.mu and, when the line changed, tells changed.
func (q *scheduler) unlock() {
	if !q.dirty || q.changed == nil {
		q.dirty = false
		q.mu.Unlock()
		return
	}
	q.dirty = false
	q.seq++
	st := lineState{seq: q.seq, waiting: q.n, chatPlace: q.placeOf("chat")}
	if q.running != nil {
		h := q.running.holder
		st.running = &h
	}
	changed := q.changed
	q.mu.Unlock()
	changed(st)
}

// placeOf is the place in line (1: next) of the first waiting ticket of
// a kind, 0 when none waits: the clients are served round-robin in
// order, each its tickets first come, first served (q.mu held).
func (q *scheduler) placeOf(kind string) int {
	for round := 0; ; round++ {
		left := false
		place := 0
		for _, c := range q.order {
			w := q.waiting[c]
			if round < len(w) {
				left = true
				if w[round].kind == kind {
					return q.servedBefore(round) + place + 1
				}
				place++
			}
		}
		if !left {
			return 0
		}
	}
}

// servedBefore counts the tickets served in the rounds before round.
func (q *scheduler) servedBefore(round int) int {
	n := 0
	for _, c := range q.order {
		n += min(len(q.waiting[c]), round)
	}
	return n
}
