package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/regfile"
)

// Request bodies are bounded three ways, so that no client — nor sixteen
// of them streaming a gigabyte each — can run the server out of memory
// (an out-of-memory error is fatal in Go; no recover catches it):
//
//   - each body by maxBody, sized for the largest legitimate request:
//     the longest text the context can hold and two files of the largest
//     size (the config's media limit), base64-encoded;
//   - all of them together by Options.MaxBufferedBytes: a body is counted
//     twice (itself, and the files and text it decodes to) from when it is
//     read until its request is over; past the budget a request is
//     refused with 503 and Retry-After, never queued in memory;
//   - text that cannot fit the context is refused before it is tokenized
//     (checkText), by its length alone.

// DefaultMaxBufferedBytes is the bodies' budget when Options leaves it 0.
const DefaultMaxBufferedBytes = 512 << 20

// filesPerBody is how many files of the largest size one body may carry.
const filesPerBody = 2

// maxBody bounds a request body: two files of the largest size in base64,
// the longest text the context can hold (JSON may escape a byte as six),
// and 1 MiB for the rest of the JSON.
func (s *Server) maxBody() int64 {
	files := filesPerBody * (s.maxMedia() + 2) / 3 * 4
	text := int64(minBodyBytes)
	if s.o.MaxBytesPerToken > 0 && s.info.Context > 0 {
		text = int64(s.info.Context) * int64(s.o.MaxBytesPerToken) * 6
	}
	return files + text + 1<<20
}

// errBuffersFull refuses a request whose body does not fit the budget now.
var errBuffersFull = errors.New("orchard serve is holding as many request bodies as it may at once")

// bodyBudget counts the bytes request bodies hold, all requests together.
type bodyBudget struct {
	mu        sync.Mutex
	used, max int64
}

func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// hold is what one request holds of the budget; it is given back when the
// request is over, or, for a chat turn that outlives its request, when the
// turn is (pass).
type hold struct {
	budget *bodyBudget
	mu     sync.Mutex
	n      int64
	passed bool
}

type holdKey struct{}

// holding gives each request a hold, given back when it is over.
func (s *Server) holding(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := &hold{budget: &s.budget}
		defer h.release()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holdKey{}, h)))
	})
}

func (h *hold) take(n int64) bool {
	if !h.budget.take(n) {
		return false
	}
	h.mu.Lock()
	h.n += n
	h.mu.Unlock()
	return true
}

// release gives the hold back, unless it was passed on.
func (h *hold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.passed {
		h.budget.give(h.n)
		h.n = 0
	}
}

// pass hands the hold to whoever keeps the request's data after it is
// over; they call the function returned when they are done with it.
func (h *hold) pass() func() {
	h.mu.Lock()
	h.passed = true
	n := h.n
	h.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { h.budget.give(n) }) }
}

// holdOf is the request's hold (nil outside holding).
func holdOf(r *http.Request) *hold {
	h, _ := r.Context().Value(holdKey{}).(*hold)
	return h
}

