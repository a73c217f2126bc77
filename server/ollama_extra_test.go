package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// ollamaCall sends a request (a body as JSON) and returns the status and
// the body.
func ollamaCall(t testing.TB, ts *testServer, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestOllamaDescribe: GET / and /api/version answer as ollama's
// connection checks want; /api/tags and /api/ps describe the model with
// its details and size; /api/show gives the capabilities the bundle has
// (Zed; the synthetic tokenizers have Gemma 4's think and tool tokens), model_info with the context length (Zed) and the parameters and
// template (continue.dev); an unknown model is 404 in ollama's shape.
func TestOllamaDescribe(t *testing.T) {
	for _, tc := range []struct {
		family string
		caps   []string
	}{
		{"r1", []string{"completion", "vision", "audio", "tools", "thinking"}},
		{"v2", []string{"completion", "vision", "tools", "thinking"}},
		{"stateful3", []string{"completion", "tools", "thinking"}},
	} {
		t.Run(tc.family, func(t *testing.T) {
			ts := startServer(t, serverOpts{family: tc.family})
			if status, raw := ollamaCall(t, ts, "GET", "/", ""); status != 200 || string(raw) != "orchard is running" {
				t.Fatalf("GET /: %d %q", status, raw)
			}
			if status, raw := ollamaCall(t, ts, "HEAD", "/", ""); status != 200 || len(raw) != 0 {
				t.Fatalf("HEAD /: %d %q", status, raw)
			}
			status, raw := ollamaCall(t, ts, "GET", "/api/version", "")
			var v map[string]string
			if json.Unmarshal(raw, &v); status != 200 || v["version"] != "1.2.3" {
				t.Fatalf("/api/version: %d %s", status, raw)
			}

			var tags struct {
				Models []struct {
					Name, Model string
					Size        int64
					Details     map[string]any
				}
			}
			status, raw = ollamaCall(t, ts, "GET", "/api/tags", "")
			if json.Unmarshal(raw, &tags); status != 200 || len(tags.Models) != 1 || tags.Models[0].Size <= 0 || tags.Models[0].Details["format"] != "coreml" {
				t.Fatalf("/api/tags: %d %s", status, raw)
			}
			var ps struct {
				Models []struct {
					Name          string
					ExpiresAt     string `json:"expires_at"`
					ContextLength int    `json:"context_length"`
				}
			}
			status, raw = ollamaCall(t, ts, "GET", "/api/ps", "")
			if json.Unmarshal(raw, &ps); status != 200 || len(ps.Models) != 1 || ps.Models[0].ExpiresAt < "2100" || ps.Models[0].ContextLength != ts.info.Context {
				t.Fatalf("/api/ps: %d %s", status, raw)
			}

			var show struct {
				Capabilities []string
				ModelInfo    map[string]any `json:"model_info"`
				Parameters   string
				Template     string
				Sampling     string `json:"orchard_sampling"`
			}
			status, raw = ollamaCall(t, ts, "POST", "/api/show", `{"model": "`+ts.info.Name+`:latest"}`)
			if json.Unmarshal(raw, &show); status != 200 || !slices.Equal(show.Capabilities, tc.caps) {
				t.Fatalf("/api/show: %d %s; want capabilities %v", status, raw, tc.caps)
			}
			arch, _ := show.ModelInfo["general.architecture"].(string)
			if ctx, _ := show.ModelInfo[arch+".context_length"].(float64); arch == "" || int(ctx) != ts.info.Context {
				t.Fatalf("model_info %v: want %s.context_length %d", show.ModelInfo, arch, ts.info.Context)
			}
			if !strings.Contains(show.Parameters, "num_ctx") || !strings.Contains(show.Parameters, "stop") || show.Template == "" || strings.Contains(show.Template, ".Suffix") ||
				!strings.Contains(show.Sampling, "greedily") {
				t.Fatalf("parameters %q, template %q, sampling %q", show.Parameters, show.Template, show.Sampling)
			}
			status, raw = ollamaCall(t, ts, "POST", "/api/show", `{"name": "llama3"}`)
			var e map[string]string
			if json.Unmarshal(raw, &e); status != 404 || !strings.Contains(e["error"], "llama3") {
				t.Fatalf("unknown model: %d %s", status, raw)
			}
		})
	}
}

// TestOllamaGenerate: /api/generate gives the chat's reply for the prompt
// and system (streamed and not); raw feeds the prompt untemplated (the
// template's own rendering, sent raw, gives the same reply); the call
// with no prompt loads or unloads (keep_alive 0); prompt_eval_count
// counts the whole prompt and orchard_prefilled_count what was prefilled.
func TestOllamaGenerate(t *testing.T) {
	ts := startServer(t, serverOpts{})
	set := engine.DefaultSettings()
	set.MaxTokens, set.System = 10, "Be brief."
	want := engineReply(t, set, "hello there")[0]
	noSys := set
	noSys.System = ""
	wantRaw := engineReply(t, noSys, "hello there")[0]

	status, raw := ollamaCall(t, ts, "POST", "/api/generate", `{"model": "orchard", "prompt": "hello there", "system": "Be brief.", "stream": false, "keep_alive": "5m", "options": {"num_predict": 10}}`)
	var one ollamaChunk
	if json.Unmarshal(raw, &one); status != 200 || one.Response == nil || *one.Response != want || !one.Done || one.DoneReason != "length" || one.EvalCount != 10 {
		t.Fatalf("generate: %d %s; want %q", status, raw, want)
	}
	if one.PrefilledCount == nil || one.PromptEvalCount == 0 || *one.PrefilledCount != one.PromptEvalCount {
		t.Fatalf("a first prompt: prompt_eval_count %d, prefilled %s", one.PromptEvalCount, jsonOf(one.PrefilledCount))
	}

	resp, err := httpClient.Post(ts.url+"/api/generate", "application/json", strings.NewReader(`{"model": "orchard", "prompt": "hello there", "system": "Be brief.", "options": {"num_predict": 10}}`))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var last ollamaChunk
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var c ollamaChunk
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.Response == nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		text.WriteString(*c.Response)
		last = c
	}
	resp.Body.Close()
	if text.String() != want || !last.Done || last.PrefilledCount == nil || *last.PrefilledCount >= last.PromptEvalCount || last.PromptEvalCount != one.PromptEvalCount {
		t.Fatalf("streamed %q, last %s; want %q, the same prompt count and less prefilled (cached)", text.String(), jsonOf(last), want)
	}

	status, raw = ollamaCall(t, ts, "POST", "/api/generate", `{"model": "orchard", "raw": true, "system": "ignored", "stream": false, "options": {"num_predict": 10}, "prompt": `+jsonOf(chatRendering("hello there"))+`}`)
	if json.Unmarshal(raw, &one); status != 200 || *one.Response != wantRaw {
		t.Fatalf("raw: %d %s; want %q", status, raw, wantRaw)
	}

	for _, tc := range []struct{ body, reason string }{
		{`{"model": "orchard"}`, "load"},
		{`{"model": "orchard", "prompt": "", "keep_alive": 0}`, "unload"},
		{`{"model": "orchard", "keep_alive": "0s"}`, "unload"},
	} {
		status, raw := ollamaCall(t, ts, "POST", "/api/generate", tc.body)
		if json.Unmarshal(raw, &one); status != 200 || !one.Done || one.DoneReason != tc.reason || one.Response == nil || *one.Response != "" {
			t.Fatalf("%s: %d %s; want done_reason %s", tc.body, status, raw, tc.reason)
		}
	}
	status, raw = ollamaCall(t, ts, "POST", "/api/chat", `{"model": "orchard", "messages": []}`)
	if json.Unmarshal(raw, &one); status != 200 || one.DoneReason != "load" || one.Message == nil {
		t.Fatalf("chat load: %d %s", status, raw)
	}
}

