package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/mailbox"
)

// generation is one API request on its way through the line and the
// engine.
type generation struct {
	api    string // apiOpenAI, apiOllama, ...: the metrics' label
	path   string // the endpoint it came to, for the screens watching the line
	id     string
	client string
	req    engine.Request
	tools  toolMode // how the reply's tool calls are answered (tools_openai.go)
}

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// generate queues g, waits for its turn and runs it, handing each event
// but the last to each on the caller's goroutine; it returns the last
// (Finished, Cancelled or Failed). An error means it never ran (a refused
// request, a full line, shutdown, or ctx ended while it waited). When ctx
// ends while it runs — the client went away — the generation is cancelled
// at once and the engine stops after the chain call in flight. When each
// fails (the client cannot be written to) it is cancelled likewise.
func (s *Server) generate(ctx context.Context, g generation, each func(engine.Event) error) (engine.Event, error) {
	if g.req.Settings.MaxTokens == 0 {
		g.req.Settings.MaxTokens = s.o.MaxReplyTokens
	}
	if err := s.checkSettings(g.req.Settings); err != nil {
		return nil, &engine.RequestError{Err: err}
	}
	if !s.enter() {
		return nil, errShuttingDown
	}
	defer s.inflight.Done()
	t, err := s.q.enqueue(holder{client: g.client, kind: "api", api: g.api, endpoint: g.path, request: g.id})
	if err != nil {
		return nil, err
	}
	s.publish(wireEvent{Type: "request", Request: g.id, Phase: "queued", API: g.api, Client: g.client})
	if err := s.q.wait(ctx, t); err != nil {
		s.publish(wireEvent{Type: "request", Request: g.id, Phase: "gone", API: g.api, Client: g.client})
		return nil, err
	}
	defer s.q.release(t)
	if s.closing.Load() {
		return nil, errShuttingDown
	}
	box := mailbox.New(0, engine.MergeDeltas)
	job := s.eng.Complete(g.req, func(ev engine.Event) { box.Push(ev) })
	defer s.track(job)()
	s.publish(wireEvent{Type: "request", Request: g.id, Phase: "started", API: g.api, Client: g.client})
	gone := ctx.Done()
	for {
		select {
		case <-box.Wake():
		case <-gone:
			job.Cancel()
			gone = nil
		}
		evs, _ := box.Take()
		for _, ev := range evs {
			if w, ok := toWire(ev); ok {
				w.Request = g.id
				s.publish(w)
			}
			switch ev.(type) {
			case engine.Finished, engine.Cancelled, engine.Failed:
				s.metrics.turn(g.api, ev)
				return ev, nil
			}
			if each != nil {
				if err := each(ev); err != nil {
					job.Cancel()
					each = nil
				}
			}
		}
	}
}

// generateWhole runs g for an answer given whole: it returns the reply's
// Finished event, or hands fail what went wrong and returns false. A
// client gone away gets nothing.
func (s *Server) generateWhole(r *http.Request, g generation, fail func(error)) (engine.Finished, bool) {
	end, err := s.generate(r.Context(), g, nil)
	if err != nil {
		fail(err)
		return engine.Finished{}, false
	}
	switch e := end.(type) {
	case engine.Failed:
		fail(e.Err)
	case engine.Cancelled:
		if r.Context().Err() == nil {
			fail(errShuttingDown) // cancelled at shutdown
		}
	case engine.Finished:
		return e, true
	}
	return engine.Finished{}, false
}

// flusher flushes a streamed response after each event.
func flush(w http.ResponseWriter) error {
	return http.NewResponseController(w).Flush()
}
