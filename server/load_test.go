package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestLoad is the bounded load test: 4 clients × 20 requests over
// loopback, each client a conversation that grows a few turns and starts
// again, streamed and not. No request may be lost; p50/p99 latency and
// throughput are logged (go test -run TestLoad -v ./server/), and the
// server's heap must stay flat from the first round to the last.
func TestLoad(t *testing.T) {
	const clients, requests = 4, 20
	ts := startServer(t, serverOpts{queue: clients})
	tr := &http.Transport{}
	c := openai.NewClient(option.WithBaseURL(ts.url+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}))
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	goroutines := runtime.NumGoroutine()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		tokens    int64
		warm      uint64
		failures  []error
	)
	var warmOnce sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var msgs []openai.ChatCompletionMessageParamUnion
			for j := range requests {
				if j%2 == 0 {
					// A new conversation every other turn keeps within the
					// tiny 128-token context with room to spare: the tiny
					// model's replies hold broken UTF-8, which a client sends
					// back as U+FFFD, so a turn costs more tokens when the
					// server re-tokenizes it (its cache evicted, as timing
					// decides) than when it reuses the ids it generated. A
					// third turn reached 132 and 135 tokens in some runs.
					msgs = nil
				}
				msgs = append(msgs, openai.UserMessage(fmt.Sprintf("client %d asks question %d", i, j)))
				p := params(ts.info.Name, 8, msgs...)
				p.User = openai.String(fmt.Sprint("client-", i))
				t0 := time.Now()
				var reply string
				var n int64
				var err error
				if j%2 == 0 {
					var resp *openai.ChatCompletion
					if resp, err = c.Chat.Completions.New(context.Background(), p); err == nil {
						reply, n = resp.Choices[0].Message.Content, resp.Usage.CompletionTokens
					}
				} else {
					p.StreamOptions.IncludeUsage = openai.Bool(true)
					s := c.Chat.Completions.NewStreaming(context.Background(), p)
					for s.Next() {
						ch := s.Current()
						for _, choice := range ch.Choices {
							reply += choice.Delta.Content
						}
						n += ch.Usage.CompletionTokens
					}
					err = s.Err()
				}
				d := time.Since(t0)
				mu.Lock()
				var ae *openai.Error
				if errors.As(err, &ae) {
					err = fmt.Errorf("%w: %s", err, ae.Message)
				}
				if err != nil || n == 0 {
					failures = append(failures, fmt.Errorf("client %d request %d: %d tokens, %v (%d messages)", i, j, n, err, len(msgs)))
				}
				latencies = append(latencies, d)
				tokens += n
				done := len(latencies)
				mu.Unlock()
				if done == clients*2 {
					warmOnce.Do(func() { warm = heap() })
				}
				msgs = append(msgs, openai.AssistantMessage(reply))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range failures {
		t.Error(err)
	}
	if len(latencies) != clients*requests {
		t.Fatalf("%d requests answered of %d", len(latencies), clients*requests)
	}
	slices.Sort(latencies)
	p50, p99 := latencies[len(latencies)/2], latencies[len(latencies)*99/100]
	end := heap()
	t.Logf("load: %d clients × %d requests in %v: %.1f requests/s, %.0f tokens/s; latency p50 %v, p99 %v; heap %d KiB after warm-up, %d KiB at the end; %+v",
		clients, requests, elapsed.Round(time.Millisecond), float64(len(latencies))/elapsed.Seconds(), float64(tokens)/elapsed.Seconds(),
		p50.Round(time.Microsecond), p99.Round(time.Microsecond), warm>>10, end>>10, ts.eng.ConversationStats())
	if end > warm+8<<20 {
		t.Errorf("the heap grew from %d KiB to %d KiB over the run", warm>>10, end>>10)
	}
	if st := ts.eng.ConversationStats(); st.Restores == 0 {
		t.Errorf("four alternating conversations never restored a kept one: %+v", st)
	}
	// Nothing left behind: handlers, mailboxes and pumps ended.
	tr.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines+4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+4 {
		t.Errorf("%d goroutines after the run, %d before", n, goroutines)
	}
}
