package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/syncbuf"
)

// call makes one request over TCP (or the unix socket) and returns the
// status, the headers and the body.
func call(t *testing.T, c *http.Client, method, url, host string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if c == nil {
		c = httpClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func unixClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

// completion posts a chat completion and returns the status, the
// X-Orchard-Ignored header and the reply (or the error message).
func completion(t *testing.T, ts *testServer, path, body string) (int, string, string) {
	t.Helper()
	status, h, out := call(t, nil, "POST", ts.url+path, "", map[string]string{"Content-Type": "application/json"}, body)
	var r struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Message *struct { // ollama
			Content string `json:"content"`
		} `json:"message"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("HTTP %d: %v: %s", status, err, out)
	}
	switch {
	case r.Error != nil:
		return status, h.Get(IgnoredHeader), fmt.Sprint(r.Error)
	case len(r.Choices) == 1:
		return status, h.Get(IgnoredHeader), r.Choices[0].Message.Content
	case r.Message != nil:
		return status, h.Get(IgnoredHeader), r.Message.Content
	}
	return status, h.Get(IgnoredHeader), out
}

// TestSamplingOnArgmax: on a bundle that emits argmax ids, what clients
// send with every request — OpenAI's temperature 1, a top_p, a seed,
// ollama's options — is accepted, decoding stays greedy (the engine's own
// reply), and X-Orchard-Ignored names what was ignored; values that keep
// greedy decoding are not named; a value out of range is still refused.
// server.strict_sampling refuses them as before.
func TestSamplingOnArgmax(t *testing.T) {
	var log syncbuf.Buffer // the server writes it while the test reads
	ts := startServer(t, serverOpts{logger: slog.New(slog.NewTextHandler(&log, nil))})
	set := engine.DefaultSettings()
	set.MaxTokens = 8
	want := engineReply(t, set, "hi")[0]
	msgs := `"max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]`
	for _, tc := range []struct{ sampling, ignored string }{
		{`"temperature": 1, "top_p": 0.9, "seed": 5,`, "temperature,top_p,seed"},
		{`"top_k": 40, "min_p": 0.05, "repetition_penalty": 1.1,`, "top_k,min_p,repetition_penalty"},
		{`"temperature": 0, "top_p": 1,`, ""},
		{`"temperature": 0.7, "top_p": 0,`, ""}, // top_p 0 is greedy
	} {
		status, ignored, reply := completion(t, ts, "/v1/chat/completions", `{"model": "orchard", `+tc.sampling+msgs+`}`)
		if status != 200 || ignored != tc.ignored || reply != want {
			t.Errorf("%s: HTTP %d, ignored %q (want %q), reply %q (greedy %q)", tc.sampling, status, ignored, tc.ignored, reply, want)
		}
	}
	status, ignored, reply := completion(t, ts, "/api/chat", `{"model": "orchard", "stream": false, "options": {"temperature": 0.8, "repeat_penalty": 1.2, "num_predict": 8}, "messages": [{"role": "user", "content": "hi"}]}`)
	if status != 200 || ignored != "temperature,repeat_penalty" || reply != want {
		t.Errorf("ollama options: HTTP %d, ignored %q, reply %q (greedy %q)", status, ignored, reply, want)
	}
	if status, _, msg := completion(t, ts, "/v1/chat/completions", `{"model": "orchard", "temperature": -1, `+msgs+`}`); status != 400 || !strings.Contains(msg, "temperature") {
		t.Errorf("a negative temperature: HTTP %d %s", status, msg)
	}
	// The official client, with OpenAI's default temperature.
	p := params(ts.info.Name, 8, openai.UserMessage("hi"))
	p.Temperature = openai.Float(1)
	oc := openAIClient(ts, "")
	if resp, err := oc.Chat.Completions.New(context.Background(), p); err != nil || resp.Choices[0].Message.Content != want {
		t.Fatalf("the official client at temperature 1: %v", err)
	}
	if !strings.Contains(log.String(), "sampling ignored") || !strings.Contains(log.String(), "ignored=temperature,top_p,seed") {
		t.Fatalf("the log says nothing of the ignored sampling:\n%s", log.String())
	}
	if s := ts.Sampling(); !s.Greedy || !slices.Contains(s.Ignored, "temperature") {
		t.Fatalf("sampling support %+v", s)
	}

	strict := startServer(t, serverOpts{strict: true})
	sc := openAIClient(strict, "")
	_, err := sc.Chat.Completions.New(context.Background(), p)
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Code != "unsupported_value" || ae.Param != "temperature" || !strings.Contains(ae.Message, "argmax") {
		t.Fatalf("strict, temperature 1: %v", err)
	}
	if status, _, msg := completion(t, strict, "/api/chat", `{"model": "orchard", "stream": false, "options": {"top_k": 40}, "messages": [{"role": "user", "content": "hi"}]}`); status != 400 || !strings.Contains(msg, "argmax") {
		t.Fatalf("strict, ollama top_k: HTTP %d %s", status, msg)
	}
	if status, _, _ := completion(t, strict, "/v1/chat/completions", `{"model": "orchard", "temperature": 0, "top_p": 0, `+msgs+`}`); status != 200 {
		t.Fatalf("strict, greedy asked for: HTTP %d", status)
	}
	if s := strict.Sampling(); !s.Greedy || len(s.Ignored) != 0 {
		t.Fatalf("strict sampling support %+v", s)
	}

	// Sampling defaults from the config (top_k = 40) cannot apply to an
	// argmax bundle: they must not make every request fail.
	hot := engine.DefaultSettings()
	hot.Sampling.TopK, hot.Sampling.Temperature = 40, 0.7
	for _, o := range []serverOpts{{defaults: &hot}, {defaults: &hot, strict: true}} {
		cfg := startServer(t, o)
		if status, ignored, reply := completion(t, cfg, "/v1/chat/completions", `{"model": "orchard", `+msgs+`}`); status != 200 || ignored != "" || reply != want {
			t.Fatalf("sampling defaults on an argmax bundle (strict %v): HTTP %d, ignored %q, reply %q", o.strict, status, ignored, reply)
		}
	}
}

// TestSamplingSeeds: on a bundle that samples, requests without a seed
// draw a fresh one (three at temperature 1 do not all give the same
// reply), a seed repeats its reply, and top_p 0 is greedy.
func TestSamplingSeeds(t *testing.T) {
	ts := startServer(t, serverOpts{family: "stateful3-logits"})
	if !ts.info.Logits {
		t.Fatal("the bundle has no logits")
	}
	ask := func(sampling string) string {
		t.Helper()
		status, ignored, reply := completion(t, ts, "/v1/chat/completions", `{"model": "orchard", `+sampling+` "max_tokens": 12, "messages": [{"role": "user", "content": "Tell me about apple orchards."}]}`)
		if status != 200 || ignored != "" {
			t.Fatalf("%s: HTTP %d, ignored %q: %s", sampling, status, ignored, reply)
		}
		return reply
	}
	var unseeded []string
	for range 3 {
		unseeded = append(unseeded, ask(`"temperature": 1,`))
	}
	if unseeded[0] == unseeded[1] && unseeded[1] == unseeded[2] {
		t.Fatalf("three unseeded requests at temperature 1 gave the same reply %q", unseeded[0])
	}
	if a, b := ask(`"temperature": 1, "seed": 42,`), ask(`"temperature": 1, "seed": 42,`); a != b {
		t.Fatalf("seed 42 gave %q, then %q", a, b)
	}
	if g, p := ask(`"temperature": 0,`), ask(`"temperature": 1, "top_p": 0,`); g != p {
		t.Fatalf("top_p 0 gave %q, greedy %q", p, g)
	}
}

// TestModelNames: the bundle's name, orchard, name:latest and the aliases
// name the model served (in any case); an unknown name is 404 in each
// API's shape; the OpenAI paths work without /v1, as in llama-server.
func TestModelNames(t *testing.T) {
	ts := startServer(t, serverOpts{aliases: []string{"gpt-4o-mini", "llama3.2"}})
	body := func(model string) string {
		return `{"model": "` + model + `", "max_tokens": 2, "options": {"num_predict": 2}, "stream": false, "messages": [{"role": "user", "content": "hi"}]}`
	}
	for _, name := range []string{ts.info.Name, strings.ToUpper(ts.info.Name), "orchard", "orchard:latest", ts.info.Name + ":latest", "gpt-4o-mini", "llama3.2:latest", ""} {
		for _, path := range []string{"/v1/chat/completions", "/chat/completions", "/api/chat"} {
			if status, _, msg := completion(t, ts, path, body(name)); status != 200 {
				t.Errorf("%s with model %q: HTTP %d %s", path, name, status, msg)
			}
		}
	}
	status, h, out := call(t, nil, "POST", ts.url+"/chat/completions", "", map[string]string{"Content-Type": "application/json"}, body("gpt-5"))
	var oe apiErrorBody
	if status != 404 || json.Unmarshal([]byte(out), &oe) != nil || oe.Error.Code == nil || *oe.Error.Code != "model_not_found" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("unknown model on /chat/completions: HTTP %d %s", status, out)
	}
	status, _, out = call(t, nil, "POST", ts.url+"/api/chat", "", map[string]string{"Content-Type": "application/json"}, body("gpt-5"))
	var ol map[string]string
	if status != 404 || json.Unmarshal([]byte(out), &ol) != nil || !strings.Contains(ol["error"], `"gpt-5" not found`) {
		t.Fatalf("unknown model on /api/chat: HTTP %d %s", status, out)
	}
	// The official client with a base URL without /v1.
	c := openai.NewClient(option.WithBaseURL(ts.url+"/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	list, err := c.Models.List(context.Background())
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != ts.info.Name {
		t.Fatalf("GET /models: %+v %v", list, err)
	}
	for _, id := range []string{"gpt-4o-mini", "orchard"} {
		if m, err := c.Models.Get(context.Background(), id); err != nil || m.ID != ts.info.Name {
			t.Fatalf("GET /models/%s: %+v %v", id, m, err)
		}
	}
	var ae *openai.Error
	if _, err := c.Models.Get(context.Background(), "gpt-5"); !errors.As(err, &ae) || ae.StatusCode != 404 || ae.Code != "model_not_found" {
		t.Fatalf("GET /models/gpt-5: %v", err)
	}
}

// TestPrefillAndLateSystem: a conversation that ends with an assistant
// message gets the reply that continues it — an empty one opens the
// model's turn exactly as the generation prompt does, so the reply is the
// plain reply byte for byte — and a system message after the first turn
// is taken, on both APIs, and so is a tool call in the history.
func TestPrefillAndLateSystem(t *testing.T) {
	ts := startServer(t, serverOpts{})
	set := engine.DefaultSettings()
	set.MaxTokens = 8
	want := engineReply(t, set, "Tell me about apple orchards.")[0]
	c := openAIClient(ts, "")
	resp, err := c.Chat.Completions.New(context.Background(), params(ts.info.Name, 8, openai.UserMessage("Tell me about apple orchards."), openai.AssistantMessage("")))
	if err != nil || resp.Choices[0].Message.Content != want {
		t.Fatalf("an empty assistant message continued: %v, want %q", err, want)
	}
	resp, err = c.Chat.Completions.New(context.Background(), params(ts.info.Name, 4, openai.UserMessage("Tell me about apple orchards."), openai.AssistantMessage("Apple orchards are")))
	if err != nil || resp.Choices[0].FinishReason == "" {
		t.Fatalf("an assistant message continued: %v", err)
	}
	late := params(ts.info.Name, 4, openai.UserMessage("a"), openai.AssistantMessage("b"), openai.SystemMessage("Answer in French."), openai.UserMessage("c"))
	if _, err := c.Chat.Completions.New(context.Background(), late); err != nil {
		t.Fatalf("a system message after the first turn: %v", err)
	}
	if status, _, msg := completion(t, ts, "/api/chat", `{"model": "orchard", "stream": false, "options": {"num_predict": 4}, "messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "Answer in French."}, {"role": "user", "content": "c"}, {"role": "assistant", "content": "Oui,"}]}`); status != 200 {
		t.Fatalf("ollama, a later system message and a prefill: HTTP %d %s", status, msg)
	}
	if status, _, msg := completion(t, ts, "/api/chat", `{"model": "orchard", "stream": false, "options": {"num_predict": 4}, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}, {"role": "user", "content": "c"}]}`); status != 200 {
		t.Fatalf("ollama, a tool call in the history (without its result): HTTP %d %s", status, msg)
	}
}
