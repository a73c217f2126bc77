package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tools"
)

// ollama's /api/chat and /api/tags, which many tools speak.

type ollamaRequest struct {
	Model    string          `json:"model"`
	Messages []ollamaMessage `json:"messages"`
	Stream   *bool           `json:"stream"` // default true
	Options  struct {
		Temperature   *float64 `json:"temperature"`
		TopP          *float64 `json:"top_p"`
		TopK          *int     `json:"top_k"`
		MinP          *float64 `json:"min_p"`
		RepeatPenalty *float64 `json:"repeat_penalty"`
		Seed          *int64   `json:"seed"`
		NumPredict    *int     `json:"num_predict"`
		Stop          []string `json:"stop"`
	} `json:"options"`
	Format json.RawMessage `json:"format"`
	Tools  json.RawMessage `json:"tools"`
	// KeepAlive is accepted and ignored: the model stays loaded while
	// orchard serve runs (0 asks for an unload: see ollamaLoad).
	KeepAlive json.RawMessage `json:"keep_alive"`
	Think     json.RawMessage `json:"think"`
	// Truncation is orchard's: "auto" fits a conversation that does not
	// fit the context, as on the OpenAI endpoint (truncation.go).
	Truncation string `json:"truncation"`

	ignored []string // the sampling options decoding ignored (sampling.go)
	tools   toolMode
}

type ollamaMessage struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking,omitempty"` // the model's, with think (a sent one is not read)
	// Images are base64 pictures (user messages), decoded as the JSON is
	// read (inline.go); replies carry none.
	Images    []base64Field   `json:"images,omitempty"`
	ToolCalls json.RawMessage `json:"tool_calls,omitempty"`
	ToolName  string          `json:"tool_name,omitempty"` // a tool message's function
}

