package server

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// truncationBody is a conversation of the fill questions, each answered,
// that does not fit the tiny preset's 128 tokens while its last message
// does; extra is put into the request object.
func truncationBody(extra string) string {
	var msgs []map[string]string
	for i, q := range fillQuestions {
		msgs = append(msgs, map[string]string{"role": "user", "content": q})
		if i < len(fillQuestions)-1 {
			msgs = append(msgs, map[string]string{"role": "assistant", "content": "They are all good in their season."})
		}
	}
	data, _ := json.Marshal(msgs)
	return `{"model": "orchard", "max_tokens": 6, "stream": false` + extra + `, "messages": ` + string(data) + `}`
}

// TestTruncation: a conversation that does not fit is refused with
// OpenAI's 400 context_length_exceeded (no chat command, no policy in the
// advice) unless the request asks for "truncation": "auto", which
// compacts it and answers — on the OpenAI endpoint and, with orchard's
// field, on ollama's /api/chat; any other value is refused.
func TestTruncation(t *testing.T) {
	ts := startServer(t, serverOpts{})
	for _, extra := range []string{"", `, "truncation": "disabled"`} {
		resp, e := postChat(t, ts, truncationBody(extra))
		if resp.StatusCode != 400 || e.Code == nil || *e.Code != "context_length_exceeded" || strings.Contains(e.Message, "/clear") ||
			strings.Contains(e.Message, "policy") {
			t.Fatalf("without truncation (%q): HTTP %d: %s", extra, resp.StatusCode, e.Message)
		}
	}
	resp, e := postChat(t, ts, truncationBody(`, "truncation": "sideways"`))
	if resp.StatusCode != 400 || e.Param == nil || *e.Param != "truncation" {
		t.Fatalf("a bad truncation value: HTTP %d: %s", resp.StatusCode, e.Message)
	}

	post := func(path, body string) (int, string) {
		t.Helper()
		resp, err := httpClient.Post(ts.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	code, body := post("/v1/chat/completions", truncationBody(`, "truncation": "auto"`))
	var cc chatCompletion
	if err := json.Unmarshal([]byte(body), &cc); code != 200 || err != nil || len(cc.Choices) != 1 || cc.Choices[0].Message.Content == nil || *cc.Choices[0].Message.Content == "" {
		t.Fatalf("truncation auto: HTTP %d: %s", code, body)
	}

	ollama := strings.Replace(truncationBody(""), `"max_tokens": 6`, `"options": {"num_predict": 6}`, 1)
	if code, body := post("/api/chat", ollama); code != 400 || !strings.Contains(body, "context") {
		t.Fatalf("ollama without truncation: HTTP %d: %s", code, body)
	}
	auto := strings.Replace(ollama, `"stream": false`, `"stream": false, "truncation": "auto"`, 1)
	if code, body := post("/api/chat", auto); code != 200 || !strings.Contains(body, `"done":true`) {
		t.Fatalf("ollama with truncation auto: HTTP %d: %s", code, body)
	}
}
