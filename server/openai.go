package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tools"
)

// chatRequest is OpenAI's chat completion request; fields orchard does
// not know are ignored, and the ones it cannot honour are refused.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"`
	N                   *int            `json:"n"`
	User                string          `json:"user"`
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	PresencePenalty     *float64        `json:"presence_penalty"`
	Logprobs            *bool           `json:"logprobs"`
	Tools               json.RawMessage `json:"tools"`
	Functions           json.RawMessage `json:"functions"`     // the legacy form of tools
	FunctionCall        json.RawMessage `json:"function_call"` // and of tool_choice
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	ResponseFormat      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	// orchard's extensions, as llama.cpp and vLLM name them.
	TopK              *int     `json:"top_k"`
	MinP              *float64 `json:"min_p"`
	RepetitionPenalty *float64 `json:"repetition_penalty"`
	// Truncation is the Responses API's field: "auto" fits a conversation
	// that does not fit the context (truncation.go); "disabled" refuses.
	Truncation string `json:"truncation"`

	// ignored are the sampling parameters the bundle could not honour
	// and decoding ignored (sampling.go), for X-Orchard-Ignored.
	ignored []string
	tools   toolMode // what tools and tool_choice ask (tools_openai.go)
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is one message. Content is a string or an array of parts:
// text, image_url (a data URL) and input_audio.
type chatMessage struct {
	Role         string          `json:"role"`
	Content      contentJSON     `json:"content"`
	ToolCalls    json.RawMessage `json:"tool_calls"`
	FunctionCall json.RawMessage `json:"function_call"` // legacy
	// A tool message's call: its id (OpenAI), or the function's name
	// (ollama's tool_name; OpenAI's legacy name).
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	ToolName   string `json:"tool_name"`
}

// given reports whether a JSON field holds something: not absent, null,
// an empty array or an empty object.
func given(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "[]", "{}":
		return false
	}
	return true
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// ImageURL is {"url": ...}, as OpenAI sends it, or the URL alone, as
	// some clients do. Files are decoded as the JSON is read (inline.go).
	ImageURL   imageURLField `json:"image_url"`
	InputAudio *struct {
		Data base64Field `json:"data"`
	} `json:"input_audio"`
}

// messageContent returns a message's text and the files of its parts: the
// text parts joined by newlines, the pictures and clips in their order
// (the prompt lays a message out as the model was trained: its pictures,
// then its clips, then its words).
func messageContent(i int, c *contentJSON, mr mediaRules) (string, []engine.MediaFile, error) {
	if c.err != nil {
		return "", nil, bad("invalid_value", fmt.Sprintf("messages[%d].content", i), c.err.Error())
	}
	if !c.array {
		return c.text, nil, nil
	}
	var texts []string
	var files []engine.MediaFile
	for j := range c.parts {
		p := &c.parts[j]
		param := fmt.Sprintf("messages[%d].content[%d]", i, j)
		var f engine.MediaFile
		var err error
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
			continue
		case "image_url":
			if u := &p.ImageURL.inlineFile; !u.set || u.url == "" && !u.dataURL && u.err == nil {
				return "", nil, bad("invalid_value", param, "an image_url part needs image_url.url")
			}
			f, err = mr.imageURL(param, &p.ImageURL.inlineFile)
		case "input_audio":
			if p.InputAudio == nil || !p.InputAudio.Data.set {
				return "", nil, bad("invalid_value", param, "an input_audio part needs input_audio.data")
			}
			f, err = mr.inputAudio(param, &p.InputAudio.Data.inlineFile)
		default:
			return "", nil, bad("unsupported_content", param, fmt.Sprintf("content parts of type %q are not supported: send text, image_url (a data URL) or input_audio", p.Type))
		}
		if err != nil {
			return "", nil, err
		}
		files = append(files, f)
	}
	return strings.Join(texts, "\n"), files, nil
}

