package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawConn is a client connection a test drives byte by byte.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, ts *testServer) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, br: bufio.NewReader(c)}
}

func (c *rawConn) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// response reads one response, its body whole.
func (c *rawConn) response(t *testing.T) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// closedWithin reports whether the server closes the connection within d.
func (c *rawConn) closedWithin(d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := c.br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

const healthReq = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

// TestIdleConnectionClosed: a keep-alive connection left idle is closed
// after the idle timeout.
func TestIdleConnectionClosed(t *testing.T) {
	ts := startServer(t, serverOpts{idle: 300 * time.Millisecond})
	c := dial(t, ts)
	c.send(t, healthReq)
	if resp, _ := c.response(t); resp.StatusCode != 200 || resp.Close {
		t.Fatalf("health: %d, close %v", resp.StatusCode, resp.Close)
	}
	t0 := time.Now()
	if !c.closedWithin(5 * time.Second) {
		t.Fatal("the idle connection was still open after 5 s")
	}
	if took := time.Since(t0); took < 200*time.Millisecond {
		t.Fatalf("closed after %v, before the idle timeout", took)
	}
}

// TestSlowBody: a body that stops arriving is refused with 408 after the
// body timeout and the connection closed; one that keeps trickling in,
// taking several times the timeout, is read whole.
func TestSlowBody(t *testing.T) {
	ts := startServer(t, serverOpts{body: 300 * time.Millisecond})
	c := dial(t, ts)
	c.send(t, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\"")
	resp, body := c.response(t)
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close || !strings.Contains(body, "stopped arriving") {
		t.Fatalf("stalled body: %d close %v %s", resp.StatusCode, resp.Close, body)
	}
	if !c.closedWithin(5 * time.Second) {
		t.Fatal("the connection stayed open after the 408")
	}

	full := `{"model": "orchard", "max_tokens": 2, "messages": [{"role": "user", "content": "slowly, piece by piece"}]}`
	c = dial(t, ts)
	c.send(t, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(full))+"\r\n\r\n")
	t0 := time.Now()
	for i := 0; i < len(full); i += 6 {
		c.send(t, full[i:min(i+6, len(full))])
		time.Sleep(60 * time.Millisecond)
	}
	resp, body = c.response(t)
	if resp.StatusCode != 200 || time.Since(t0) < 3*300*time.Millisecond {
		t.Fatalf("trickled body: %d after %v: %s", resp.StatusCode, time.Since(t0), body)
	}
}

// TestStreamsOutliveTimeouts: with every timeout at 200 ms, a streamed
// reply that takes several times that streams to its end, and the event
// stream stays open while it has nothing to say.
func TestStreamsOutliveTimeouts(t *testing.T) {
	d := 200 * time.Millisecond
	ts := startServer(t, serverOpts{delay: 20 * time.Millisecond, header: d, body: d, idle: d, send: d})
	resp, err := httpClient.Get(ts.url + "/orchard/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	if line, err := events.ReadString('\n'); err != nil || !strings.HasPrefix(line, "event: state") {
		t.Fatalf("events: %q %v", line, err)
	}

	t0 := time.Now()
	stream, rd := openStream(t, ts, "a long reply, please", 40)
	var all strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := rd.Read(buf)
		all.Write(buf[:n])
		if err != nil {
			break
		}
	}
	stream.Body.Close()
	if took := time.Since(t0); took < 4*d || !strings.HasSuffix(all.String(), "data: [DONE]\n\n") {
		t.Fatalf("after %v the stream ended with %q", took, all.String()[max(0, all.Len()-200):])
	}

	// The event stream, idle all along, still carries the chat's turn.
	if st, e := callCommand(t, ts, "PUT", "/orchard/v1/settings", `{"max_tokens": 4}`); st != 200 {
		t.Fatalf("settings: %d %+v", st, e)
	}
	if st, e := callCommand(t, ts, "POST", "/orchard/v1/session/messages", `{"text": "still there?"}`); st != 202 {
		t.Fatalf("send: %d %+v", st, e)
	}
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream ended after %v: %v", time.Since(t0), err)
		}
		if strings.HasPrefix(line, "event: finished") {
			break
		}
	}
}

// TestConnectionCap: at the cap a new connection closes the one idle the
// longest, so it is served at once; when none is idle it waits for one
// to end (here: a stalled body cut off by the body timeout).
func TestConnectionCap(t *testing.T) {
	ts := startServer(t, serverOpts{maxConns: 2, body: time.Second})
	a, b := dial(t, ts), dial(t, ts)
	for i, c := range []*rawConn{a, b} {
		c.send(t, healthReq)
		c.response(t)
		// The server marks a connection idle after its reply is out:
		// a goes idle before b.
		for idleConns(ts) < i+1 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	t0 := time.Now()
	if _, err := Probe(t.Context(), strings.TrimPrefix(ts.url, "http://"), ""); err != nil || time.Since(t0) > 2*time.Second {
		t.Fatalf("with two idle connections at the cap: %v after %v", err, time.Since(t0))
	}
	if !a.closedWithin(2 * time.Second) {
		t.Fatal("the connection idle the longest was not closed")
	}
	b.Close()
	for ts.conns.count() > 0 {
		time.Sleep(10 * time.Millisecond)
	}

	// Two connections busy sending a body that stalls.
	for range 2 {
		c := dial(t, ts)
		c.send(t, "POST /orchard/v1/checkpoints HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\n{")
	}
	for ts.conns.count() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	t0 = time.Now()
	if _, err := Probe(t.Context(), strings.TrimPrefix(ts.url, "http://"), ""); err != nil {
		t.Fatalf("after the stalled bodies were cut off: %v", err)
	}
	if took := time.Since(t0); took < 700*time.Millisecond {
		t.Fatalf("a third connection was served after %v, with two busy at the cap of 2", took)
	}
}

// TestAuthFailureCloses: a request without the key gets its 401 and the
// connection closed.
func TestAuthFailureCloses(t *testing.T) {
	ts := startServer(t, serverOpts{key: "k"})
	c := dial(t, ts)
	c.send(t, "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if resp, _ := c.response(t); resp.StatusCode != 401 || !resp.Close {
		t.Fatalf("%d, close %v", resp.StatusCode, resp.Close)
	}
	if !c.closedWithin(5 * time.Second) {
		t.Fatal("the connection stayed open after the 401")
	}
}

// idleConns counts the server's idle connections.
func idleConns(ts *testServer) int {
	ts.conns.mu.Lock()
	defer ts.conns.mu.Unlock()
	n := 0
	for _, since := range ts.conns.conns {
		if !since.IsZero() {
			n++
		}
	}
	return n
}