// ollamaChunk is a line of /api/chat's answer (Message) or of
// /api/generate's (Response); the last has done and the figures.
type ollamaChunk struct {
	Model              string         `json:"model"`
	CreatedAt          string         `json:"created_at"`
	Message            *ollamaMessage `json:"message,omitempty"`
	Response           *string        `json:"response,omitempty"`
	Thinking           string         `json:"thinking,omitempty"` // generate's, with think
	Done               bool           `json:"done"`
	DoneReason         string         `json:"done_reason,omitempty"`
	TotalDuration      int64          `json:"total_duration,omitempty"`
	LoadDuration       int64          `json:"load_duration,omitempty"`
	PromptEvalCount    int            `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64          `json:"prompt_eval_duration,omitempty"`
	EvalCount          int            `json:"eval_count,omitempty"`
	EvalDuration       int64          `json:"eval_duration,omitempty"`
	// PrefilledCount is the part of prompt_eval_count that was prefilled;
	// the rest came from the cache (ollama counts both).
	PrefilledCount *int `json:"orchard_prefilled_count,omitempty"`
}

// ollamaError writes ollama's error shape.
func ollamaError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (s *Server) ollamaFailure(w http.ResponseWriter, err error) {
	s.classify(apiOllama, err).writeOllama(w)
}

// ollamaRequestOf maps an ollama chat request to an engine request.
func (s *Server) ollamaRequestOf(or *ollamaRequest) (engine.Request, error) {
	if !s.modelOK(or.Model) {
		return engine.Request{}, s.unknownModel(or.Model)
	}
	if f := bytes.TrimSpace(or.Format); len(f) > 0 && string(f) != "null" && string(f) != `""` {
		return engine.Request{}, bad("unsupported_value", "format", "structured output (format) is not supported")
	}
	decls, err := declarationsOf(or.Tools)
	if err != nil {
		return engine.Request{}, err
	}
	or.tools = toolMode{on: len(decls) > 0}
	think, err := s.thinkOf(or.Think)
	if err != nil {
		return engine.Request{}, err
	}
	var in []chatMessage
	var files [][]engine.MediaFile
	mr := s.mediaRules()
	for i, m := range or.Messages {
		var fs []engine.MediaFile
		for j := range m.Images {
			img := &m.Images[j].inlineFile
			param := fmt.Sprintf("messages[%d].images[%d]", i, j)
			if err := checkDataURL(img, "image/"); err != nil {
				return engine.Request{}, bad("invalid_value", param, fmt.Sprintf("%s: %v", param, err))
			}
			f, err := mr.inline(engine.MediaImage, param, img)
			if err != nil {
				return engine.Request{}, err
			}
			fs = append(fs, f)
		}
		if len(fs) > 0 && m.Role != "user" {
			return engine.Request{}, bad("invalid_value", fmt.Sprintf("messages[%d].images", i), "images are taken in user messages only")
		}
		files = append(files, fs)
		in = append(in, chatMessage{Role: m.Role, Content: contentJSON{text: m.Content}, ToolCalls: m.ToolCalls, ToolName: m.ToolName})
	}
	system, msgs, _, err := conversation(in, mr)
	if err != nil {
		return engine.Request{}, err
	}
	if err := s.checkText("messages", textsOf(system, msgs)...); err != nil {
		return engine.Request{}, err
	}
	// The images by engine message: system messages lead and carry none.
	var media map[int][]engine.MediaFile
	if off := len(in) - len(msgs); off >= 0 {
		for i, fs := range files {
			if len(fs) > 0 {
				if media == nil {
					media = map[int][]engine.MediaFile{}
				}
				media[i-off] = fs
			}
		}
	}
	set := s.o.Defaults
	set.System, set.Thinking, set.MaxTokens = system, think, 0
	if set.ContextPolicy, err = s.truncationPolicy(or.Truncation, "truncation"); err != nil {
		return engine.Request{}, err
	}
	o := or.Options
	if o.NumPredict != nil && *o.NumPredict > 0 {
		set.MaxTokens = *o.NumPredict
	}
	ask := askedSampling{Temperature: o.Temperature, TopP: o.TopP, MinP: o.MinP, RepetitionPenalty: o.RepeatPenalty, TopK: o.TopK, Seed: o.Seed}
	if or.ignored, err = s.applySampling(&set, ask, ollamaSamplingNames); err != nil {
		return engine.Request{}, err
	}
	if err := s.checkSettings(set); err != nil {
		return engine.Request{}, ollamaSamplingNames.refusal(err)
	}
	return engine.Request{Messages: msgs, Settings: set, Stop: o.Stop, Media: media, Tools: decls}, nil
}

// ollamaChat is POST /api/chat: NDJSON chunks by default, one object
// with "stream": false. No messages loads the model (it is loaded).
func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	var or ollamaRequest
	if err := s.decodeJSON(w, r, &or); err != nil {
		s.ollamaFailure(w, err)
		return
	}
	chunk := func(thinking, text string) ollamaChunk {
		return ollamaChunk{Model: s.info.Name, CreatedAt: time.Now().UTC().Format(time.RFC3339Nano), Message: &ollamaMessage{Role: "assistant", Content: text, Thinking: thinking}}
	}
	if len(or.Messages) == 0 {
		s.ollamaLoad(w, or.Model, or.KeepAlive, chunk("", ""))
		return
	}
	req, err := s.ollamaRequestOf(&or)
	if err != nil {
		s.ollamaFailure(w, err)
		return
	}
	s.noteIgnored(w, apiOllama, or.ignored)
	g := generation{api: apiOllama, path: r.URL.Path, id: newID("ollama-"), client: clientKey(r, ""), req: req, tools: or.tools}
	s.ollamaRun(w, r, g, or.Stream == nil || *or.Stream, chunk)
}

// ollamaRun generates g and answers as ollama does: NDJSON chunks made by
// chunk while streaming, then the last with the figures; or that last
// alone, holding the whole reply. With thinking asked for, the thinking
// goes apart from the answer.
func (s *Server) ollamaRun(w http.ResponseWriter, r *http.Request, g generation, stream bool, chunk func(thinking, text string) ollamaChunk) {
	think := g.req.Settings.Thinking
	var split thoughts
	td := &toolDeltas{mode: g.tools}
	t0 := time.Now()
	started := false
	enc := json.NewEncoder(w)
	start := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
	}
	end, err := s.generate(r.Context(), g, func(ev engine.Event) error {
		d, ok := ev.(*engine.Delta)
		if !ok || !stream {
			return nil
		}
		text, calls := td.push(d.Text, false)
		thinking := ""
		if think {
			thinking, text = split.push(text)
		}
		if thinking == "" && text == "" && len(calls) == 0 {
			return nil
		}
		start()
		c := chunk(thinking, text)
		if c.Message != nil {
			c.Message.ToolCalls = ollamaCalls(calls)
		}
		if err := enc.Encode(c); err != nil {
			return err
		}
		return flush(w)
	})
	if err != nil {
		s.ollamaFailure(w, err)
		return
	}
	switch e := end.(type) {
	case engine.Failed:
		if !started {
			s.ollamaFailure(w, e.Err)
			return
		}
		enc.Encode(map[string]string{"error": s.classify(apiOllama, e.Err).msg})
	case engine.Cancelled:
		if r.Context().Err() != nil {
			return
		}
		if !started {
			s.ollamaFailure(w, errShuttingDown)
			return
		}
		enc.Encode(map[string]string{"error": errShuttingDown.Error()})
	case engine.Finished:
		m := e.Metrics
		last := chunk("", "")
		var calls []tools.Call
		switch reply := ""; {
		case !stream:
			reply, calls, _ = toolReply(e, g.tools)
			if think {
				last = chunk(splitThoughts(reply))
			} else {
				last = chunk("", reply)
			}
		default:
			reply, calls = td.push("", true)
			if think {
				th, text := split.push(reply)
				th2, text2 := split.flush()
				last = chunk(th+th2, text+text2)
			} else if reply != "" {
				last = chunk("", reply)
			}
		}
		if last.Message != nil {
			last.Message.ToolCalls = ollamaCalls(calls)
		}
		last.Done, last.DoneReason = true, finishReason(m.FinishReason)
		last.TotalDuration = time.Since(t0).Nanoseconds()
		// ollama counts the whole prompt, cached or not.
		prefilled := m.PromptTokens - m.ReusedTokens
		last.PromptEvalCount, last.PrefilledCount, last.PromptEvalDuration = m.PromptTokens, &prefilled, int64(m.PrefillSeconds*1e9)
		last.EvalCount = m.GeneratedTokens
		if m.DecodeTokPerSec > 0 {
			last.EvalDuration = int64(float64(m.GeneratedTokens) / m.DecodeTokPerSec * 1e9)
		}
		if !stream {
			writeJSON(w, http.StatusOK, last)
			return
		}
		start()
		enc.Encode(last)
	}
	flush(w)
}

// ollamaTags is GET /api/tags: the one model served.
func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{s.ollamaModel()}})
}
