package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// liveEvents follows GET /orchard/v1/events until the test ends.
func liveEvents(t *testing.T, ts *testServer) <-chan wireEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/orchard/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	first, err := readSSE(rd)
	if err != nil || first.Type != "state" {
		t.Fatalf("first event %+v, %v", first, err)
	}
	ch := make(chan wireEvent, 1024)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		for {
			w, err := readSSE(rd)
			if err != nil {
				return
			}
			ch <- w
		}
	}()
	return ch
}

// waitEvent reads events until one matches.
func waitEvent(t *testing.T, ch <-chan wireEvent, match func(wireEvent) bool) wireEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case w, ok := <-ch:
			if !ok {
				t.Fatal("event stream ended")
			}
			if match(w) {
				return w
			}
		case <-timeout:
			t.Fatal("the event did not come")
		}
	}
}

// chatBody is a raw chat completion request.
func chatBody(model, text string, maxTokens int, stream bool) string {
	req := map[string]any{"model": model, "stream": stream, "messages": []map[string]string{{"role": "user", "content": text}}}
	if maxTokens > 0 {
		req["max_tokens"] = maxTokens
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// openStream starts a streaming request and reads until the first
// content chunk.
func openStream(t *testing.T, ts *testServer, text string, maxTokens int) (*http.Response, *bufio.Reader) {
	t.Helper()
	resp, err := http.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(ts.info.Name, text, maxTokens, true)))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d: %v", resp.StatusCode, responseError(resp))
	}
	return resp, bufio.NewReader(resp.Body)
}

// contentChunks reads n chunks that carry content.
func contentChunks(t *testing.T, rd *bufio.Reader, n int) {
	t.Helper()
	for got := 0; got < n; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: {") && strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			got++
		}
	}
}

// TestQueueFull: one request generates, one waits, the next is refused
// with 503 and Retry-After; the waiting one runs when the first ends.
func TestQueueFull(t *testing.T) {
	ts := startServer(t, serverOpts{delay: 5 * time.Millisecond, queue: 1})
	events := liveEvents(t, ts)
	first, rd := openStream(t, ts, "a long reply", 0)
	contentChunks(t, rd, 1)

	waiting := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(ts.info.Name, "second", 3, false)))
		if err != nil {
			t.Error(err)
		}
		waiting <- resp
	}()
	waitEvent(t, events, func(w wireEvent) bool { return w.Type == "request" && w.Phase == "queued" && w.API == "openai" })
	for range 50 { // the second request's queued event may precede its place in line by a moment
		if _, n := ts.q.status(); n == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	resp, err := http.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(ts.info.Name, "third", 3, false)))
	if err != nil {
		t.Fatal(err)
	}
	err = responseError(resp)
	resp.Body.Close()
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != 503 || ra < 1 || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("third request: HTTP %d, Retry-After %q: %v", resp.StatusCode, resp.Header.Get("Retry-After"), err)
	}
	first.Body.Close() // the first client goes away; the waiting one runs
	second := <-waiting
	if second == nil || second.StatusCode != 200 {
		t.Fatalf("the waiting request: %+v", second)
	}
	second.Body.Close()
}

// TestFairQueue: waiting requests are served round-robin by client.
func TestFairQueue(t *testing.T) {
	q := newScheduler(10)
	run, err := q.enqueue(holder{client: "z", kind: "api"})
	if err != nil || !run.granted {
		t.Fatal("the first ticket should run at once")
	}
	var order []string
	var tickets []*ticket
	for _, c := range []string{"x", "x", "x", "y", "x", "w"} {
		tk, err := q.enqueue(holder{client: c, kind: "api"})
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	cur := run
	for range tickets {
		q.release(cur)
		for _, tk := range tickets {
			if tk.granted && q.running == tk {
				cur = tk
			}
		}
		order = append(order, cur.client)
	}
	if got := strings.Join(order, ""); got != "xywxxx" {
		t.Fatalf("served %s, want xywxxx", got)
	}
	// A waiter that gives up leaves the line.
	q = newScheduler(1)
	a, _ := q.enqueue(holder{client: "a", kind: "api"})
	b, _ := q.enqueue(holder{client: "b", kind: "api"})
	if _, err := q.enqueue(holder{client: "c", kind: "api"}); err != errQueueFull {
		t.Fatalf("full line: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.wait(ctx, b); err == nil {
		t.Fatal("a cancelled wait succeeded")
	}
	if _, err := q.enqueue(holder{client: "c", kind: "api"}); err != nil {
		t.Fatalf("the line should have room again: %v", err)
	}
	q.release(a)
	q.close()
	if _, err := q.enqueue(holder{client: "d", kind: "api"}); err != errShuttingDown {
		t.Fatalf("closed line: %v", err)
	}
}

// TestDisconnectCancels: a streaming client that goes away stops its
// generation at once: the engine reports it cancelled within a token or
// two of what the client had read.
func TestDisconnectCancels(t *testing.T) {
	ts := startServer(t, serverOpts{delay: 20 * time.Millisecond})
	events := liveEvents(t, ts)
	resp, rd := openStream(t, ts, "please write at length", 0)
	contentChunks(t, rd, 3)
	start := waitEvent(t, events, func(w wireEvent) bool { return w.Type == "request" && w.Phase == "started" })
	resp.Body.Close()
	closed := time.Now()
	end := waitEvent(t, events, func(w wireEvent) bool {
		return w.Request == start.Request && (w.Type == "cancelled" || w.Type == "finished")
	})
	took := time.Since(closed)
	if end.Type != "cancelled" {
		t.Fatalf("the reply ended %s", end.Type)
	}
	// 3 read, at most one more in the socket, one in flight in the chain.
	if n := end.Metrics.GeneratedTokens; n > 5 {
		t.Fatalf("generated %d tokens for a client that read 3", n)
	}
	if took > 500*time.Millisecond {
		t.Fatalf("the engine stopped %v after the client left", took)
	}
	// The engine is free again.
	r2, err := http.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(ts.info.Name, "next", 2, false)))
	if err != nil || r2.StatusCode != 200 {
		t.Fatalf("next request: %v %v", r2, err)
	}
	r2.Body.Close()
}
