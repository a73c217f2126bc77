package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

// An attached screen outlives its server: when the event stream is lost
// (the server restarts, the SSH tunnel drops) the client says so, keeps
// the screen as it is, refuses commands with a sentence, and attaches
// again, waiting longer after each failed attempt. Once back, the screen
// gets the server's conversation and the context it fills.

const (
	firstRetry = 250 * time.Millisecond
	maxRetry   = 5 * time.Second
	// stateWait bounds the wait for a stream's first event, the state.
	stateWait = 15 * time.Second
)

// retryWait is how long to wait before attempt n (from 0) to attach
// again: doubling from firstRetry up to maxRetry.
func retryWait(n int) time.Duration {
	d := firstRetry
	for ; n > 0 && d < maxRetry; n-- {
		d *= 2
	}
	return min(d, maxRetry)
}

// permanentError is a reason the stream will not come back by waiting:
// the key is refused, another model is served, it is not orchard.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

var errNoState = errors.New("the server sent no state in time")

// eventStream is an open event stream past its state.
type eventStream struct {
	body   io.ReadCloser
	rd     *bufio.Reader
	cancel context.CancelCauseFunc
}

func (st *eventStream) close() {
	st.cancel(nil)
	st.body.Close()
}

// dial opens the event stream and reads its first event, the state. The
// stream ends at Close; ctx and stateWait bound only the wait for the
// state.
func (c *Client) dial(ctx context.Context) (*eventStream, wireEvent, error) {
	sctx, cancel := context.WithCancelCause(c.ctx)
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, c.base+"/orchard/v1/events", nil)
	if err != nil {
		cancel(nil)
		return nil, wireEvent{}, err
	}
	c.auth(req)
	req.Header.Set("Accept", "text/event-stream")
	unwatch := context.AfterFunc(ctx, func() { cancel(ctx.Err()) })
	timer := time.AfterFunc(stateWait, func() { cancel(errNoState) })
	st, first, err := c.open(req)
	unwatch()
	timer.Stop()
	if err == nil && sctx.Err() != nil {
		st.body.Close()
		err = sctx.Err()
	}
	if cause := context.Cause(sctx); err != nil && cause != nil {
		err = cause // rather than the request's "context canceled"
	}
	if err != nil {
		cancel(nil)
		return nil, wireEvent{}, err
	}
	st.cancel = cancel
	return st, first, nil
}

// open sends the stream's request and reads the state.
func (c *Client) open(req *http.Request) (*eventStream, wireEvent, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, wireEvent{}, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		err := responseError(resp)
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return nil, wireEvent{}, permanentError{err}
		}
		return nil, wireEvent{}, err
	}
	st := &eventStream{body: resp.Body, rd: bufio.NewReaderSize(resp.Body, 64<<10)}
	first, err := readSSE(st.rd)
	if err == nil && (first.Type != "state" || first.Info == nil || first.Settings == nil) {
		err = permanentError{errors.New("the first event is not the state (is it orchard serve?)")}
	}
	if err != nil {
		resp.Body.Close()
		return nil, wireEvent{}, err
	}
	return st, first, nil
}

// run reads streams until Close, attaching again each time one is lost.
func (c *Client) run(st *eventStream) {
	defer c.box.Close()
	for st != nil {
		err := c.read(st)
		st.close()
		if c.ctx.Err() != nil {
			return
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("it closed the connection")
		}
		st = c.reconnect(err)
	}
}

// reconnect attaches again after the stream was lost for why, saying so
// to the screen before each wait. It returns nil when the client is
// closed, or after saying why it gives up (a permanentError), once the
// client is closed.
func (c *Client) reconnect(why error) *eventStream {
	c.hc.CloseIdleConnections() // the server's old connections are dead
	for n := 0; ; n++ {
		wait := retryWait(n)
		c.mu.Lock()
		c.down, c.line = why, nil
		c.mu.Unlock()
		c.box.Push(engine.Connection{Addr: c.addr, Down: true, Err: why, Retry: wait})
		t := time.NewTimer(wait)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		st, first, err := c.dial(c.ctx)
		if err == nil {
			if err = c.sameModel(first); err == nil {
				c.adopt(first, true)
				return st
			}
			st.close()
		}
		if c.ctx.Err() != nil {
			return nil
		}
		why = err
		var perm permanentError
		if errors.As(err, &perm) {
			c.mu.Lock()
			c.down, c.gaveUp = err, true
			c.mu.Unlock()
			c.box.Push(engine.Connection{Addr: c.addr, Down: true, Err: err})
			<-c.ctx.Done()
			return nil
		}
	}
}

// sameModel refuses a server that now serves another model than the
// one the screen was opened on.
func (c *Client) sameModel(first wireEvent) error {
	i := first.Info.info()
	if i.Name != c.info.Name || i.Family != c.info.Family || i.Context != c.info.Context {
		return permanentError{fmt.Errorf("the server now serves another model (%s, %s, context %d); quit and attach again", i.Name, i.Family, i.Context)}
	}
	return nil
}

// refusal is why a command cannot be sent now: nil while attached.
func (c *Client) refusal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.down == nil:
		return nil
	case c.gaveUp:
		return fmt.Errorf("not connected to the server at %s (%v)", c.addr, c.down)
	}
	return fmt.Errorf("not connected: the server at %s went away and orchard is reconnecting; try again once it is back", c.addr)
}
