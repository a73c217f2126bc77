package engine

import (
	"fmt"
	"strings"

	"github.com/orchard-llm/orchard/engine/chain"
)

// Raw prompts (Request.Raw) are fed as their text encodes, without the
// chat template: what OpenAI's /v1/completions and ollama's raw generate
// promise. The cache, the conversation keeping and the stop strings work
// on them as on any request; only the prompt's making differs.

// rawIDs encodes a raw prompt: control-token spellings become those
// tokens (the caller wrote the template), and a BOS leads, as every
// prompt the model was trained on begins with one, unless the text
// already starts with it.
func (s *Session) rawIDs(prompt string) []int {
	ids := s.tok.Encode(prompt)
	if bos, ok := s.tok.BOS(); ok && (len(ids) == 0 || ids[0] != bos) {
		ids = append([]int{bos}, ids...)
	}
	return ids
}

// rawFits refuses a raw prompt that leaves no room in the context; nil
// (no raw prompt) fits.
func (s *Session) rawFits(ids []int) error {
	if ids == nil || len(ids) < s.caps.Context {
		return nil
	}
	return &ContextFullError{Tokens: len(ids), Context: s.caps.Context, Raw: true}
}

// ContextFullError is a prompt that does not fit the context. Its text
// speaks to the chat's user; an API names its own remedy from the
// figures. It is ErrContextFull.
type ContextFullError struct {
	Tokens, Context int
	// Alone: the new message alone does not fit, with every older turn
	// dropped; Raw: a raw prompt.
	Alone, Raw bool
	// Policy is the context policy in force, so the advice never
	// suggests it.
	Policy ContextPolicy
}

// Error names no command of one front end (the chat's /clear means
// nothing to orchard run or an API client).
func (e *ContextFullError) Error() string {
	switch {
	case e.Raw:
		return fmt.Sprintf("the prompt is %d tokens and the context holds %d: shorten it: %v", e.Tokens, e.Context, chain.ErrContextFull)
	case e.Alone:
		return fmt.Sprintf("the message alone is %d tokens and the context holds %d: %v", e.Tokens, e.Context, chain.ErrContextFull)
	}
	return fmt.Sprintf("the conversation is %d tokens and the context holds %d: %s: %v", e.Tokens, e.Context, contextAdvice(e.Policy), chain.ErrContextFull)
}

// contextAdvice is what a user can do about a full context under policy:
// never the policy already in force.
func contextAdvice(policy ContextPolicy) string {
	var others []string
	for _, p := range []ContextPolicy{ContextCompact, ContextDropOldest} {
		if p != policy {
			others = append(others, string(p))
		}
	}
	advice := "shorten the message, start a new conversation, or set the context policy to " + strings.Join(others, " or ")
	if policy != ContextCompact {
		advice += " (compact summarises the oldest turns)"
	}
	return advice
}

func (e *ContextFullError) Unwrap() error { return chain.ErrContextFull }
