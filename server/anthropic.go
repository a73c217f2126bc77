package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/orchard-llm/orchard/engine"
)

// Anthropic's Messages API, POST /v1/messages, as ollama, llama-server and
// LM Studio serve it, for the Anthropic SDKs and the tools built on them.
// The messages go through the chat path's conversation rules (their
// content blocks become its content parts), so both APIs accept the same
// conversations.

type messagesRequest struct {
	Model         string             `json:"model"`
	MaxTokens     *int               `json:"max_tokens"`
	Messages      []anthropicMessage `json:"messages"`
	System        json.RawMessage    `json:"system"` // a string or text blocks
	StopSequences []string           `json:"stop_sequences"`
	Stream        bool               `json:"stream"`
	Temperature   *float64           `json:"temperature"`
	TopP          *float64           `json:"top_p"`
	TopK          *int               `json:"top_k"`
	Metadata      *struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	Tools      json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	Thinking   *struct {
		Type string `json:"type"`
	} `json:"thinking"`

	ignored []string // the sampling parameters decoding ignored (sampling.go)
	tools   toolMode // tools_anthropic.go
}

// anthropicSamplingNames are the Messages API's names of the parameters
// (it has no min_p, repetition penalty or seed).
var anthropicSamplingNames = samplingNames{"temperature", "top_p", "top_k", "", "", "", "max_tokens"}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content anthropicContent `json:"content"`
}

// anthropicContent is a message's content: a string, or content blocks
// (read in place; pictures decoded as the JSON is read, inline.go).
type anthropicContent struct {
	text   string
	blocks []anthropicBlock
	array  bool
	err    error
}

func (c *anthropicContent) UnmarshalJSON(raw []byte) error {
	c.text, c.blocks, c.array, c.err = textOrArray[anthropicBlock](raw, "content blocks")
	return nil
}

// anthropicBlock is a content block; cache_control and citations are
// accepted and ignored (the cache is automatic).
type anthropicBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string      `json:"type"` // base64 or url
		MediaType string      `json:"media_type"`
		Data      base64Field `json:"data"`
	} `json:"source"`
	// tool_use and tool_result blocks (tools_anthropic.go).
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// anthropicMessageOut is a message as the API answers it, whole or, in
// message_start, empty.
type anthropicMessageOut struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []any          `json:"content"` // anthropicText, anthropicToolUse
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        anthropicUsage `json:"usage"`
}

type anthropicText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// anthropicUsage counts as Anthropic does: input_tokens are the prompt
// tokens not read from the cache, so the prompt is their sum with
// cache_read_input_tokens.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func anthropicUsageOf(m engine.TurnMetrics) anthropicUsage {
	return anthropicUsage{InputTokens: m.PromptTokens - m.ReusedTokens, OutputTokens: m.GeneratedTokens, CacheReadInputTokens: m.ReusedTokens}
}

// anthropicStop maps the engine's finish reason to stop_reason and
// stop_sequence.
func anthropicStop(f engine.Finished) (*string, *string) {
	reason := "end_turn"
	var seq *string
	switch f.Metrics.FinishReason {
	case "cap":
		reason = "max_tokens"
	case "contextFull":
		reason = "model_context_window_exceeded"
	case "stop":
		if f.Stop != "" {
			reason = "stop_sequence"
			s := f.Stop
			seq = &s
		}
	}
	return &reason, seq
}

// anthropicErrorType is Anthropic's error type for an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusConflict, http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	return "api_error"
}

type anthropicErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func anthropicErrorOf(status int, msg string) anthropicErrorBody {
	b := anthropicErrorBody{Type: "error"}
	b.Error.Type, b.Error.Message = anthropicErrorType(status), msg
	return b
}

// writeAnthropic writes Anthropic's {"type": "error", "error": {...}}.
func (f apiFailure) writeAnthropic(w http.ResponseWriter) {
	f.retry(w)
	writeJSON(w, f.status, anthropicErrorOf(f.status, f.msg))
}

func (s *Server) anthropicFailure(w http.ResponseWriter, err error) {
	s.classify(apiAnthropic, err).writeAnthropic(w)
}

