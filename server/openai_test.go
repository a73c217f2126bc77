package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/orchard-llm/orchard/engine"
)

func openAIClient(ts *testServer, key string) openai.Client {
	opts := []option.RequestOption{option.WithBaseURL(ts.url + "/v1/"), option.WithMaxRetries(0)}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	} else {
		opts = append(opts, option.WithAPIKey("unused"))
	}
	return openai.NewClient(opts...)
}

func params(model string, maxTokens int64, msgs ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: model, Messages: msgs}
	if maxTokens > 0 {
		p.MaxCompletionTokens = openai.Int(maxTokens)
	}
	return p
}

// stream runs a streaming request and returns the text and the usage.
func stream(t *testing.T, c openai.Client, p openai.ChatCompletionNewParams) (string, openai.CompletionUsage, string) {
	t.Helper()
	p.StreamOptions.IncludeUsage = openai.Bool(true)
	s := c.Chat.Completions.NewStreaming(context.Background(), p)
	var text strings.Builder
	var usage openai.CompletionUsage
	var reason string
	chunks := 0
	for s.Next() {
		ch := s.Current()
		chunks++
		for _, choice := range ch.Choices {
			text.WriteString(choice.Delta.Content)
			if choice.FinishReason != "" {
				reason = choice.FinishReason
			}
		}
		if ch.Usage.TotalTokens > 0 {
			usage = ch.Usage
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if chunks < 3 {
		t.Fatalf("only %d chunks", chunks)
	}
	return text.String(), usage, reason
}

// TestOpenAIClient: the official client, streaming and not, gets the
// engine's own greedy reply byte for byte; a follow-up reports the
// prompt tokens served from the cache.
func TestOpenAIClient(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := openAIClient(ts, "")
	model := ts.info.Name
	set := engine.DefaultSettings()
	set.MaxTokens = 16
	want := engineReply(t, set, "Tell me about apple orchards.", "And pears?")

	// Non-streaming.
	resp, err := c.Chat.Completions.New(context.Background(), params(model, 16, openai.UserMessage("Tell me about apple orchards.")))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != want[0] {
		t.Fatalf("reply %q, engine alone %q", got, want[0])
	}
	if resp.Object != "chat.completion" || resp.Model != model || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Fatalf("response envelope %+v", resp)
	}
	u := resp.Usage
	if u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Fatalf("usage %+v", u)
	}

	// Streaming follow-up: the conversation so far comes from the cache.
	text, usage, reason := stream(t, c, params(model, 16,
		openai.UserMessage("Tell me about apple orchards."), openai.AssistantMessage(want[0]), openai.UserMessage("And pears?")))
	if text != want[1] {
		t.Fatalf("follow-up %q, engine alone %q", text, want[1])
	}
	if reason == "" {
		t.Fatal("no finish_reason")
	}
	cached := usage.PromptTokensDetails.CachedTokens
	if cached <= u.PromptTokens || cached >= usage.PromptTokens {
		t.Fatalf("follow-up cached %d of %d prompt tokens; the first prompt alone was %d", cached, usage.PromptTokens, u.PromptTokens)
	}

	// The same request again, streamed: the same reply.
	text, _, _ = stream(t, c, params(model, 16, openai.UserMessage("Tell me about apple orchards.")))
	if text != want[0] {
		t.Fatalf("streamed %q, engine alone %q", text, want[0])
	}
	// "orchard" names whatever model is served.
	if _, err := c.Chat.Completions.New(context.Background(), params("orchard", 2, openai.UserMessage("hi"))); err != nil {
		t.Fatal(err)
	}
	models, err := c.Models.List(context.Background())
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != model {
		t.Fatalf("models %+v, %v", models, err)
	}
}

