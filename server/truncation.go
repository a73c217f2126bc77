package server

import "github.com/orchard-llm/orchard/engine"

// An API request is fitted to the context only when it asks: OpenAI's
// "truncation": "auto" (and orchard's same field on ollama's /api/chat)
// applies the server's context policy — compact, the default, or
// drop-oldest — to a conversation that does not fit with room for the
// reply; otherwise such a request is a 400 context_length_exceeded, as
// OpenAI answers. The chat's own conversation keeps the chat's policy.

// truncationPolicy is the context policy of a request that asked for
// truncation (param names the field for a refusal).
func (s *Server) truncationPolicy(asked, param string) (engine.ContextPolicy, error) {
	switch asked {
	case "", "disabled":
		return engine.ContextStop, nil
	case "auto":
		if p := s.o.Defaults.ContextPolicy; p == engine.ContextDropOldest || p == engine.ContextCompact {
			return p, nil
		}
		return engine.ContextCompact, nil
	}
	return "", bad("invalid_value", param, `truncation must be "auto" or "disabled"`)
}