// conversation maps OpenAI messages to the engine's, as Gemma 4's template
// takes them: leading system (and developer) messages become the system
// prompt, a later one a system turn where it stands; assistant is model,
// and an assistant message last is the reply begun, which the reply
// continues (a prefill). Files are taken in user messages only, and
// returned by the engine message's index.
func conversation(in []chatMessage, mr mediaRules) (system string, out []engine.Message, media map[int][]engine.MediaFile, err error) {
	var sys []string
	var names callNames
	for i := range in {
		m := &in[i]
		text, files, err := messageContent(i, &m.Content, mr)
		if err != nil {
			return "", nil, nil, err
		}
		if len(files) > 0 {
			if m.Role != "user" {
				return "", nil, nil, bad("invalid_value", fmt.Sprintf("messages[%d].content", i), "pictures and clips are taken in user messages only")
			}
			if media == nil {
				media = map[int][]engine.MediaFile{}
			}
			media[len(out)] = files
		}
		switch m.Role {
		case "system", "developer":
			if len(out) > 0 {
				out = append(out, engine.Message{Role: "system", Content: text})
				continue
			}
			sys = append(sys, text)
		case "user":
			out = append(out, engine.Message{Role: "user", Content: text})
		case "assistant":
			if given(m.FunctionCall) {
				return "", nil, nil, bad("unsupported_value", fmt.Sprintf("messages[%d].function_call", i), "function_call (the legacy form of tool_calls) is not supported: send tool_calls")
			}
			msg := engine.Message{Role: "model", Content: text}
			if given(m.ToolCalls) {
				calls, ids, err := callsOf(m.ToolCalls, fmt.Sprintf("messages[%d].tool_calls", i))
				if err != nil {
					return "", nil, nil, err
				}
				msg.Calls = calls
				names.add(calls, ids)
			}
			out = append(out, msg)
		case "tool":
			name, err := names.name(m, fmt.Sprintf("messages[%d]", i))
			if err != nil {
				return "", nil, nil, err
			}
			if n := len(out); n == 0 || out[n-1].Role != "tool" && (out[n-1].Role != "model" || len(out[n-1].Calls) == 0) {
				return "", nil, nil, bad("invalid_value", fmt.Sprintf("messages[%d]", i), "a tool message must follow the assistant message with its call (or another tool message)")
			}
			out = append(out, engine.Message{Role: "tool", Responses: []tools.Response{{Name: name, Value: text}}})
		case "function":
			return "", nil, nil, bad("unsupported_value", fmt.Sprintf("messages[%d].role", i), "function messages (the legacy form of tool messages) are not supported: send role tool with tool_call_id")
		default:
			return "", nil, nil, bad("invalid_value", fmt.Sprintf("messages[%d].role", i), fmt.Sprintf("unknown role %q: want system, user, assistant or tool", m.Role))
		}
	}
	switch {
	case !slices.ContainsFunc(out, func(m engine.Message) bool { return m.Role == "user" }):
		return "", nil, nil, bad("invalid_value", "messages", "the conversation needs a user message")
	case out[len(out)-1].Role == "system":
		return "", nil, nil, bad("invalid_value", "messages", "the conversation must end with a user message (or an assistant message for the reply to continue), not a system message")
	}
	return strings.Join(sys, "\n\n"), out, media, nil
}

// stopList reads "stop": a string or an array of strings.
func stopList(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, bad("invalid_value", "stop", "stop must be a string or an array of strings")
	}
	return many, nil
}

// modelOK reports whether name asks for the served model: its name,
// "orchard" for whatever is served, an alias (server.aliases), each also
// with ollama's ":latest", in any case; or no name at all.
func (s *Server) modelOK(name string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ":latest")
	if name == "" || name == strings.ToLower(s.info.Name) || name == "orchard" {
		return true
	}
	return slices.ContainsFunc(s.o.Aliases, func(a string) bool { return strings.EqualFold(a, name) })
}

// unknownModel refuses a model not served here: 404, as OpenAI and
// ollama answer it.
func (s *Server) unknownModel(name string) error {
	return &badRequest{status: http.StatusNotFound, code: "model_not_found", param: "model",
		msg: fmt.Sprintf("model %q not found: this server serves %q (also as \"orchard\"; more names with server.aliases)", name, s.info.Name)}
}

