package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

// OpenAI's legacy completions, POST /v1/completions: a raw prompt, fed
// without the chat template (engine.Request.Raw), continued by the model.
// Its fields are the chat request's where they share a name, and are
// judged by the same code.

type completionRequest struct {
	// The fields completions share with chat completions (model,
	// max_tokens, stream, sampling, stop, n, user, ...), read and judged
	// as there; messages is not read.
	chatRequest
	Prompt   json.RawMessage `json:"prompt"` // a string, or an array of one
	Suffix   *string         `json:"suffix"`
	Echo     bool            `json:"echo"`
	Logprobs *int            `json:"logprobs"` // a count here; it shadows the chat's switch
	BestOf   *int            `json:"best_of"`
}

// defaultCompletionTokens is OpenAI's max_tokens when a completion request
// leaves it out.
const defaultCompletionTokens = 16

type textCompletion = completionObject[textChoice]

type textChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// promptText reads "prompt": a string, or an array holding one.
func promptText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", bad("invalid_value", "prompt", "prompt: field required")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return "", bad("invalid_value", "prompt", "prompt must be a string or an array of one string (token arrays are not supported)")
	}
	if len(many) != 1 {
		return "", bad("unsupported_value", "prompt", "prompt must hold one string: one engine generates one reply at a time")
	}
	return many[0], nil
}

// completionEngineRequest maps a completion request to a raw engine
// request, through the chat request's checks.
func (s *Server) completionEngineRequest(cr *completionRequest) (engine.Request, error) {
	prompt, err := promptText(cr.Prompt)
	if err != nil {
		return engine.Request{}, err
	}
	switch {
	case cr.Suffix != nil && *cr.Suffix != "":
		return engine.Request{}, bad("unsupported_value", "suffix", "suffix (fill in the middle) is not supported")
	case cr.Logprobs != nil:
		return engine.Request{}, bad("unsupported_value", "logprobs", "logprobs are not supported")
	case cr.BestOf != nil && *cr.BestOf != 1:
		return engine.Request{}, bad("unsupported_value", "best_of", "best_of must be 1: one engine generates one reply at a time")
	}
	chat := &cr.chatRequest
	chat.Messages = []chatMessage{{Role: "user", Content: contentJSON{text: prompt}}}
	if chat.MaxTokens == nil && chat.MaxCompletionTokens == nil {
		n := defaultCompletionTokens
		chat.MaxTokens = &n
	}
	req, err := s.openAIRequest(chat)
	if err != nil {
		return engine.Request{}, err
	}
	req.Raw = true
	return req, nil
}

// completions is POST /v1/completions.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var cr completionRequest
	fail := func(err error) { s.classify(apiCompletions, err).writeOpenAI(w) }
	if err := s.decodeJSON(w, r, &cr); err != nil {
		fail(err)
		return
	}
	req, err := s.completionEngineRequest(&cr)
	if err != nil {
		fail(err)
		return
	}
	s.noteIgnored(w, apiCompletions, cr.ignored)
	echo := ""
	if cr.Echo {
		echo = req.Messages[0].Content
	}
	g := generation{api: apiCompletions, path: r.URL.Path, id: newID("cmpl-"), client: clientKey(r, cr.User), req: req}
	base := textCompletion{ID: g.id, Object: "text_completion", Created: time.Now().Unix(), Model: s.info.Name, SystemFingerprint: s.fingerprint()}
	if !cr.Stream {
		if e, ok := s.generateWhole(r, g, fail); ok {
			reason := finishReason(e.Metrics.FinishReason)
			base.Choices = []textChoice{{Text: echo + e.Reply, FinishReason: &reason}}
			base.Usage = usageOf(e.Metrics)
			writeJSON(w, http.StatusOK, base)
		}
		return
	}

	var opening []textChoice
	if echo != "" {
		opening = []textChoice{{Text: echo}}
	}
	streamOpenAI(s, w, r, g, apiCompletions, base, cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage, openAIChoices[textChoice]{
		opening: opening,
		delta:   func(text string) textChoice { return textChoice{Text: text} },
		last:    func(reason string) textChoice { return textChoice{FinishReason: &reason} },
	})
}
