package server

import (
	"strings"
	"testing"
)

// TestContextExceeded: a conversation longer than the context is refused
// with OpenAI's context_length_exceeded and a remedy a client can act on
// (shorten the messages), never the chat's /clear or context policy:
// text a little too long, counted in tokens (with the figures), and text
// far too long, refused by its length before it is tokenized.
func TestContextExceeded(t *testing.T) {
	ts := startServer(t, serverOpts{})
	for _, tc := range []struct {
		name, text, figures string
	}{
		{"tokens", strings.Repeat("apple ", 150), "context holds 128"},
		{"length", strings.Repeat("apple ", 4*ts.info.Context), "refused before tokenizing"},
	} {
		resp, e := postChat(t, ts, `{"model": "orchard", "messages": [{"role": "user", "content": "`+tc.text+`"}]}`)
		if resp.StatusCode != 400 || e.Code == nil || *e.Code != "context_length_exceeded" || e.Param == nil || *e.Param != "messages" ||
			!strings.Contains(e.Message, "shorten the messages") || !strings.Contains(e.Message, tc.figures) ||
			strings.Contains(e.Message, "/clear") || strings.Contains(e.Message, "policy") {
			t.Fatalf("%s: HTTP %d: %s", tc.name, resp.StatusCode, e.Message)
		}
	}
}

// TestNewEndpointsIgnoreSampling: on an argmax bundle the new endpoints
// take the sampling parameters clients send as the chat path does:
// accepted, decoded greedily, and named in X-Orchard-Ignored.
func TestNewEndpointsIgnoreSampling(t *testing.T) {
	ts := startServer(t, serverOpts{})
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/completions", `{"model": "orchard", "prompt": "a", "max_tokens": 2, "temperature": 0.7}`, "temperature"},
		{"/v1/messages", `{"model": "orchard", "max_tokens": 2, "temperature": 0.7, "top_k": 5, "messages": [{"role": "user", "content": "a"}]}`, "temperature,top_k"},
		{"/api/generate", `{"model": "orchard", "prompt": "a", "stream": false, "options": {"num_predict": 2, "temperature": 0.7}}`, "temperature"},
	} {
		resp, err := httpClient.Post(ts.url+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get(IgnoredHeader) != tc.want {
			t.Fatalf("%s: HTTP %d, %s %q; want 200 and %q", tc.path, resp.StatusCode, IgnoredHeader, resp.Header.Get(IgnoredHeader), tc.want)
		}
	}
}