// openAIRequest turns a chat completion request into an engine request.
func (s *Server) openAIRequest(cr *chatRequest) (engine.Request, error) {
	if !s.modelOK(cr.Model) {
		return engine.Request{}, s.unknownModel(cr.Model)
	}
	switch {
	case cr.N != nil && *cr.N != 1:
		return engine.Request{}, bad("unsupported_value", "n", "n must be 1: one engine generates one reply at a time")
	case cr.Logprobs != nil && *cr.Logprobs:
		return engine.Request{}, bad("unsupported_value", "logprobs", "logprobs are not supported")
	case given(cr.Functions):
		return engine.Request{}, bad("unsupported_value", "functions", "functions (the legacy form of tools) are not supported: send tools")
	case given(cr.FunctionCall) && string(bytes.TrimSpace(cr.FunctionCall)) != `"none"`:
		return engine.Request{}, bad("unsupported_value", "function_call", "function_call (the legacy form of tool_choice) is not supported: send tool_choice")
	case cr.ResponseFormat != nil && cr.ResponseFormat.Type != "" && cr.ResponseFormat.Type != "text":
		return engine.Request{}, bad("unsupported_value", "response_format", "only the text response format is supported")
	case cr.FrequencyPenalty != nil && *cr.FrequencyPenalty != 0:
		return engine.Request{}, bad("unsupported_value", "frequency_penalty", "frequency_penalty is not supported; repetition_penalty is (bundles with logits)")
	case cr.PresencePenalty != nil && *cr.PresencePenalty != 0:
		return engine.Request{}, bad("unsupported_value", "presence_penalty", "presence_penalty is not supported; repetition_penalty is (bundles with logits)")
	}
	decls, err := declarationsOf(cr.Tools)
	if err != nil {
		return engine.Request{}, err
	}
	if decls, cr.tools, err = toolChoiceOf(cr.ToolChoice, decls); err != nil {
		return engine.Request{}, err
	}
	cr.tools.single = cr.ParallelToolCalls != nil && !*cr.ParallelToolCalls
	system, msgs, media, err := conversation(cr.Messages, s.mediaRules())
	if err != nil {
		return engine.Request{}, err
	}
	if err := s.checkText("messages", textsOf(system, msgs)...); err != nil {
		return engine.Request{}, err
	}
	set := s.o.Defaults
	set.System, set.Thinking, set.MaxTokens = system, false, 0
	if set.ContextPolicy, err = s.truncationPolicy(cr.Truncation, "truncation"); err != nil {
		return engine.Request{}, err
	}
	switch {
	case cr.MaxCompletionTokens != nil:
		set.MaxTokens = *cr.MaxCompletionTokens
	case cr.MaxTokens != nil:
		set.MaxTokens = *cr.MaxTokens
	}
	if set.MaxTokens < 0 || (cr.MaxCompletionTokens != nil || cr.MaxTokens != nil) && set.MaxTokens == 0 {
		return engine.Request{}, bad("invalid_value", "max_tokens", "max_tokens must be at least 1")
	}
	ask := askedSampling{Temperature: cr.Temperature, TopP: cr.TopP, MinP: cr.MinP, RepetitionPenalty: cr.RepetitionPenalty, TopK: cr.TopK, Seed: cr.Seed}
	if cr.ignored, err = s.applySampling(&set, ask, openAISamplingNames); err != nil {
		return engine.Request{}, err
	}
	stop, err := stopList(cr.Stop)
	if err != nil {
		return engine.Request{}, err
	}
	if err := s.checkSettings(set); err != nil {
		return engine.Request{}, openAISamplingNames.refusal(err)
	}
	return engine.Request{Messages: msgs, Settings: set, Stop: stop, Media: media, Tools: decls}, nil
}

// OpenAI response shapes: a completion object, of chat choices or of
// text choices (completions.go).
type completionObject[C any] struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Created           int64      `json:"created"`
	Model             string     `json:"model"`
	SystemFingerprint string     `json:"system_fingerprint"`
	Choices           []C        `json:"choices"`
	Usage             *chatUsage `json:"usage,omitempty"`
}

type chatCompletion = completionObject[chatChoice]

type chatChoice struct {
	Index        int       `json:"index"`
	Message      *chatOut  `json:"message,omitempty"`
	Delta        *chatOut  `json:"delta,omitempty"`
	FinishReason *string   `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs"`
}