// readBody reads a request body whole within maxBody and the budget: a
// body of known length into a buffer of exactly its size, its place in
// the budget taken (or refused) before any of it is read; one sent in
// chunks as it grows. A client that stops sending holds its place for
// the body timeout at most.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (_ []byte, err error) {
	limit := s.maxBody()
	drain := false // refused for the budget, not for what it is
	defer func() {
		switch {
		case drain:
			// A body within the limit refused for the budget is read to
			// its end and dropped (nothing kept), so that clients that
			// send the whole body before they read the answer (most do)
			// get the refusal and its Retry-After instead of a reset.
			io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, limit))
		case err != nil:
			// Closed early, the connection is shut for writing after the
			// refusal and given a moment before it closes.
			r.Body.Close()
		}
	}()
	if r.ContentLength > limit {
		return nil, s.tooLargeBody(limit)
	}
	h := holdOf(r)
	// Counted twice: the body, and what it decodes to.
	fits := func(n int64) error {
		switch {
		case h == nil:
			return nil
		case 2*n > s.budget.max:
			drain = true
			return s.tooLargeBody(s.budget.max / 2)
		case 2*n > s.budget.max-s.budget.inUse():
			drain = true
			return fmt.Errorf("%w (%s of %s, --buffer-mb); retry in a few seconds", errBuffersFull,
				regfile.Size(s.budget.inUse()), regfile.Size(s.budget.max))
		}
		return nil
	}
	reserve := func(n int64) error {
		if err := fits(n); err != nil || h == nil {
			return err
		}
		if !h.take(2 * n) {
			drain = true
			return fmt.Errorf("%w; retry in a few seconds", errBuffersFull)
		}
		return nil
	}
	want := limit + 1 // sent in chunks: up to the limit, and one byte to tell
	size := min(want, 64<<10)
	if r.ContentLength >= 0 {
		// Taken whole before it is read, so that of many bodies arriving
		// at once those that got in finish (had each taken its part as it
		// came, all could be refused halfway).
		want, size = r.ContentLength, r.ContentLength
	}
	if err := reserve(size); err != nil {
		return nil, err
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) && int64(cap(buf)) < want {
			next := min(2*int64(cap(buf)), want)
			if err := reserve(next - int64(cap(buf))); err != nil {
				return nil, err
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		var n int
		var err error
		if len(buf) < cap(buf) {
			n, err = body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
		} else {
			// All of a body of known length is in: read on to its end,
			// which also clears its read deadline.
			var more [1]byte
			if n, err = body.Read(more[:]); n > 0 {
				err = errors.New("the body is longer than its Content-Length")
			}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, s.bodyError(err, limit)
		}
	}
}

func (s *Server) tooLargeBody(limit int64) error {
	return &badRequest{status: http.StatusRequestEntityTooLarge, code: "request_too_large",
		msg: fmt.Sprintf("the request body is over the %s orchard serve reads (the conversation's text, and files of %s each, %d at most at that size)",
			regfile.Size(limit), regfile.Size(s.maxMedia()), filesPerBody)}
}

// bodyError names what went wrong reading a body.
func (s *Server) bodyError(err error, limit int64) error {
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return s.tooLargeBody(limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &badRequest{status: http.StatusRequestTimeout, code: "request_timeout",
			msg: fmt.Sprintf("the request body stopped arriving for %s; orchard serve closed the connection", s.o.BodyTimeout)}
	}
	return bad("invalid_request", "", "reading the body: "+err.Error())
}

// decodeJSON reads a JSON body into v; a malformed body is a 400, one
// over the limit a 413, one that does not fit the budget now a 503.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return bad("invalid_json", "", "the body is not valid JSON for this endpoint: "+err.Error())
	}
	return nil
}

// checkText refuses text that cannot fit the context, before anything
// tokenizes it: more bytes than the context's tokens (one more for each
// piece, which may end inside a token) times the most bytes one token
// stands for.
func (s *Server) checkText(param string, texts ...string) error {
	per, ctx := int64(s.o.MaxBytesPerToken), int64(s.info.Context)
	if per <= 0 || ctx <= 0 {
		return nil
	}
	var n int64
	for _, t := range texts {
		n += int64(len(t))
	}
	if n <= (ctx+int64(len(texts)))*per {
		return nil
	}
	return bad("context_length_exceeded", param, fmt.Sprintf("the text is %s: more than the context holds (%d tokens, each at most %d bytes of text with this tokenizer); refused before tokenizing",
		regfile.Size(n), ctx, per))
}

// textsOf lists a conversation's texts for checkText.
func textsOf(system string, msgs []engine.Message) []string {
	texts := []string{system}
	for _, m := range msgs {
		texts = append(texts, m.Content)
		for _, r := range m.Responses { // a tool's output (calls' arguments are bounded by the body)
			if t, ok := r.Value.(string); ok {
				texts = append(texts, t)
			}
		}
	}
	return texts
}
