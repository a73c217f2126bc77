package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// TestOllama: /api/chat streams NDJSON (and answers in one object with
// "stream": false) with the engine's reply; /api/tags lists the model.
func TestOllama(t *testing.T) {
	ts := startServer(t, serverOpts{})
	set := engine.DefaultSettings()
	set.MaxTokens = 10
	want := engineReply(t, set, "hello from ollama")[0]
	body := func(stream bool, model string) string {
		b, _ := json.Marshal(map[string]any{"model": model, "stream": stream, "options": map[string]any{"num_predict": 10},
			"messages": []map[string]string{{"role": "user", "content": "hello from ollama"}}})
		return string(b)
	}

	resp, err := http.Post(ts.url+"/api/chat", "application/json", strings.NewReader(body(true, ts.info.Name+":latest")))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var text strings.Builder
	var last ollamaChunk
	sc := bufio.NewScanner(resp.Body)
	lines := 0
	for sc.Scan() {
		var c ollamaChunk
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		text.WriteString(c.Message.Content)
		last = c
		lines++
	}
	resp.Body.Close()
	if text.String() != want || !last.Done || last.DoneReason == "" || last.EvalCount == 0 || lines < 2 {
		t.Fatalf("streamed %q (want %q) in %d lines, last %+v", text.String(), want, lines, last)
	}

	resp, err = http.Post(ts.url+"/api/chat", "application/json", strings.NewReader(body(false, ts.info.Name)))
	if err != nil {
		t.Fatal(err)
	}
	var one ollamaChunk
	json.NewDecoder(resp.Body).Decode(&one)
	resp.Body.Close()
	if one.Message.Content != want || !one.Done || one.PromptEvalCount < 0 {
		t.Fatalf("non-streamed %+v", one)
	}

	resp, err = http.Post(ts.url+"/api/chat", "application/json", strings.NewReader(body(false, "llama3")))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]string
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(e["error"], "not found") {
		t.Fatalf("unknown model: HTTP %d %v", resp.StatusCode, e)
	}
	img := `{"model": "orchard", "messages": [{"role": "user", "content": "what is this", "images": ["iVBORw0KGgo="]}]}`
	resp, err = http.Post(ts.url+"/api/chat", "application/json", strings.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(e["error"], "images are not supported") {
		t.Fatalf("image: HTTP %d %v", resp.StatusCode, e)
	}

	resp, err = http.Get(ts.url + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	json.NewDecoder(resp.Body).Decode(&tags)
	resp.Body.Close()
	if len(tags.Models) != 1 || tags.Models[0].Name != ts.info.Name {
		t.Fatalf("tags %+v", tags)
	}
}
