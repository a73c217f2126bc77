package server

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestCancelInLineOnScreen: over a server, a chat message waiting behind
// an API request and cancelled with esc never started: the screen shows
// neither it nor an empty "cancelled" reply, the message is back in the
// input, and the server's conversation is as it was.
func TestCancelInLineOnScreen(t *testing.T) {
	ts := startServer(t, serverOpts{delay: 40 * time.Millisecond})
	c, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys, out := runScreen(t, c)
	at := out.waitFor(t, 0, "Type a message")

	resp, rd := openStream(t, ts, "a long reply", 100)
	defer resp.Body.Close()
	contentChunks(t, rd, 1)
	at = out.waitFor(t, at, "busy: API")
	io.WriteString(keys, "my turn\r")
	at = out.waitFor(t, at, "waits its turn")
	io.WriteString(keys, "\x1b")
	out.waitFor(t, at, "Cancelled before it started")
	if s := out.since(at); strings.Contains(s, "partial reply") || strings.Contains(s, "cancelled ·") {
		t.Fatalf("the screen showed a reply:\n%s", s)
	}
	if m := c.Messages(); len(m) != 0 {
		t.Fatalf("the server's conversation: %+v", m)
	}
}
