package server

import (
	"io"
	"net/http"
	"time"
)

// Deadlines of a connection, when Options leaves them zero. As nginx: a
// request body may pause 60 s between reads (client_body_timeout), a
// keep-alive connection may idle 75 s (keepalive_timeout), and a client
// that takes none of a reply for 60 s is cut off (send_timeout). There is
// no limit on a whole request or reply: a stream lives as long as it
// streams.
const (
	defaultHeaderTimeout = 10 * time.Second
	defaultBodyTimeout   = 60 * time.Second
	defaultIdleTimeout   = 75 * time.Second
	defaultSendTimeout   = 60 * time.Second
)

// deadlines sets each request's deadlines through its
// http.ResponseController: one for each read of the body, cleared once
// it is read (then the connection's reads only watch for the client
// going away), and one for each write, renewed as the reply goes out.
func (s *Server) deadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body != nil && r.Body != http.NoBody {
			rc.SetReadDeadline(time.Now().Add(s.o.BodyTimeout))
			r.Body = &pacedBody{ReadCloser: r.Body, rc: rc, d: s.o.BodyTimeout}
		}
		pw := &pacedWriter{ResponseWriter: w, rc: rc, d: s.o.SendTimeout}
		next.ServeHTTP(pw, r)
		// The rest of the reply goes out after the handler returns.
		rc.SetWriteDeadline(time.Now().Add(s.o.SendTimeout))
	})
}

// pacedBody gives each read of a request body its own deadline: a body
// that keeps coming is read however long it takes, one that stops for
// the timeout is cut off.
type pacedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	d    time.Duration
	done bool
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	b.rc.SetReadDeadline(time.Now().Add(b.d))
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		// Read whole: a read deadline now would end the request when the
		// server's background read (watching for the client going away)
		// hits it, cutting a long stream.
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// pacedWriter renews the write deadline before a reply's writes, so each
// may take the timeout however long the reply pauses between them (a
// long prefill). Renewed at most every quarter of it (and once a second):
// a streamed token costs no timer update.
type pacedWriter struct {
	http.ResponseWriter
	rc  *http.ResponseController
	d   time.Duration
	set time.Time
}

func (w *pacedWriter) renew() {
	if now := time.Now(); now.Sub(w.set) >= min(time.Second, w.d/4) {
		w.set = now
		w.rc.SetWriteDeadline(now.Add(w.d))
	}
}

func (w *pacedWriter) Write(p []byte) (int, error) {
	w.renew()
	return w.ResponseWriter.Write(p)
}

func (w *pacedWriter) WriteHeader(status int) {
	w.renew()
	w.ResponseWriter.WriteHeader(status)
}

// FlushError flushes the reply so far; http.ResponseController finds it.
func (w *pacedWriter) FlushError() error {
	w.renew()
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *pacedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
