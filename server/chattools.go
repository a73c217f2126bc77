package server

import (
	"encoding/json"
	"net/http"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tools"
)

// The chat's tool loop over a server: an attached screen declares the
// tools its own MCP servers provide and runs their calls; the server runs
// the model. The calls a reply asks for come on the "finished" event, the
// declarations' cost on a "tools" event.

// wireDecl is a tool declaration as PUT /orchard/v1/session/tools takes it.
type wireDecl struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"` // a JSON Schema object
}

// sessionTools is PUT /orchard/v1/session/tools {"tools": [...],
// "max_calls": n}: the chat's tools (none: the chat declares none).
func (s *Server) sessionTools(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tools    []wireDecl `json:"tools"`
		MaxCalls int        `json:"max_calls"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	t := engine.ChatTools{MaxCalls: body.MaxCalls}
	for _, d := range body.Tools {
		if d.Name == "" {
			s.failure(w, bad("invalid_value", "tools", "a tool has no name"))
			return
		}
		t.Decls = append(t.Decls, tools.Declaration(d))
	}
	s.run(w, r, engine.OpTools, func(e Engine) error { return e.SetTools(t) })
}

// sessionToolResults is POST /orchard/v1/session/tool-results
// {"results": [{"name": ..., "value": ...}], "origin": ...}: the results
// of the calls the last reply asked for, one per call in order; the same
// model turn goes on, a chat turn.
func (s *Server) sessionToolResults(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Results json.RawMessage `json:"results"`
		Origin  string          `json:"origin"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	var m engine.Message // its decoding keeps a number's digits (the same bytes, the same cache prefix)
	if err := m.SetToolsJSON(nil, body.Results); err != nil || len(m.Responses) == 0 {
		s.failure(w, bad("invalid_value", "results", "results is a list of {name, value}, one per call"))
		return
	}
	rs := m.Responses
	if err := s.startTurn("", body.Origin, nil, nil, engine.OpToolResults, func(e Engine) error { return e.ToolResults(rs) }); err != nil {
		s.failure(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"status": "queued"})
}

// SetTools declares the attached screen's tools to the server's chat
// (ToolsChanged, or Failed{Op: OpTools}, follows on the stream).
func (c *Client) SetTools(t engine.ChatTools) error {
	ds := make([]wireDecl, len(t.Decls))
	for i, d := range t.Decls {
		ds[i] = wireDecl(d)
	}
	return c.call(engine.OpTools, http.MethodPut, "/orchard/v1/session/tools", map[string]any{"tools": ds, "max_calls": t.MaxCalls})
}

// ToolResults gives the results of the calls a Finished asked for (the
// turn's events follow on the stream).
func (c *Client) ToolResults(rs []tools.Response) error {
	_, raw := engine.Message{Responses: rs}.ToolsJSON()
	return c.call(engine.OpToolResults, http.MethodPost, "/orchard/v1/session/tool-results", map[string]any{"results": raw, "origin": c.origin})
}
