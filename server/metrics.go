package server

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/memledger"
)

// GET /metrics in Prometheus's text format: requests by endpoint and
// status, the tokens and speeds of every turn (API requests and the
// chat's), speculation, the waiting line, the memory ledgers and the
// conversation cache. Each server has its own registry.

// promMetrics are the server's counters; the gauges are read when scraped.
type promMetrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec // endpoint, code
	turns     *prometheus.CounterVec // api, reason
	prompt    *prometheus.CounterVec // api
	cached    *prometheus.CounterVec
	generated *prometheus.CounterVec
	prefillS  *prometheus.CounterVec
	decodeS   *prometheus.CounterVec
	prefillTS *prometheus.GaugeVec // the last turn's tokens per second
	decodeTS  *prometheus.GaugeVec
	drafted   prometheus.Counter
	accepted  prometheus.Counter
}

// turnAPIs are the api label's values: the APIs, and the chat's own turns.
var turnAPIs = []string{apiOpenAI, apiCompletions, apiOllama, apiAnthropic, apiTranscription, "chat"}

func newMetrics(s *Server, memory func() (memledger.Memory, error)) *promMetrics {
	m := &promMetrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "orchard", Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	m.requests = counter("http_requests_total", "HTTP requests answered, by endpoint (the route's pattern) and status code.", "endpoint", "code")
	m.turns = counter("turns_total", "Turns generated, by API (chat: the chat screen's) and how they ended (eos, cap, stop, contextFull, cancelled, error).", "api", "reason")
	m.prompt = counter("prompt_tokens_total", "Prompt tokens of the turns, cached or prefilled.", "api")
	m.cached = counter("cached_tokens_total", "Prompt tokens served from the cache instead of prefilled.", "api")
	m.generated = counter("generated_tokens_total", "Tokens generated.", "api")
	m.prefillS = counter("prefill_seconds_total", "Seconds spent prefilling.", "api")
	m.decodeS = counter("decode_seconds_total", "Seconds spent decoding.", "api")
	gauge := func(name, help string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "orchard", Name: name, Help: help}, []string{"api"})
		m.reg.MustRegister(g)
		return g
	}
	m.prefillTS = gauge("prefill_tokens_per_second", "Prefill speed of the last turn that prefilled.")
	m.decodeTS = gauge("decode_tokens_per_second", "Decode speed of the last turn that decoded.")
	for _, api := range turnAPIs {
		for _, c := range []*prometheus.CounterVec{m.prompt, m.cached, m.generated, m.prefillS, m.decodeS} {
			c.WithLabelValues(api)
		}
	}
	m.drafted = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "orchard", Name: "draft_tokens_total",
		Help: "Tokens verified by speculation, the prediction token included."})
	m.accepted = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "orchard", Name: "draft_accepted_tokens_total",
		Help: "Verified tokens accepted (accepted/drafted is the draft acceptance)."})
	m.reg.MustRegister(m.drafted, m.accepted)

	gaugeFunc := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "orchard", Name: name, Help: help}, f))
	}
	counterFunc := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "orchard", Name: name, Help: help}, f))
	}
	gaugeFunc("queue_waiting", "Requests waiting for the engine.", func() float64 { _, w := s.q.status(); return float64(w) })
	gaugeFunc("queue_running", "Requests generating (0 or 1).", func() float64 {
		if r, _ := s.q.status(); r != "" {
			return 1
		}
		return 0
	})
	gaugeFunc("queue_limit", "Requests that may wait before more are refused with 503.", func() float64 { return float64(s.o.QueueLimit) })
	conv := func(f func(engine.ConversationStats) float64) func() float64 {
		return func() float64 { return f(s.eng.ConversationStats()) }
	}
	counterFunc("conversation_restores_total", "Requests served by restoring a kept conversation's cache (cache hits).",
		conv(func(c engine.ConversationStats) float64 { return float64(c.Restores) }))
	counterFunc("conversation_evictions_total", "Kept conversations pushed out of memory for the budget (spilled to disk when a spill folder is set).",
		conv(func(c engine.ConversationStats) float64 { return float64(c.Evictions) }))
	gaugeFunc("conversations_kept", "Conversations kept in memory besides the session's.", conv(func(c engine.ConversationStats) float64 { return float64(c.Kept) }))
	gaugeFunc("conversation_cache_bytes", "Cache bytes the kept conversations hold in memory.", conv(func(c engine.ConversationStats) float64 { return float64(c.Bytes) }))
	gaugeFunc("conversations_on_disk", "Conversations spilled to disk.", conv(func(c engine.ConversationStats) float64 { return float64(c.OnDisk) }))
	gaugeFunc("conversation_disk_bytes", "Cache bytes of the conversations on disk.", conv(func(c engine.ConversationStats) float64 { return float64(c.DiskBytes) }))
	counterFunc("media_encoded_total", "Pictures and clips encoded.", func() float64 { return float64(s.eng.MediaStats().Encoded) })
	counterFunc("media_reused_total", "Pictures and clips served from the rows kept by sha256.", func() float64 { return float64(s.eng.MediaStats().Reused) })
	m.reg.MustRegister(memoryCollector{read: memory})
	m.reg.MustRegister(collectors.NewGoCollector())
	return m
}

