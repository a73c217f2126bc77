package server

import (
	"strings"
	"testing"
)

// TestContextExceeded: a conversation longer than the context is refused
// with OpenAI's context_length_exceeded and a remedy a client can act on
// (the figures, shorten the messages), never the chat's /clear or context
// policy.
func TestContextExceeded(t *testing.T) {
	ts := startServer(t, serverOpts{})
	resp, e := postChat(t, ts, `{"model": "orchard", "messages": [{"role": "user", "content": "`+strings.Repeat("apple ", 4*ts.info.Context)+`"}]}`)
	if resp.StatusCode != 400 || e.Code == nil || *e.Code != "context_length_exceeded" || e.Param == nil || *e.Param != "messages" ||
		!strings.Contains(e.Message, "shorten the messages") || !strings.Contains(e.Message, "context holds 128") ||
		strings.Contains(e.Message, "/clear") || strings.Contains(e.Message, "policy") {
		t.Fatalf("HTTP %d %+v: %s", resp.StatusCode, e, e.Message)
	}
}