// anthropicRequest maps a Messages request to an engine request.
func (s *Server) anthropicRequest(mr *messagesRequest) (engine.Request, error) {
	if !s.modelOK(mr.Model) {
		return engine.Request{}, s.unknownModel(mr.Model)
	}
	switch {
	case mr.MaxTokens == nil:
		return engine.Request{}, bad("invalid_value", "max_tokens", "max_tokens: field required")
	case *mr.MaxTokens < 1:
		return engine.Request{}, bad("invalid_value", "max_tokens", "max_tokens must be at least 1")
	case mr.Thinking != nil && mr.Thinking.Type != "" && mr.Thinking.Type != "disabled":
		return engine.Request{}, bad("unsupported_value", "thinking", "extended thinking is not supported on /v1/messages; send thinking {\"type\": \"disabled\"} or leave it out")
	}
	system, err := anthropicSystem(mr.System)
	if err != nil {
		return engine.Request{}, err
	}
	decls, mode, err := anthropicTools(mr.Tools, mr.ToolChoice)
	if err != nil {
		return engine.Request{}, err
	}
	mr.tools = mode
	in := make([]chatMessage, 0, len(mr.Messages))
	for i, m := range mr.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return engine.Request{}, bad("invalid_value", fmt.Sprintf("messages[%d].role", i), fmt.Sprintf("unknown role %q: want user or assistant (the system prompt is the system field)", m.Role))
		}
		content, err := m.Content.chat(i)
		if err != nil {
			return engine.Request{}, err
		}
		ms, err := m.Content.toolMessages(i, m.Role, content)
		if err != nil {
			return engine.Request{}, err
		}
		in = append(in, ms...)
	}
	_, msgs, media, err := conversation(in, s.mediaRules())
	if err != nil {
		return engine.Request{}, err
	}
	if err := s.checkText("messages", textsOf(system, msgs)...); err != nil {
		return engine.Request{}, err
	}
	set := s.o.Defaults
	// Anthropic's API has no truncation: a conversation that does not fit
	// is refused (truncation.go).
	set.System, set.Thinking, set.MaxTokens, set.ContextPolicy = system, false, *mr.MaxTokens, engine.ContextStop
	ask := askedSampling{Temperature: mr.Temperature, TopP: mr.TopP, TopK: mr.TopK}
	if mr.ignored, err = s.applySampling(&set, ask, anthropicSamplingNames); err != nil {
		return engine.Request{}, err
	}
	if err := s.checkSettings(set); err != nil {
		return engine.Request{}, anthropicSamplingNames.refusal(err)
	}
	return engine.Request{Messages: msgs, Settings: set, Stop: mr.StopSequences, Media: media, Tools: decls}, nil
}

// anthropicSystem reads the system field: a string or text blocks.
func anthropicSystem(raw json.RawMessage) (string, error) {
	return textBlocks(raw, "system", "\n\n")
}

// textBlocks reads a field that holds a string or text blocks (the system
// prompt, a tool_result's content), the blocks' texts joined by sep.
func textBlocks(raw json.RawMessage, param, sep string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", bad("invalid_value", param, param+" must be a string or an array of text blocks")
	}
	var texts []string
	for i, b := range blocks {
		if b.Type != "text" {
			return "", bad("invalid_value", fmt.Sprintf("%s[%d].type", param, i), fmt.Sprintf("blocks of type %q are not supported in %s: send text", b.Type, param))
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, sep), nil
}

// chat turns a message's content into the chat path's: a string stays
// one, text blocks become text parts and base64 image blocks data-URL
// image parts (their bytes already decoded).
func (c *anthropicContent) chat(i int) (contentJSON, error) {
	if c.err != nil {
		return contentJSON{}, bad("invalid_value", fmt.Sprintf("messages[%d].content", i), c.err.Error())
	}
	if !c.array {
		return contentJSON{text: c.text}, nil
	}
	out := contentJSON{array: true, parts: make([]contentPart, 0, len(c.blocks))}
	for j := range c.blocks {
		b := &c.blocks[j]
		param := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch b.Type {
		case "text":
			out.parts = append(out.parts, contentPart{Type: "text", Text: b.Text})
		case "image":
			switch {
			case b.Source == nil:
				return contentJSON{}, bad("invalid_value", param+".source", "an image block needs a source")
			case b.Source.Type == "url":
				return contentJSON{}, bad("unsupported_value", param+".source", "orchard serve does not fetch images from the network: send the picture as a base64 source")
			case b.Source.Type != "base64":
				return contentJSON{}, bad("invalid_value", param+".source.type", fmt.Sprintf("image source of type %q: want base64", b.Source.Type))
			}
			mt := b.Source.MediaType
			if mt == "" {
				mt = "image/png" // the decoders read the bytes' own header
			}
			f := b.Source.Data.inlineFile
			f.dataURL, f.meta = true, mt+";base64"
			out.parts = append(out.parts, contentPart{Type: "image_url", ImageURL: imageURLField{dataURLField{f}}})
		case "tool_use", "tool_result":
			continue // toolMessages
		case "server_tool_use":
			return contentJSON{}, bad("unsupported_value", param, "server tools are not supported")
		default:
			return contentJSON{}, bad("unsupported_content", param, fmt.Sprintf("content blocks of type %q are not supported: send text or image (base64)", b.Type))
		}
	}
	return out, nil
}

