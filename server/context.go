package server

import (
	"net/http"

	"github.com/orchard-llm/orchard/engine"
)

// What the model sees of the chat's conversation, for an attached
// screen: the commands of engine/compact.go, each answered as the other
// chat commands are (202 and the results on the stream with Prefer:
// respond-async; else the result), and a message's price before it is
// sent, answered at once from the engine's Estimator.

func (s *Server) contextRoutes(mux *router) {
	mux.HandleFunc("POST /orchard/v1/session/compact", s.sessionCompact)
	mux.HandleFunc("POST /orchard/v1/session/pin", s.sessionPin)
	mux.HandleFunc("POST /orchard/v1/session/summary", s.sessionSummary)
	mux.HandleFunc("POST /orchard/v1/session/elide", s.sessionElide)
	mux.HandleFunc("GET /orchard/v1/session/context", s.sessionContext)
	mux.HandleFunc("POST /orchard/v1/session/cost", s.sessionCost)
}

// sessionCompact is POST /orchard/v1/session/compact: the model
// summarises the oldest turns it sees (compacting, compacted and context
// events).
func (s *Server) sessionCompact(w http.ResponseWriter, r *http.Request) {
	s.run(w, r, engine.OpCompact, func(e Engine) error { return e.Compact() })
}

// sessionPin is POST /orchard/v1/session/pin {"index": I, "pinned": B}.
func (s *Server) sessionPin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Index  int  `json:"index"`
		Pinned bool `json:"pinned"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	s.run(w, r, engine.OpPin, func(e Engine) error { return e.Pin(body.Index, body.Pinned) })
}

// sessionSummary is POST /orchard/v1/session/summary {"text": T}: the
// user's summary in place of the model's.
func (s *Server) sessionSummary(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text string `json:"text"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	s.run(w, r, engine.OpSummary, func(e Engine) error { return e.SetSummary(body.Text) })
}

// sessionElide is POST /orchard/v1/session/elide {"index": I,
// "attachment": A, "caption": C}.
func (s *Server) sessionElide(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Index      int    `json:"index"`
		Attachment int    `json:"attachment"`
		Caption    string `json:"caption"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	s.run(w, r, engine.OpElide, func(e Engine) error { return e.ElideMedia(body.Index, body.Attachment, body.Caption) })
}

// sessionContext is GET /orchard/v1/session/context: the window's
// breakdown (a context event, or {"context": …}).
func (s *Server) sessionContext(w http.ResponseWriter, r *http.Request) {
	s.run(w, r, engine.OpContext, func(e Engine) error { return e.ContextView() })
}

// costRequest is a message to price: its text and its files' soft
// tokens (the screen knows them; the server never sees the files).
type costRequest struct {
	Text  string             `json:"text"`
	Media []engine.MediaCost `json:"media,omitempty"`
}

// sessionCost is POST /orchard/v1/session/cost: what the message would
// cost against the chat's conversation now, from the engine's Estimator
// (the bundle's tokenizer and template: an attached screen need not
// have the bundle).
func (s *Server) sessionCost(w http.ResponseWriter, r *http.Request) {
	var body costRequest
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	if err := s.checkText("text", body.Text); err != nil {
		s.failure(w, err)
		return
	}
	est, err := s.eng.Estimator()
	if err != nil {
		s.failure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, est.Cost(body.Text, body.Media...))
}