type chatOut struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	Refusal   *string        `json:"refusal,omitempty"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func usageOf(m engine.TurnMetrics) *chatUsage {
	u := &chatUsage{PromptTokens: m.PromptTokens, CompletionTokens: m.GeneratedTokens, TotalTokens: m.PromptTokens + m.GeneratedTokens}
	u.PromptTokensDetails.CachedTokens = m.ReusedTokens
	return u
}

// finishReason maps the engine's reason to OpenAI's.
func finishReason(r string) string {
	switch r {
	case "cap", "contextFull":
		return "length"
	}
	return "stop"
}

func (s *Server) fingerprint() string {
	id := s.o.BundleID
	if len(id) > 12 {
		id = id[:12]
	}
	return "orchard-" + id
}

// chatCompletions is POST /v1/chat/completions.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var cr chatRequest
	if err := s.decodeJSON(w, r, &cr); err != nil {
		s.failure(w, err)
		return
	}
	req, err := s.openAIRequest(&cr)
	if err != nil {
		s.failure(w, err)
		return
	}
	s.noteIgnored(w, apiOpenAI, cr.ignored)
	s.noteToolChoice(w, cr.tools)
	g := generation{api: apiOpenAI, path: r.URL.Path, id: newID("chatcmpl-"), client: clientKey(r, cr.User), req: req}
	base := chatCompletion{ID: g.id, Created: time.Now().Unix(), Model: s.info.Name, SystemFingerprint: s.fingerprint()}
	if !cr.Stream {
		if e, ok := s.generateWhole(r, g, func(err error) { s.failure(w, err) }); ok {
			content, calls, reason := toolReply(e, cr.tools)
			base.Object = "chat.completion"
			base.Choices = []chatChoice{{Message: &chatOut{Role: "assistant", Content: &content, ToolCalls: callsJSON(calls, 0, false)}, FinishReason: &reason}}
			base.Usage = usageOf(e.Metrics)
			writeJSON(w, http.StatusOK, base)
		}
		return
	}

	base.Object = "chat.completion.chunk"
	empty := ""
	td := &toolDeltas{mode: cr.tools}
	streamOpenAI(s, w, r, g, apiOpenAI, base, cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage, openAIChoices[chatChoice]{
		opening: []chatChoice{{Delta: &chatOut{Role: "assistant", Content: &empty}}},
		split: func(text string, end bool) []chatChoice {
			before := td.calls
			text, calls := td.push(text, end)
			var out []chatChoice
			if text != "" {
				out = append(out, chatChoice{Delta: &chatOut{Content: &text}})
			}
			if len(calls) > 0 {
				out = append(out, chatChoice{Delta: &chatOut{ToolCalls: callsJSON(calls, before, true)}})
			}
			return out
		},
		last: func(reason string) chatChoice {
			reason = td.reason(reason)
			return chatChoice{Delta: &chatOut{}, FinishReason: &reason}
		},
	})
}

// openAIChoices make the choices of an OpenAI stream's chunks: those the
// stream opens with, one per delta's text, and the last with the finish
// reason.
type openAIChoices[C any] struct {
	opening []C
	delta   func(text string) C
	// split, when set, takes the place of delta: the choices of a delta's
	// text (none, or several), and at the end (end true) of what it held.
	split func(text string, end bool) []C
	last  func(reason string) C
}

// streamOpenAI runs g and streams it as OpenAI's server-sent chunks: the
// opening choices once the reply starts, a chunk per delta, the last with
// the finish reason, the usage when asked; an error after the start as an
// error object; then [DONE]. An error before the start is answered as
// one, in OpenAI's shape worded for api.
func streamOpenAI[C any](s *Server, w http.ResponseWriter, r *http.Request, g generation, api string, base completionObject[C], usage bool, ch openAIChoices[C]) {
	fail := func(err error) { s.classify(api, err).writeOpenAI(w) }
	write := func(choices ...C) error {
		c := base
		c.Choices = choices
		return writeSSE(w, "", c)
	}
	started := false
	start := func() error {
		if started {
			return nil
		}
		started = true
		startSSE(w)
		if len(ch.opening) == 0 {
			return nil
		}
		return write(ch.opening...)
	}
	end, err := s.generate(r.Context(), g, func(ev engine.Event) error {
		switch e := ev.(type) {
		case engine.Started:
			return start()
		case *engine.Delta:
			if err := start(); err != nil || e.Text == "" {
				return err
			}
			if ch.split != nil {
				for _, c := range ch.split(e.Text, false) {
					if err := write(c); err != nil {
						return err
					}
				}
				return nil
			}
			return write(ch.delta(e.Text))
		}
		return nil
	})
	if err != nil {
		fail(err)
		return
	}
	if f, ok := end.(engine.Failed); ok && !started {
		fail(f.Err)
		return
	}
	if start() != nil || r.Context().Err() != nil {
		return
	}
	switch e := end.(type) {
	case engine.Finished:
		if ch.split != nil {
			for _, c := range ch.split("", true) {
				write(c)
			}
		}
		write(ch.last(finishReason(e.Metrics.FinishReason)))
		if usage {
			c := base
			c.Choices = []C{}
			c.Usage = usageOf(e.Metrics)
			writeSSE(w, "", c)
		}
	case engine.Failed:
		f := s.classify(api, e.Err)
		writeSSE(w, "", apiErrorBody{Error: apiErrorDetail{Message: f.msg, Type: f.typ}})
	case engine.Cancelled:
		writeSSE(w, "", apiErrorBody{Error: apiErrorDetail{Message: errShuttingDown.Error() + ": the reply was cut short", Type: "server_error"}})
	}
	io.WriteString(w, "data: [DONE]\n\n")
	flush(w)
}

// writeSSE writes one server-sent event and flushes it.
func writeSSE(w http.ResponseWriter, event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if event != "" {
		buf.WriteString("event: ")
		buf.WriteString(event)
		buf.WriteByte('\n')
	}
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	return flush(w)
}

// models is GET /v1/models.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.modelObject()}})
}

// model is GET /v1/models/{id}.
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	if !s.modelOK(r.PathValue("id")) {
		s.failure(w, s.unknownModel(r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject())
}

func (s *Server) modelObject() map[string]any {
	return map[string]any{"id": s.info.Name, "object": "model", "created": s.started.Unix(), "owned_by": "orchard",
		"family": s.info.Family, "context_length": s.info.Context}
}
