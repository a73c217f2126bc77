package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

// benchPrompt is a prompt whose greedy reply on the tiny bundle runs to
// the token cap (checked by the benchmark).
const benchPrompt = "write a long story about orchards"

// BenchmarkStreamOverhead measures the server's cost per streamed token:
// each iteration runs the same request through the engine alone (Complete
// with a counting sink) and through the server (HTTP, SSE, a client
// reading every chunk), each with a cap of 8 and of 48 tokens. The
// difference between the two caps is the cost of 40 tokens, free of what
// a request costs once (HTTP, JSON, the line); the server's per-token
// overhead is its per-token cost minus the engine's, and the per-request
// overhead is reported apart. The engine is the tiny reference bundle,
// far faster than a real model, so the server's share is as visible as
// it can be.
func BenchmarkStreamOverhead(b *testing.B) {
	const short, long = 8, 48
	ts := startServer(b, serverOpts{})
	hc := &http.Client{}
	engineRun := func(tokens int) int {
		set := engine.DefaultSettings()
		set.MaxTokens = tokens
		req := engine.Request{Messages: []engine.Message{{Role: "user", Content: benchPrompt}}, Settings: set}
		done := make(chan int, 1)
		n := 0
		ts.eng.Complete(req, func(ev engine.Event) {
			switch e := ev.(type) {
			case *engine.Delta:
				n += len(e.Tokens)
			case engine.Finished, engine.Cancelled, engine.Failed:
				done <- n
			}
		})
		return <-done
	}
	serverRun := func(tokens int) (int, int) {
		body := strings.Replace(chatBody(ts.info.Name, benchPrompt, tokens, true), `"stream":true`, `"stream":true,"stream_options":{"include_usage":true}`, 1)
		resp, err := hc.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		chunks, n := 0, 0
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			if strings.HasPrefix(line, "data: {") {
				chunks++
			}
			if strings.Contains(line, `"usage":{`) {
				var c chatCompletion
				json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c)
				if c.Usage != nil {
					n = c.Usage.CompletionTokens
				}
			}
		}
		return n, chunks
	}
	if n := engineRun(long); n != long {
		b.Fatalf("the engine generated %d tokens, want %d (pick a prompt that runs to the cap)", n, long)
	}
	var eS, eL, sS, sL time.Duration
	var chunks int
	timed := func(f func()) time.Duration {
		t0 := time.Now()
		f()
		return time.Since(t0)
	}
	b.ResetTimer()
	for b.Loop() {
		eS += timed(func() { engineRun(short) })
		eL += timed(func() { engineRun(long) })
		sS += timed(func() { serverRun(short) })
		sL += timed(func() {
			n, c := serverRun(long)
			chunks += c
			if n != long {
				b.Fatalf("the server streamed %d tokens", n)
			}
		})
	}
	nsPerTok := func(s, l time.Duration) float64 {
		return float64((l - s).Nanoseconds()) / float64(b.N*(long-short))
	}
	engineTok, serverTok := nsPerTok(eS, eL), nsPerTok(sS, sL)
	b.ReportMetric(engineTok, "engine-ns/tok")
	b.ReportMetric(serverTok, "server-ns/tok")
	b.ReportMetric(serverTok-engineTok, "overhead-ns/tok")
	b.ReportMetric(float64((sS-eS).Nanoseconds())/float64(b.N)-float64(short)*(serverTok-engineTok), "overhead-ns/req")
	b.ReportMetric(float64(chunks)/float64(b.N), "chunks/48tok")
}

// BenchmarkTTFT measures the time to the first streamed token, at the
// client, of a cold prompt (nothing cached) and of a follow-up to a
// conversation the server holds (only the new message is prefilled).
// Each iteration runs one of each; the ratio is reported.
// It runs on the small demo preset (2,048 positions), so the cold prompt
// can be a realistic few hundred tokens.
func BenchmarkTTFT(b *testing.B) {
	ts := startServer(b, serverOpts{preset: "small"})
	long := strings.Repeat("Apple orchards need full sun, well-drained soil and pruning in late winter. ", 3)
	hc := &http.Client{}
	first := func(msgs []map[string]string) time.Duration {
		raw, _ := json.Marshal(map[string]any{"model": ts.info.Name, "stream": true, "max_tokens": 1, "messages": msgs})
		t0 := time.Now()
		resp, err := hc.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(string(raw)))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		var d time.Duration
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			if d == 0 && strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
				d = time.Since(t0)
			}
		}
		if d == 0 {
			b.Fatal("no content streamed")
		}
		return d
	}
	// The conversation the follow-ups continue.
	base := []map[string]string{{"role": "user", "content": long}}
	raw, _ := json.Marshal(map[string]any{"model": ts.info.Name, "max_tokens": 4, "messages": base})
	resp, err := hc.Post(ts.url+"/v1/chat/completions", "application/json", strings.NewReader(string(raw)))
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b.Fatal(responseError(resp))
	}
	var cc chatCompletion
	json.NewDecoder(resp.Body).Decode(&cc)
	resp.Body.Close()
	base = append(base, map[string]string{"role": "assistant", "content": *cc.Choices[0].Message.Content})

	var cold, follow time.Duration
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		// A different first word: nothing but the start of the template is shared.
		cold += first([]map[string]string{{"role": "user", "content": fmt.Sprint(i, " ", long)}})
		follow += first(append(base, map[string]string{"role": "user", "content": fmt.Sprint("and ", i, "?")}))
	}
	b.ReportMetric(float64(cold.Microseconds())/float64(b.N), "cold-µs")
	b.ReportMetric(float64(follow.Microseconds())/float64(b.N), "followup-µs")
	b.ReportMetric(float64(cold)/float64(follow), "cold/followup")
}
