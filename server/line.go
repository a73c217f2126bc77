package server

import (
	"strings"

	"github.com/orchard-llm/orchard/engine"
)

// The line on the event stream: every change of the scheduler's line is
// a "queue" event carrying the whole line — what runs, how many wait,
// the chat's message's place — so an attached screen shows an API
// request at work and says where its own message waits. The state event
// carries the line too.

// wireLine is the line on the wire.
type wireLine struct {
	Running   *wireHolder `json:"running,omitempty"`    // nil: the engine is free
	Waiting   int         `json:"waiting"`              // requests in line, the chat's message included
	ChatPlace int         `json:"chat_place,omitempty"` // the chat's message's place in line (1: next)
}

// wireHolder says what runs: the chat's turn or an API request (its
// API, endpoint, client and id).
type wireHolder struct {
	Kind     string `json:"kind"` // "chat" or "api"
	API      string `json:"api,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Client   string `json:"client,omitempty"`
	Request  string `json:"request,omitempty"`
}

func (l lineState) wire() *wireLine {
	w := &wireLine{Waiting: l.waiting, ChatPlace: l.chatPlace}
	if h := l.running; h != nil {
		w.Running = &wireHolder{Kind: h.kind, API: h.api, Endpoint: h.endpoint, Client: h.client, Request: h.request}
	}
	return w
}

// lineChanged passes the scheduler's line to the subscribers; a state
// older than the one passed already (the scheduler tells outside its
// lock, so two may overtake each other) is dropped.
func (s *Server) lineChanged(l lineState) {
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	if l.seq <= s.line.seq {
		return
	}
	s.line = l
	s.broadcastLocked(wireEvent{Type: "queue", Line: l.wire()})
}

// event is the line as the chat screen's event; gen and tps are the
// running API reply's figures so far.
func (w *wireLine) event(gen int, tps float64) engine.Line {
	if w == nil {
		return engine.Line{}
	}
	l := engine.Line{Waiting: w.Waiting, Place: w.ChatPlace}
	if r := w.Running; r != nil {
		l.Busy = r.Kind
		if r.Kind == "api" {
			l.Endpoint, l.Client, l.Generated, l.TokPerS = r.Endpoint, clientName(r.Client), gen, tps
			if l.Endpoint == "" {
				l.Endpoint = r.API
			}
		}
	}
	return l
}

// clientName is a client's key (clientKey) as a person reads it.
func clientName(key string) string {
	kind, name, ok := strings.Cut(key, ":")
	switch {
	case !ok && key == "unix":
		return "the unix socket"
	case !ok:
		return key
	case kind == "user":
		return "user " + name
	}
	return name
}

// apiRequest is the id of the API request that runs, "" when none.
func (w *wireLine) apiRequest() string {
	if w == nil || w.Running == nil || w.Running.Kind != "api" {
		return ""
	}
	return w.Running.Request
}
