package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/tokenizer"
)

// weatherScript calls get_weather when asked about the weather, and
// answers when the result comes back (the result's entry first: the first
// entry that matches plays).
const weatherScript = `{"replies":[
 {"match":"^<\\|tool_response>response:get_weather\\{","reply":"It is sunny in Paris."},
 {"match":"(?i)weather","reply":"Let me look.<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|><|tool_response>"}
]}`

const weatherAnswer = "It is sunny in Paris."

// scriptedSession is a session on b whose runtime plays script.
func scriptedSession(t testing.TB, b *bundle.Bundle, script string) *engine.Session {
	t.Helper()
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := chain.Open(b, chaintest.Scripted(t, b, script), chain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewSession(b, c, tok, engine.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	s.Memory = nil
	return s
}

func weatherServer(t testing.TB, family string) *testServer {
	return startServer(t, serverOpts{family: family, preset: "tiny-long", script: weatherScript})
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name: "get_weather", Description: openai.String("The weather in a city"),
	Parameters: shared.FunctionParameters{"type": "object", "required": []string{"city"},
		"properties": map[string]any{"city": map[string]any{"type": "string"}}},
})

// TestOpenAITools: the official Go client asks about the weather with a
// tool, gets a call (finish tool_calls, an id, the arguments as JSON),
// sends the result back as a tool message and gets the answer, the whole
// earlier turn served from the cache; streamed, the call comes as a
// delta.tool_calls chunk the client's accumulator reassembles, and the
// answer is the same.
func TestOpenAITools(t *testing.T) {
	for _, fam := range []string{"r1", "stateful3"} {
		t.Run(fam, func(t *testing.T) {
			ts := weatherServer(t, fam)
			c := openAIClient(ts, "")
			ctx := context.Background()
			user := openai.UserMessage("What is the weather in Paris?")
			p := params(ts.info.Name, 64, user)
			p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool}

			for _, streamed := range []bool{false, true} {
				var msg openai.ChatCompletionMessage
				var reason string
				var usage openai.CompletionUsage
				if streamed {
					acc := openai.ChatCompletionAccumulator{}
					s := c.Chat.Completions.NewStreaming(ctx, p)
					calls := 0
					for s.Next() {
						acc.AddChunk(s.Current())
						if _, ok := acc.JustFinishedToolCall(); ok {
							calls++
						}
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
					if calls != 1 {
						t.Errorf("stream: %d finished tool calls, want 1", calls)
					}
					msg, reason = acc.Choices[0].Message, acc.Choices[0].FinishReason
				} else {
					resp, err := c.Chat.Completions.New(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					msg, reason, usage = resp.Choices[0].Message, resp.Choices[0].FinishReason, resp.Usage
				}
				if reason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.Content != "Let me look." {
					t.Fatalf("streamed %v: finish %q, message %s", streamed, reason, msg.RawJSON())
				}
				call := msg.ToolCalls[0]
				if call.ID == "" || call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Paris"}` {
					t.Fatalf("streamed %v: call %s", streamed, call.RawJSON())
				}

				q := params(ts.info.Name, 64, user, msg.ToParam(), openai.ToolMessage(`{"sky":"sunny"}`, call.ID))
				q.Tools = p.Tools
				resp, err := c.Chat.Completions.New(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Choices[0]; got.Message.Content != weatherAnswer || got.FinishReason != "stop" || len(got.Message.ToolCalls) != 0 {
					t.Fatalf("streamed %v: answer %s", streamed, got.RawJSON())
				}
				if !streamed {
					// The whole earlier turn, the model's call included, is
					// cached: only the result is prefilled.
					if cached := resp.Usage.PromptTokensDetails.CachedTokens; cached != usage.PromptTokens+usage.CompletionTokens {
						t.Errorf("follow-up: %d of %d prompt tokens cached, want the earlier turn's %d+%d",
							cached, resp.Usage.PromptTokens, usage.PromptTokens, usage.CompletionTokens)
					}
				}
			}
		})
	}
}

// TestOpenAIToolChoice: none declares nothing, so the call the model
// writes anyway is text; required and a named function are taken but
// said to be unforced; bad tools, choices and tool messages are refused
// naming the field, and so are the legacy functions.
func TestOpenAIToolChoice(t *testing.T) {
	ts := weatherServer(t, "r1")
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`
	ask := `"messages":[{"role":"user","content":"weather?"}]`
	for _, tc := range []struct {
		name, body string
		status     int
		header     string
		param      string
	}{
		{"required", `{` + tools + `,` + ask + `,"tool_choice":"required"}`, 200, "required; unforced", ""},
		{"named", `{` + tools + `,` + ask + `,"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`, 200, "function; unforced", ""},
		{"named unknown", `{` + tools + `,` + ask + `,"tool_choice":{"type":"function","function":{"name":"nope"}}}`, 400, "", "tool_choice"},
		{"required without tools", `{` + ask + `,"tool_choice":"required"}`, 400, "", "tool_choice"},
		{"bad name", `{"tools":[{"type":"function","function":{"name":"a b"}}],` + ask + `}`, 400, "", "tools[0].function.name"},
		{"legacy functions", `{"functions":[{"name":"f"}],` + ask + `}`, 400, "", "functions"},
		{"tool without call", `{"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"x","content":"1"}]}`, 400, "", "messages[1].tool_call_id"},
		{"bad arguments", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, 400, "", "messages[1].tool_calls[0].function.arguments"},
	} {
		resp, e := postChat(t, ts, tc.body)
		if resp.StatusCode != tc.status || resp.Header.Get(ToolChoiceHeader) != tc.header || tc.param != "" && (e.Param == nil || *e.Param != tc.param) {
			t.Errorf("%s: HTTP %d, %s %q, error %+v", tc.name, resp.StatusCode, ToolChoiceHeader, resp.Header.Get(ToolChoiceHeader), e)
		}
	}
	var out chatCompletion
	status, raw := post(t, ts.url+"/v1/chat/completions", []byte(`{`+tools+`,`+ask+`,"tool_choice":"none"}`))
	if json.Unmarshal([]byte(raw), &out); status != 200 || *out.Choices[0].FinishReason != "stop" || len(out.Choices[0].Message.ToolCalls) != 0 ||
		!strings.Contains(*out.Choices[0].Message.Content, "<|tool_call>call:get_weather") {
		t.Errorf("tool_choice none: %d %s", status, raw)
	}
}

// TestOllamaTools: /api/chat with tools answers with message.tool_calls
// (arguments an object), streamed and not; the result goes back as a
// tool message and the answer follows.
func TestOllamaTools(t *testing.T) {
	ts := weatherServer(t, "v2")
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"The weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	ask := `{"role":"user","content":"What is the weather in Paris?"}`
	type msg struct {
		Content   string
		ToolCalls []struct {
			Function struct {
				Name      string
				Arguments map[string]any
			}
		} `json:"tool_calls"`
	}
	for _, streamed := range []bool{false, true} {
		body := `{"model":"orchard","stream":` + map[bool]string{false: "false", true: "true"}[streamed] + `,` + tools + `,"messages":[` + ask + `]}`
		status, raw := ollamaCall(t, ts, "POST", "/api/chat", body)
		var got msg
		var reason string
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		lines := 0
		for sc.Scan() {
			var c struct {
				Message    msg
				DoneReason string `json:"done_reason"`
			}
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			lines++
			got.Content += c.Message.Content
			got.ToolCalls = append(got.ToolCalls, c.Message.ToolCalls...)
			reason = cmpOr(c.DoneReason, reason)
		}
		if status != http.StatusOK || (lines > 1) != streamed || got.Content != "Let me look." || len(got.ToolCalls) != 1 ||
			got.ToolCalls[0].Function.Name != "get_weather" || got.ToolCalls[0].Function.Arguments["city"] != "Paris" || reason != "stop" {
			t.Fatalf("streamed %v: %d %s", streamed, status, raw)
		}
		calls, _ := json.Marshal(got.ToolCalls)
		follow := `{"model":"orchard","stream":false,` + tools + `,"messages":[` + ask + `,{"role":"assistant","content":"Let me look.","tool_calls":` + string(calls) +
			`},{"role":"tool","tool_name":"get_weather","content":"sunny"}]}`
		status, raw = ollamaCall(t, ts, "POST", "/api/chat", follow)
		var c struct {
			Message msg
		}
		if json.Unmarshal(raw, &c); status != 200 || c.Message.Content != weatherAnswer || len(c.Message.ToolCalls) != 0 {
			t.Fatalf("follow-up: %d %s", status, raw)
		}
	}
}

// TestAnthropicTools: /v1/messages with tools answers with a tool_use
// block (stop_reason tool_use), streamed as a content block whose input
// comes as input_json_delta; the tool_result goes back in a user message
// and the answer follows, the earlier turn read from the cache.
func TestAnthropicTools(t *testing.T) {
	ts := weatherServer(t, "r1")
	tools := `"tools":[{"name":"get_weather","description":"The weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	ask := `{"role":"user","content":"What is the weather in Paris?"}`
	status, raw := postMessages(t, ts, `{"model":"orchard","max_tokens":64,`+tools+`,"messages":[`+ask+`]}`)
	var out struct {
		Content []struct {
			Type, Text, ID, Name string
			Input                map[string]any
		}
		StopReason string `json:"stop_reason"`
		Usage      anthropicUsage
	}
	if json.Unmarshal(raw, &out); status != 200 || out.StopReason != "tool_use" || len(out.Content) != 2 ||
		out.Content[0].Text != "Let me look." || out.Content[1].Type != "tool_use" || out.Content[1].Name != "get_weather" ||
		out.Content[1].Input["city"] != "Paris" || out.Content[1].ID == "" {
		t.Fatalf("%d %s", status, raw)
	}
	first := out.Usage
	use, _ := json.Marshal(out.Content[1])
	follow := `{"model":"orchard","max_tokens":64,` + tools + `,"messages":[` + ask +
		`,{"role":"assistant","content":[{"type":"text","text":"Let me look."},` + string(use) + `]}` +
		`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + out.Content[1].ID + `","content":"sunny"}]}]}`
	status, raw = postMessages(t, ts, follow)
	if json.Unmarshal(raw, &out); status != 200 || out.StopReason != "end_turn" || len(out.Content) != 1 || out.Content[0].Text != weatherAnswer {
		t.Fatalf("follow-up: %d %s", status, raw)
	}
	if want := first.InputTokens + first.CacheReadInputTokens + first.OutputTokens; out.Usage.CacheReadInputTokens != want {
		t.Errorf("follow-up read %d tokens from the cache, want the earlier turn's %d", out.Usage.CacheReadInputTokens, want)
	}

	status, raw = postMessages(t, ts, `{"model":"orchard","max_tokens":64,"stream":true,`+tools+`,"messages":[`+ask+`]}`)
	var text, input, reason string
	var types []string
	for _, ev := range sseEvents(t, raw) {
		switch ev.name {
		case "content_block_start":
			cb := ev.data["content_block"].(map[string]any)
			types = append(types, cb["type"].(string))
		case "content_block_delta":
			d := ev.data["delta"].(map[string]any)
			if s, ok := d["text"].(string); ok {
				text += s
			}
			if s, ok := d["partial_json"].(string); ok {
				input += s
			}
		case "message_delta":
			reason, _ = ev.data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	if status != 200 || text != "Let me look." || input != `{"city":"Paris"}` || reason != "tool_use" || strings.Join(types, ",") != "text,tool_use" {
		t.Fatalf("stream: %d text %q input %q reason %q blocks %v\n%s", status, text, input, reason, types, raw)
	}
}