// memoryCollector reads the three memory ledgers when scraped.
type memoryCollector struct {
	read func() (memledger.Memory, error)
}

var memoryDesc = prometheus.NewDesc("orchard_memory_bytes",
	"The memory ledgers: footprint (charged to this process), model (held outside it: mapped sidecars, wired Core ML weights) and available (to new work without swapping).",
	[]string{"ledger"}, nil)

func (c memoryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- memoryDesc }

func (c memoryCollector) Collect(ch chan<- prometheus.Metric) {
	if c.read == nil {
		return
	}
	mem, err := c.read()
	if err != nil {
		return
	}
	model := mem.Mapped
	if model == 0 {
		model = mem.Wired // as the engine's ledger counts it
	}
	for _, l := range []struct {
		name string
		v    uint64
	}{{"footprint", mem.Footprint}, {"model", model}, {"available", mem.Available}} {
		ch <- prometheus.MustNewConstMetric(memoryDesc, prometheus.GaugeValue, float64(l.v), l.name)
	}
}

// turn counts a turn's figures; ev ends it (Finished or Cancelled).
func (m *promMetrics) turn(api string, ev engine.Event) {
	var tm engine.TurnMetrics
	switch e := ev.(type) {
	case engine.Finished:
		tm = e.Metrics
	case engine.Cancelled:
		tm = e.Metrics
	case engine.Failed:
		m.turns.WithLabelValues(api, "error").Inc()
		return
	default:
		return
	}
	m.turns.WithLabelValues(api, tm.FinishReason).Inc()
	m.prompt.WithLabelValues(api).Add(float64(tm.PromptTokens))
	m.cached.WithLabelValues(api).Add(float64(tm.ReusedTokens))
	m.generated.WithLabelValues(api).Add(float64(tm.GeneratedTokens))
	m.prefillS.WithLabelValues(api).Add(tm.PrefillSeconds)
	if tm.PrefillTokPerSec > 0 {
		m.prefillTS.WithLabelValues(api).Set(tm.PrefillTokPerSec)
	}
	if tm.DecodeTokPerSec > 0 {
		m.decodeS.WithLabelValues(api).Add(float64(tm.GeneratedTokens) / tm.DecodeTokPerSec)
		m.decodeTS.WithLabelValues(api).Set(tm.DecodeTokPerSec)
	}
	m.drafted.Add(float64(tm.Spec.Drafted))
	m.accepted.Add(float64(tm.Spec.Accepted))
}

// count wraps the routes: it answers each request and counts it by the
// pattern that routes it and the status written.
func (m *promMetrics) count(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		if pattern == "" || pattern == "/" {
			pattern = "unknown"
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		m.requests.WithLabelValues(pattern, strconv.Itoa(sw.code)).Inc()
	})
}

// handler is GET /metrics.
func (m *promMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// statusWriter remembers the status a handler writes; Unwrap lets
// http.ResponseController reach the connection (flushes of streams).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
