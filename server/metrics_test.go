package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/orchard-llm/orchard/engine"
)

// scrape reads /metrics as Prometheus does and returns the samples by
// name and labels ("name{label=value,...}", labels sorted).
func scrape(t testing.TB, ts *testServer, key string) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.url+"/metrics", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Untyped != nil:
				out[key] = m.Untyped.GetValue()
			}
		}
	}
	return out
}

// TestMetrics: /metrics counts requests by endpoint and status, the
// tokens of API requests and of the chat's turns (prompt, cached,
// generated) with their speeds, the waiting line, the memory ledgers and
// the conversation cache; without the key it is refused.
func TestMetrics(t *testing.T) {
	ts := startServer(t, serverOpts{key: "k"})
	c := openAIClient(ts, "k")
	ctx := context.Background()
	p := params("orchard", 6, openai.UserMessage("hello"))
	first, err := c.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p.Messages = append(p.Messages, openai.AssistantMessage(first.Choices[0].Message.Content), openai.UserMessage("and then?"))
	second, err := c.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models.Get(ctx, "nothing-here"); err == nil {
		t.Fatal("an unknown model was found")
	}
	a, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	set := engine.DefaultSettings()
	set.MaxTokens = 4
	a.SetSettings(set)
	until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })
	a.Send("hi")
	evs := until(t, a, turnEnd)
	chat := evs[len(evs)-1].(engine.Finished).Metrics

	m := scrape(t, ts, "k")
	u1, u2 := first.Usage, second.Usage
	for name, want := range map[string]float64{
		`orchard_http_requests_total{code=200,endpoint=POST /v1/chat/completions}`: 2,
		`orchard_http_requests_total{code=404,endpoint=GET /v1/models/{id}}`:       1,
		`orchard_prompt_tokens_total{api=openai}`:                                  float64(u1.PromptTokens + u2.PromptTokens),
		`orchard_cached_tokens_total{api=openai}`:                                  float64(u1.PromptTokensDetails.CachedTokens + u2.PromptTokensDetails.CachedTokens),
		`orchard_generated_tokens_total{api=openai}`:                               float64(u1.CompletionTokens + u2.CompletionTokens),
		`orchard_prompt_tokens_total{api=chat}`:                                    float64(chat.PromptTokens),
		`orchard_generated_tokens_total{api=chat}`:                                 float64(chat.GeneratedTokens),
		`orchard_prompt_tokens_total{api=anthropic}`:                               0,
		`orchard_queue_waiting`:                                                    0,
		`orchard_queue_limit`:                                                      16,
	} {
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	turns := 0.0
	for name, v := range m {
		if strings.HasPrefix(name, "orchard_turns_total{api=openai,") {
			turns += v
		}
	}
	if turns != 2 || m[`orchard_turns_total{api=chat,reason=`+chat.FinishReason+`}`] != 1 {
		t.Errorf("turns: %v by the API (want 2), the chat's %v", turns, m[`orchard_turns_total{api=chat,reason=`+chat.FinishReason+`}`])
	}
	if m[`orchard_cached_tokens_total{api=openai}`] == 0 {
		t.Error("the follow-up reused nothing")
	}
	for _, name := range []string{`orchard_decode_tokens_per_second{api=openai}`, `orchard_prefill_tokens_per_second{api=openai}`,
		`orchard_decode_seconds_total{api=openai}`, `orchard_memory_bytes{ledger=footprint}`, `orchard_memory_bytes{ledger=available}`} {
		if m[name] <= 0 {
			t.Errorf("%s = %v, want > 0", name, m[name])
		}
	}
	for _, name := range []string{`orchard_memory_bytes{ledger=model}`, `orchard_conversation_restores_total`, `orchard_conversation_evictions_total`,
		`orchard_conversations_kept`, `orchard_draft_tokens_total`, `orchard_draft_accepted_tokens_total`} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s is missing", name)
		}
	}

	resp, err := httpClient.Get(ts.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("/metrics without the key: HTTP %d", resp.StatusCode)
	}
}