// TestOpenAIErrors: requests refused as given are 400 with an OpenAI
// error object, as the official client reads it.
func TestOpenAIErrors(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := openAIClient(ts, "")
	model := ts.info.Name
	img := params(model, 4, openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("what is this?"),
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo="}),
	}))
	for _, tc := range []struct {
		name   string
		p      openai.ChatCompletionNewParams
		status int
		code   string
		param  string
		says   string
	}{
		{"unknown model", params("gpt-4o", 4, openai.UserMessage("hi")), 404, "model_not_found", "model", "not found"},
		{"broken image", img, 400, "invalid_file", "messages[0].content[1]", "png"},
		{"ends with system", params(model, 4, openai.UserMessage("hi"), openai.SystemMessage("yes")), 400, "invalid_value", "messages", "end with a user message"},
		{"too long", params(model, 4, openai.UserMessage(strings.Repeat("apples and pears ", 400))), 400, "context_length_exceeded", "messages", "context holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Chat.Completions.New(context.Background(), tc.p)
			var ae *openai.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v, want an API error", err)
			}
			if ae.StatusCode != tc.status || ae.Code != tc.code || ae.Param != tc.param || !strings.Contains(ae.Message, tc.says) {
				t.Fatalf("HTTP %d code %q param %q: %s", ae.StatusCode, ae.Code, ae.Param, ae.Message)
			}
		})
	}
	// Plain HTTP: bodies the client would never send.
	for _, tc := range []struct {
		name, body, code string
	}{
		{"malformed JSON", `{"model": "` + model + `", "messages": [`, "invalid_json"},
		{"wrong type", `{"model": "` + model + `", "messages": "hi"}`, "invalid_json"},
		{"n > 1", `{"model": "` + model + `", "n": 2, "messages": [{"role": "user", "content": "hi"}]}`, "unsupported_value"},
		{"custom tools", `{"model": "` + model + `", "tools": [{"type": "custom", "custom": {"name": "f"}}], "messages": [{"role": "user", "content": "hi"}]}`, "unsupported_value"},
		{"tool role without a call", `{"model": "` + model + `", "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}, {"role": "user", "content": "hi"}]}`, "invalid_value"},
		{"functions", `{"model": "` + model + `", "functions": [{"name": "f", "parameters": {}}], "messages": [{"role": "user", "content": "hi"}]}`, "unsupported_value"},
		{"function_call", `{"model": "` + model + `", "function_call": {"name": "f"}, "messages": [{"role": "user", "content": "hi"}]}`, "unsupported_value"},
		{"tool_choice required without tools", `{"model": "` + model + `", "tool_choice": "required", "messages": [{"role": "user", "content": "hi"}]}`, "invalid_value"},
		{"function call message", `{"model": "` + model + `", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{}"}}, {"role": "user", "content": "hi"}]}`, "unsupported_value"},
		{"negative temperature", `{"model": "` + model + `", "temperature": -1, "messages": [{"role": "user", "content": "hi"}]}`, "invalid_value"},
		{"no user message", `{"model": "` + model + `", "messages": [{"role": "system", "content": "x"}]}`, "invalid_value"},
		{"zero max_tokens", `{"model": "` + model + `", "max_tokens": 0, "messages": [{"role": "user", "content": "hi"}]}`, "invalid_value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, e := postChat(t, ts, tc.body)
			if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || e.Code == nil || *e.Code != tc.code {
				t.Fatalf("HTTP %d code %v: %s", resp.StatusCode, e.Code, e.Message)
			}
		})
	}
}

// TestAuth: with a key, every TCP request needs it (401 otherwise); the
// unix socket does not; a non-loopback address needs a key to start.
func TestAuth(t *testing.T) {
	ts := startServer(t, serverOpts{key: "s3cret"})
	for _, tc := range []struct {
		name, header string
		status       int
	}{
		{"none", "", 401},
		{"wrong", "Bearer nope", 401},
		{"not bearer", "s3cret", 401},
		{"right", "Bearer s3cret", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/models", "/orchard/v1/session"} {
				req, _ := http.NewRequest("GET", ts.url+path, nil)
				if tc.header != "" {
					req.Header.Set("Authorization", tc.header)
				}
				resp, err := httpClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("%s: HTTP %d: %s", path, resp.StatusCode, body)
				}
				if tc.status == 401 && (!strings.Contains(string(body), "invalid_api_key") || resp.Header.Get("WWW-Authenticate") == "") {
					t.Fatalf("%s: 401 body %s", path, body)
				}
			}
		})
	}
	// The official client with the key works; without it, 401.
	good, wrong := openAIClient(ts, "s3cret"), openAIClient(ts, "wrong")
	if _, err := good.Chat.Completions.New(context.Background(), params(ts.info.Name, 2, openai.UserMessage("hi"))); err != nil {
		t.Fatal(err)
	}
	var ae *openai.Error
	if _, err := wrong.Models.List(context.Background()); !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Fatalf("wrong key: %v", err)
	}
	// The socket is the owner's own: no key needed.
	if h, err := Probe(context.Background(), "unix:"+ts.sock, ""); err != nil || h.Status != "ok" {
		t.Fatalf("unix socket without a key: %+v %v", h, err)
	}

	for _, tc := range []struct {
		addr, key string
		ok        bool
	}{
		{"127.0.0.1:11535", "", true},
		{"localhost:11535", "", true},
		{"[::1]:11535", "", true},
		{"0.0.0.0:11535", "", false},
		{"192.168.1.5:11535", "", false},
		{":11535", "", false},
		{"0.0.0.0:11535", "k", true},
		{"nonsense", "", false},
	} {
		if err := CheckExposure(tc.addr, tc.key); (err == nil) != tc.ok {
			t.Errorf("CheckExposure(%q, %q) = %v", tc.addr, tc.key, err)
		}
	}
}

// TestConcurrentClients: clients sending at once, streamed and not,
// each get the reply the engine alone gives their conversation.
func TestConcurrentClients(t *testing.T) {
	ts := startServer(t, serverOpts{queue: 64})
	c := openAIClient(ts, "")
	set := engine.DefaultSettings()
	set.MaxTokens = 8
	prompts := []string{"one apple", "two pears", "three plums", "four figs"}
	want := map[string]string{}
	for _, p := range prompts {
		want[p] = engineReply(t, set, p)[0]
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				var got string
				if (i+j)%2 == 0 {
					resp, err := c.Chat.Completions.New(context.Background(), params(ts.info.Name, 8, openai.UserMessage(p)))
					if err != nil {
						errs <- err
						return
					}
					got = resp.Choices[0].Message.Content
				} else {
					s := c.Chat.Completions.NewStreaming(context.Background(), params(ts.info.Name, 8, openai.UserMessage(p)))
					for s.Next() {
						for _, ch := range s.Current().Choices {
							got += ch.Delta.Content
						}
					}
					if err := s.Err(); err != nil {
						errs <- err
						return
					}
				}
				if got != want[p] {
					errs <- errors.New("client " + p + ": got " + got + ", want " + want[p])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