// TestOllamaErrors: every error on /api/* is ollama's {"error": "..."},
// a string its client shows (an object printed as [object Object]): a
// missing key, an unknown path, a refused request, a context overflow
// (naming what to do, not the chat's /clear), embeddings (501, saying
// why) and model management.
func TestOllamaErrors(t *testing.T) {
	ts := startServer(t, serverOpts{key: "k"})
	for _, tc := range []struct {
		name, method, path, body string
		key                      bool
		status                   int
		says                     string
	}{
		{"no key", "GET", "/api/tags", "", false, 401, "API key"},
		{"unknown path", "GET", "/api/nothing", "", true, 404, "/api/nothing"},
		{"bad json", "POST", "/api/chat", `{"model":`, true, 400, "JSON"},
		{"suffix", "POST", "/api/generate", `{"model": "orchard", "prompt": "a", "suffix": "b"}`, true, 400, "suffix"},
		{"raw images", "POST", "/api/generate", `{"model": "orchard", "prompt": "a", "raw": true, "images": ["aGk="]}`, true, 400, "raw"},
		{"raw think", "POST", "/api/generate", `{"model": "orchard", "prompt": "a", "raw": true, "think": true}`, true, 400, "think"},
		{"context", "POST", "/api/chat", `{"model": "orchard", "stream": false, "messages": [{"role": "user", "content": "` + strings.Repeat("apple ", 4*ts.info.Context) + `"}]}`, true, 400, "num_ctx"},
		{"embed", "POST", "/api/embed", `{"model": "orchard", "input": "a"}`, true, 501, "embedding"},
		{"embeddings", "POST", "/api/embeddings", `{"model": "orchard", "prompt": "a"}`, true, 501, "embedding"},
		{"pull", "POST", "/api/pull", `{"model": "llama3"}`, true, 501, "--model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.url+tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.key {
				req.Header.Set("Authorization", "Bearer k")
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e map[string]any
			json.Unmarshal(raw, &e)
			msg, ok := e["error"].(string)
			if resp.StatusCode != tc.status || !ok || !strings.Contains(msg, tc.says) || strings.Contains(msg, "/clear") {
				t.Fatalf("HTTP %d %s; want %d and {\"error\": \"...%s...\"}", resp.StatusCode, raw, tc.status, tc.says)
			}
		})
	}
	// OpenAI's paths keep OpenAI's nested object.
	req, _ := http.NewRequest("GET", ts.url+"/v1/nothing", nil)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e apiErrorBody
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 404 || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, "/v1/nothing") {
		t.Fatalf("OpenAI path: HTTP %d %+v", resp.StatusCode, e)
	}
}
