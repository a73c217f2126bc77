package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/tokenizer"
)

// chatRendering is the chat template's rendering of one user message,
// without the BOS (a raw prompt gets one).
func chatRendering(text string) string {
	return "<|turn>user\n" + text + "<turn|>\n<|turn>model\n"
}

// TestCompletions: /v1/completions through the official client feeds the
// prompt as it is: the chat template's own rendering, sent raw, gives the
// chat's reply byte for byte, and a plain prompt is counted as BOS and
// its tokens (no template). Streaming adds up to the same text; a stop
// string cuts it; max_tokens defaults to OpenAI's 16; echo leads with the
// prompt.
func TestCompletions(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := openAIClient(ts, "")
	ctx := context.Background()
	set := engine.DefaultSettings()
	set.MaxTokens = 12
	want := engineReply(t, set, "hello there")[0]

	got, err := c.Completions.New(ctx, openai.CompletionNewParams{Model: "orchard", MaxTokens: openai.Int(12),
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(chatRendering("hello there"))}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Object != "text_completion" || len(got.Choices) != 1 || got.Choices[0].Text != want {
		t.Fatalf("raw rendering: %+v; the chat's reply %q", got.Choices, want)
	}

	tok, err := tokenizer.Load(testbundle.Tiny(t, "r1").Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.Completions.New(ctx, openai.CompletionNewParams{Model: "orchard",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tok.Encode("Once upon a time")) + 1; plain.Usage.PromptTokens != int64(n) {
		t.Fatalf("a plain prompt counts %d tokens, want %d (BOS and its own)", plain.Usage.PromptTokens, n)
	}
	if plain.Usage.CompletionTokens > defaultCompletionTokens || plain.Usage.CompletionTokens == 0 {
		t.Fatalf("without max_tokens: %d tokens, want 1..%d", plain.Usage.CompletionTokens, defaultCompletionTokens)
	}

	s := c.Completions.NewStreaming(ctx, openai.CompletionNewParams{Model: "orchard", MaxTokens: openai.Int(12),
		Prompt:        openai.CompletionNewParamsPromptUnion{OfString: openai.String(chatRendering("hello there"))},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	var text strings.Builder
	var reason string
	var usage openai.CompletionUsage
	for s.Next() {
		ch := s.Current()
		for _, choice := range ch.Choices {
			text.WriteString(choice.Text)
			if choice.FinishReason != "" {
				reason = string(choice.FinishReason)
			}
		}
		if ch.Usage.TotalTokens > 0 {
			usage = ch.Usage
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != want || reason == "" || usage.CompletionTokens == 0 || usage.PromptTokensDetails.CachedTokens == 0 {
		t.Fatalf("streamed %q (%s, usage %+v), want %q and the cache reused", text.String(), reason, usage, want)
	}

	runes := []rune(want)
	stop := string(runes[len(runes)/2 : len(runes)/2+2])
	cut, err := c.Completions.New(ctx, openai.CompletionNewParams{Model: "orchard", MaxTokens: openai.Int(12),
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(chatRendering("hello there"))},
		Stop:   openai.CompletionNewParamsStopUnion{OfString: openai.String(stop)}})
	if err != nil {
		t.Fatal(err)
	}
	if cut.Choices[0].Text != want[:strings.Index(want, stop)] || cut.Choices[0].FinishReason != "stop" {
		t.Fatalf("stop %q: %q (%s), want %q", stop, cut.Choices[0].Text, cut.Choices[0].FinishReason, want[:strings.Index(want, stop)])
	}

	echo, err := c.Completions.New(ctx, openai.CompletionNewParams{Model: "orchard", MaxTokens: openai.Int(12), Echo: openai.Bool(true),
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(chatRendering("hello there"))}})
	if err != nil {
		t.Fatal(err)
	}
	if echo.Choices[0].Text != chatRendering("hello there")+want {
		t.Fatalf("echo: %q", echo.Choices[0].Text)
	}

	for _, tc := range []struct {
		name   string
		p      openai.CompletionNewParams
		param  string
		status int
	}{
		{"suffix", openai.CompletionNewParams{Model: "orchard", Suffix: openai.String("end"), Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("a")}}, "suffix", 400},
		{"two prompts", openai.CompletionNewParams{Model: "orchard", Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: []string{"a", "b"}}}, "prompt", 400},
		{"token prompt", openai.CompletionNewParams{Model: "orchard", Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{1, 2}}}, "prompt", 400},
		{"context", openai.CompletionNewParams{Model: "orchard", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(strings.Repeat(" apple", 4*ts.info.Context))}}, "prompt", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Completions.New(ctx, tc.p)
			var ae *openai.Error
			if !errors.As(err, &ae) || ae.StatusCode != tc.status || ae.Param != tc.param {
				t.Fatalf("want HTTP %d naming %s, got %v", tc.status, tc.param, err)
			}
			if tc.name == "context" && (ae.Code != "context_length_exceeded" || strings.Contains(ae.Message, "/clear") || !strings.Contains(ae.Message, "shorten the prompt")) {
				t.Fatalf("context: %s %q", ae.Code, ae.Message)
			}
		})
	}
}