// anthropicMessages is POST /v1/messages: one message, or with "stream":
// true its server-sent events: message_start, content_block_start, ping,
// content_block_delta…, content_block_stop, message_delta, message_stop.
func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	var mr messagesRequest
	if err := s.decodeJSON(w, r, &mr); err != nil {
		s.anthropicFailure(w, err)
		return
	}
	req, err := s.anthropicRequest(&mr)
	if err != nil {
		s.anthropicFailure(w, err)
		return
	}
	s.noteIgnored(w, apiAnthropic, mr.ignored)
	s.noteToolChoice(w, mr.tools)
	user := ""
	if mr.Metadata != nil {
		user = mr.Metadata.UserID
	}
	g := generation{api: apiAnthropic, path: r.URL.Path, id: newID("msg_"), client: clientKey(r, user), req: req}
	msg := anthropicMessageOut{ID: g.id, Type: "message", Role: "assistant", Model: s.info.Name, Content: []any{}}
	if !mr.Stream {
		if e, ok := s.generateWhole(r, g, func(err error) { s.anthropicFailure(w, err) }); ok {
			text, calls, _ := toolReply(e, mr.tools)
			if text != "" || len(calls) == 0 {
				msg.Content = append(msg.Content, anthropicText{Type: "text", Text: text})
			}
			for _, c := range calls {
				msg.Content = append(msg.Content, toolUseOf(c))
			}
			msg.StopReason, msg.StopSequence = anthropicStop(e)
			if len(calls) > 0 {
				tool := "tool_use"
				msg.StopReason = &tool
			}
			msg.Usage = anthropicUsageOf(e.Metrics)
			writeJSON(w, http.StatusOK, msg)
		}
		return
	}

	started := false
	td := &toolDeltas{mode: mr.tools}
	blocks := &anthropicBlocks{w: w, open: true, isText: true}
	deliver := func(text string, end bool) error {
		text, calls := td.push(text, end)
		if err := blocks.text(text); err != nil {
			return err
		}
		for _, c := range calls {
			if err := blocks.call(c); err != nil {
				return err
			}
		}
		return nil
	}
	start := func(prompt, reused int) error {
		if started {
			return nil
		}
		started = true
		startSSE(w)
		m := msg
		m.Usage = anthropicUsage{InputTokens: prompt - reused, CacheReadInputTokens: reused}
		if err := writeSSE(w, "message_start", map[string]any{"type": "message_start", "message": m}); err != nil {
			return err
		}
		if err := writeSSE(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": anthropicText{Type: "text"}}); err != nil {
			return err
		}
		return writeSSE(w, "ping", map[string]string{"type": "ping"})
	}
	end, err := s.generate(r.Context(), g, func(ev engine.Event) error {
		switch e := ev.(type) {
		case engine.Started:
			return start(e.PromptTokens, e.ReusedTokens)
		case *engine.Delta:
			if err := start(0, 0); err != nil || e.Text == "" {
				return err
			}
			return deliver(e.Text, false)
		}
		return nil
	})
	if err != nil {
		s.anthropicFailure(w, err)
		return
	}
	if f, ok := end.(engine.Failed); ok && !started {
		s.anthropicFailure(w, f.Err)
		return
	}
	if r.Context().Err() != nil || start(0, 0) != nil {
		return
	}
	switch e := end.(type) {
	case engine.Finished:
		reason, seq := anthropicStop(e)
		deliver("", true)
		blocks.stop()
		if td.calls > 0 {
			tool := "tool_use"
			reason = &tool
		}
		writeSSE(w, "message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]*string{"stop_reason": reason, "stop_sequence": seq}, "usage": anthropicUsageOf(e.Metrics)})
		writeSSE(w, "message_stop", map[string]string{"type": "message_stop"})
	case engine.Failed:
		f := s.classify(apiAnthropic, e.Err)
		writeSSE(w, "error", anthropicErrorOf(f.status, f.msg))
	case engine.Cancelled:
		writeSSE(w, "error", anthropicErrorOf(http.StatusServiceUnavailable, errShuttingDown.Error()+": the reply was cut short"))
	}
}

// startSSE begins a server-sent event stream.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}
