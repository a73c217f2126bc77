package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimit caps the connections the server holds open at once, over all
// its listeners. At the cap a new connection first closes the keep-alive
// connection idle the longest (as nginx reuses idle keep-alive connections
// when it runs out), so idle clients can never lock the others out; when
// none is idle it waits for one to end or go idle. Without a cap, 1,100
// idle connections at a 1,024-descriptor limit made /health and saves
// time out for everyone.
type connLimit struct {
	mu     sync.Mutex
	cond   *sync.Cond
	max    int
	conns  map[net.Conn]time.Time // open connections; the time they went idle, zero while active
	closed bool
}

func newConnLimit(max int) *connLimit {
	c := &connLimit{max: max, conns: map[net.Conn]time.Time{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// track is the http.Server's ConnState hook.
func (c *connLimit) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateNew, http.StateActive:
		c.conns[conn] = time.Time{}
	case http.StateIdle:
		c.conns[conn] = time.Now()
	case http.StateClosed, http.StateHijacked:
		delete(c.conns, conn)
	}
	c.cond.Broadcast()
}

// room waits until a connection more fits, closing the longest idle one
// if it must; false when the listeners are closing.
func (c *connLimit) room() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.closed && len(c.conns) >= c.max {
		var oldest net.Conn
		var since time.Time
		for conn, idle := range c.conns {
			if !idle.IsZero() && (oldest == nil || idle.Before(since)) {
				oldest, since = conn, idle
			}
		}
		if oldest == nil {
			c.cond.Wait()
			continue
		}
		// Counted out now: its serving goroutine reports it closed later.
		delete(c.conns, oldest)
		oldest.Close()
	}
	return !c.closed
}

func (c *connLimit) close() {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *connLimit) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

// limitedListener accepts a connection only when it fits the limit.
type limitedListener struct {
	net.Listener
	lim *connLimit
}

func (l limitedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !l.lim.room() {
		conn.Close()
		return nil, net.ErrClosed
	}
	return conn, nil
}

// Close wakes an Accept waiting for room, then closes the listener.
func (l limitedListener) Close() error {
	l.lim.close()
	return l.Listener.Close()
}
