package server

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// postMessages posts a body to /v1/messages with headers; it returns the
// status and the body.
func postMessages(t testing.TB, ts *testServer, body string, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.url+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

type sseEvent struct {
	name string
	data map[string]any
}

// sseEvents splits a stream into its events, checking that each data line
// is JSON whose type is the event's name.
func sseEvents(t testing.TB, raw []byte) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var name string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
			if d["type"] != name {
				t.Fatalf("event %s carries type %v", name, d["type"])
			}
			evs = append(evs, sseEvent{name, d})
		}
	}
	return evs
}

// TestAnthropicMessages: /v1/messages answers in Anthropic's shape with
// the engine's reply (system prompt and base64 image block included);
// the stream's events come in Anthropic's order and add up to the same
// text; the follow-up reads the first prompt from the cache
// (cache_read_input_tokens); a stop sequence is named; x-api-key is the
// key; errors are Anthropic's objects.
func TestAnthropicMessages(t *testing.T) {
	m := writeMedia(t)
	ts := startServer(t, serverOpts{key: "sekret"})
	set := engine.DefaultSettings()
	set.MaxTokens, set.System = 10, "Be brief."
	want := engineTurns(t, testbundle.Tiny(t, "r1"), set, mediaTurn{"What is this?", []engine.MediaFile{{Kind: engine.MediaImage, Path: m.pics[1]}}}, mediaTurn{"Is it ripe?", nil})
	img := base64.StdEncoding.EncodeToString(fileBytes(t, m.pics[1]))
	first := `{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "` + img + `"}}, {"type": "text", "text": "What is this?", "cache_control": {"type": "ephemeral"}}]}`
	body := `{"model": "orchard", "max_tokens": 10, "system": [{"type": "text", "text": "Be brief."}], "messages": [` + first + `]}`

	status, raw := postMessages(t, ts, body, "x-api-key", "sekret")
	var msg struct {
		ID, Type, Role, Model string
		Content               []struct{ Type, Text string }
		StopReason            string  `json:"stop_reason"`
		StopSequence          *string `json:"stop_sequence"`
		Usage                 anthropicUsage
	}
	if err := json.Unmarshal(raw, &msg); err != nil || status != 200 {
		t.Fatalf("HTTP %d %s", status, raw)
	}
	if msg.Type != "message" || msg.Role != "assistant" || !strings.HasPrefix(msg.ID, "msg_") || len(msg.Content) != 1 ||
		msg.Content[0].Type != "text" || msg.Content[0].Text != want[0] || msg.StopReason != "max_tokens" || msg.Usage.OutputTokens != 10 {
		t.Fatalf("message %+v, engine alone %q", msg, want[0])
	}

	reply, _ := json.Marshal(want[0])
	follow := `{"model": "orchard", "max_tokens": 10, "stream": true, "system": "Be brief.", "messages": [` + first +
		`, {"role": "assistant", "content": ` + string(reply) + `}, {"role": "user", "content": "Is it ripe?"}]}`
	status, raw = postMessages(t, ts, follow, "Authorization", "Bearer sekret")
	if status != 200 {
		t.Fatalf("HTTP %d %s", status, raw)
	}
	evs := sseEvents(t, raw)
	var names []string
	var text strings.Builder
	for _, ev := range evs {
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		if ev.name == "content_block_delta" {
			text.WriteString(ev.data["delta"].(map[string]any)["text"].(string))
		}
	}
	wantNames := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !slices.Equal(names, wantNames) || text.String() != want[1] {
		t.Fatalf("events %v (want %v), text %q (want %q)", names, wantNames, text.String(), want[1])
	}
	start := evs[0].data["message"].(map[string]any)["usage"].(map[string]any)
	delta := evs[len(evs)-2].data
	if start["cache_read_input_tokens"].(float64) < float64(msg.Usage.InputTokens) ||
		delta["delta"].(map[string]any)["stop_reason"] != "max_tokens" || delta["usage"].(map[string]any)["output_tokens"].(float64) != 10 {
		t.Fatalf("follow-up: message_start usage %v (the first prompt was %d tokens), message_delta %v", start, msg.Usage.InputTokens, delta)
	}

	runes := []rune(want[0])
	stop := string(runes[len(runes)/2 : len(runes)/2+2])
	b, _ := json.Marshal(map[string]any{"model": "orchard", "max_tokens": 10, "system": "Be brief.", "stop_sequences": []string{"\x00never", stop},
		"messages": json.RawMessage(`[` + first + `]`)})
	status, raw = postMessages(t, ts, string(b), "x-api-key", "sekret")
	json.Unmarshal(raw, &msg)
	if status != 200 || msg.StopReason != "stop_sequence" || msg.StopSequence == nil || *msg.StopSequence != stop ||
		msg.Content[0].Text != want[0][:strings.Index(want[0], stop)] {
		t.Fatalf("stop sequence %q: HTTP %d %s", stop, status, raw)
	}

	for _, tc := range []struct {
		name, body string
		headers    []string
		status     int
		typ, says  string
	}{
		{"no key", body, nil, 401, "authentication_error", "x-api-key"},
		{"wrong key", body, []string{"x-api-key", "nope"}, 401, "authentication_error", "wrong API key"},
		{"no max_tokens", `{"model": "orchard", "messages": [{"role": "user", "content": "hi"}]}`, nil, 400, "invalid_request_error", "max_tokens"},
		{"url image", `{"model": "orchard", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]}]}`, nil, 400, "invalid_request_error", "network"},
		{"server tools", `{"model": "orchard", "max_tokens": 5, "tools": [{"type": "web_search_20250305", "name": "web_search"}], "messages": [{"role": "user", "content": "hi"}]}`, nil, 400, "invalid_request_error", "server tools"},
		{"unknown model", `{"model": "claude-x", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}`, nil, 404, "not_found_error", "claude-x"},
		{"context", `{"model": "orchard", "max_tokens": 5, "messages": [{"role": "user", "content": "` + strings.Repeat("apple ", 4*ts.info.Context) + `"}]}`, nil, 400, "invalid_request_error", "shorten the messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.headers
			if h == nil && !strings.Contains(tc.name, "key") {
				h = []string{"x-api-key", "sekret"}
			}
			status, raw := postMessages(t, ts, tc.body, h...)
			var e anthropicErrorBody
			if err := json.Unmarshal(raw, &e); err != nil || status != tc.status || e.Type != "error" || e.Error.Type != tc.typ ||
				!strings.Contains(e.Error.Message, tc.says) || strings.Contains(e.Error.Message, "/clear") {
				t.Fatalf("HTTP %d %s; want %d %s saying %q", status, raw, tc.status, tc.typ, tc.says)
			}
		})
	}
}
