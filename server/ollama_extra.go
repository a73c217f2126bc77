package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine"
)

// The rest of ollama's API that tools call besides /api/chat: the
// connection check (GET /, /api/version), the model's description
// (/api/show, /api/ps), /api/generate and the load/unload call, and clear
// refusals for what a Core ML bundle cannot do (embeddings, pulling
// models).

// ollamaArch is the architecture ollama's model_info keys are named by.
const ollamaArch = "gemma4"

// bundleFacts are what the ollama endpoints tell of the bundle: read once,
// on first use, from its folder.
type bundleFacts struct {
	once     sync.Once
	size     int64 // bytes of its files
	geometry bundle.Geometry
	template bundle.Template
	err      error
}

func (s *Server) bundleFacts() *bundleFacts {
	f := &s.facts
	f.once.Do(func() {
		if s.o.BundleDir == "" {
			f.err = fmt.Errorf("no bundle folder")
			return
		}
		b, err := bundle.Open(s.o.BundleDir)
		if b != nil {
			f.geometry, f.template = b.Geometry, b.Template
		} else {
			f.err = err
		}
		filepath.WalkDir(s.o.BundleDir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					f.size += info.Size()
				}
			}
			return nil
		})
	})
	return f
}

// root is GET / (and HEAD /), which ollama's clients use to see that a
// server is up.
func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("orchard is running"))
}

// ollamaVersion is GET /api/version (Open WebUI's "verify connection").
// ollama's clients read a version number: orchard's own, as x.y.z.
func (s *Server) ollamaVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": semver(s.o.Version), "orchard": s.o.Version})
}

// semver makes a version number of a Go module version ("v0.4.1", or
// "(devel)" for a build outside a release): clients compare the numbers.
func semver(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	core, _, _ := strings.Cut(v, "-")
	core, _, _ = strings.Cut(core, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return "0.0.0"
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return "0.0.0"
		}
	}
	return core
}

// ollamaDetails is the details object of /api/tags, /api/show and /api/ps.
func (s *Server) ollamaDetails() map[string]any {
	return map[string]any{"parent_model": "", "format": "coreml", "family": ollamaArch, "families": []string{ollamaArch},
		"parameter_size": "", "quantization_level": "", "orchard_bundle_family": s.info.Family}
}

// ollamaModel is the served model as /api/tags lists it.
func (s *Server) ollamaModel() map[string]any {
	return map[string]any{"name": s.info.Name, "model": s.info.Name, "modified_at": s.started.UTC().Format(time.RFC3339),
		"size": s.bundleFacts().size, "digest": s.o.BundleID, "details": s.ollamaDetails()}
}

// ollamaPs is GET /api/ps: the model is loaded for as long as the server
// runs, so it expires when ollama's never-unloaded models do.
func (s *Server) ollamaPs(w http.ResponseWriter, r *http.Request) {
	m := s.ollamaModel()
	m["expires_at"] = s.started.Add(time.Duration(math.MaxInt64)).UTC().Format(time.RFC3339)
	m["size_vram"] = 0
	m["context_length"] = s.info.Context
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{m}})
}

// ollamaCapabilities are the model's capabilities as ollama names them:
// completion always, vision and audio where the bundle has the encoder,
// tools where it can call them, thinking where its template can ask for
// it.
func (s *Server) ollamaCapabilities() []string {
	caps := []string{"completion"}
	if slices.Contains(s.info.Media, engine.MediaImage) {
		caps = append(caps, "vision")
	}
	if slices.Contains(s.info.Media, engine.MediaAudio) {
		caps = append(caps, "audio")
	}
	if s.info.Tools {
		caps = append(caps, "tools")
	}
	if s.info.Thinking {
		caps = append(caps, "thinking")
	}
	return caps
}

// ollamaShow is POST /api/show: capabilities (Zed), model_info with the
// context length (Zed), parameters and template (continue.dev).
func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"` // older clients
	}
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.ollamaFailure(w, err)
		return
	}
	name := cmpOr(req.Model, req.Name)
	if !s.modelOK(name) {
		s.ollamaFailure(w, s.unknownModel(name))
		return
	}
	f := s.bundleFacts()
	g := f.geometry
	info := map[string]any{"general.architecture": ollamaArch, "general.basename": s.info.Name,
		ollamaArch + ".context_length": s.info.Context}
	for key, v := range map[string]int{"embedding_length": g.Hidden, "block_count": g.Layers, "attention.head_count": g.Heads,
		"attention.head_count_kv": g.KVHeads, "attention.key_length": g.HeadDim, "attention.sliding_window": g.SlidingWindow, "vocab_size": g.Vocab} {
		if v > 0 {
			info[ollamaArch+"."+key] = v
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"modelfile":    fmt.Sprintf("# orchard serves the Core ML bundle in %s\n", s.o.BundleDir),
		"parameters":   s.ollamaParameters(f.template),
		"template":     ollamaTemplate(f.template),
		"details":      s.ollamaDetails(),
		"model_info":   info,
		"capabilities": s.ollamaCapabilities(),
		"modified_at":  s.started.UTC().Format(time.RFC3339),
		// What the bundle does with sampling options (sampling.go).
		"orchard_sampling": s.Sampling().Note,
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ollamaParameters lists the defaults as ollama's Modelfile parameters do,
// one "name value" a line.
func (s *Server) ollamaParameters(t bundle.Template) string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-30s %s\n", k, v) }
	line("num_ctx", strconv.Itoa(s.info.Context))
	if s.o.Defaults.MaxTokens > 0 {
		line("num_predict", strconv.Itoa(s.o.Defaults.MaxTokens))
	}
	if sp := s.o.Defaults.Sampling; !sp.Greedy() {
		line("temperature", strconv.FormatFloat(sp.Temperature, 'g', -1, 64))
		if sp.TopK > 0 {
			line("top_k", strconv.Itoa(sp.TopK))
		}
		if sp.TopP > 0 {
			line("top_p", strconv.FormatFloat(sp.TopP, 'g', -1, 64))
		}
	}
	stop := "<turn|>"
	if t.AssistantSuffix != nil && strings.TrimSpace(*t.AssistantSuffix) != "" {
		stop = strings.TrimSpace(*t.AssistantSuffix)
	}
	line("stop", strconv.Quote(stop))
	return strings.TrimSuffix(b.String(), "\n")
}

// ollamaTemplate is the prompt format in ollama's template language (for
// display: orchard renders it itself). It holds no .Suffix: orchard does
// no fill-in-the-middle.
func ollamaTemplate(t bundle.Template) string {
	if t.PromptPrefix != nil && t.PromptSuffix != nil {
		return "{{ range .Messages }}{{ if eq .Role \"user\" }}" + *t.PromptPrefix + "{{ .Content }}" + *t.PromptSuffix +
			"{{ else if eq .Role \"assistant\" }}{{ .Content }}{{ end }}{{ end }}"
	}
	return "{{- if .System }}<|turn>system\n{{ .System }}<turn|>\n{{ end }}" +
		"{{- range .Messages }}<|turn>{{ if eq .Role \"assistant\" }}model{{ else }}{{ .Role }}{{ end }}\n{{ .Content }}<turn|>\n{{ end }}" +
		"<|turn>model\n"
}

// ollamaGenerateRequest is /api/generate's body. Options and format are
// read as /api/chat reads them.
type ollamaGenerateRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt"`
	Suffix    string          `json:"suffix"`
	System    string          `json:"system"`
	Template  string          `json:"template"`
	Context   []int           `json:"context"`
	Images    []base64Field   `json:"images"` // decoded as the JSON is read (inline.go)
	Raw       bool            `json:"raw"`
	Stream    *bool           `json:"stream"`
	Format    json.RawMessage `json:"format"`
	Options   json.RawMessage `json:"options"`
	KeepAlive json.RawMessage `json:"keep_alive"`
	Think     json.RawMessage `json:"think"`
}

// ollamaGenerateOf maps a generate request to an engine request through
// /api/chat's reading of it: a system message and a user message with the
// prompt and its images, or with raw the prompt alone, untemplated. It
// returns the sampling options decoding ignored.
func (s *Server) ollamaGenerateOf(gr *ollamaGenerateRequest) (engine.Request, []string, error) {
	switch {
	case gr.Suffix != "":
		return engine.Request{}, nil, bad("unsupported_value", "suffix", "suffix (fill in the middle) is not supported")
	case gr.Template != "":
		return engine.Request{}, nil, bad("unsupported_value", "template", "a template override is not supported: send raw: true with the prompt as the model should see it")
	case len(gr.Context) > 0:
		return engine.Request{}, nil, bad("unsupported_value", "context", "context (token ids of an earlier reply) is not supported: send the conversation to /api/chat")
	case gr.Raw && len(bytes.TrimSpace(gr.Think)) > 0 && string(bytes.TrimSpace(gr.Think)) != "false" && string(bytes.TrimSpace(gr.Think)) != "null":
		return engine.Request{}, nil, bad("unsupported_value", "think", "a raw prompt asks for thinking itself (<|think|> in its system turn): leave think out")
	case gr.Raw && len(gr.Images) > 0:
		return engine.Request{}, nil, bad("unsupported_value", "images", "a raw prompt takes no images: leave raw out to send them")
	}
	or := ollamaRequest{Model: gr.Model, Format: gr.Format, Think: gr.Think}
	if opts := bytes.TrimSpace(gr.Options); len(opts) > 0 && string(opts) != "null" {
		if err := json.Unmarshal(opts, &or.Options); err != nil {
			return engine.Request{}, nil, bad("invalid_value", "options", "options: "+err.Error())
		}
	}
	if gr.System != "" && !gr.Raw {
		or.Messages = append(or.Messages, ollamaMessage{Role: "system", Content: gr.System})
	}
	or.Messages = append(or.Messages, ollamaMessage{Role: "user", Content: gr.Prompt, Images: gr.Images})
	req, err := s.ollamaRequestOf(&or)
	if err != nil {
		return engine.Request{}, nil, err
	}
	if gr.Raw {
		req.Raw, req.Settings.System = true, ""
	}
	return req, or.ignored, nil
}

// ollamaGenerate is POST /api/generate: NDJSON chunks with "response",
// or one object with "stream": false. No prompt loads the model.
func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request) {
	var gr ollamaGenerateRequest
	if err := s.decodeJSON(w, r, &gr); err != nil {
		s.ollamaFailure(w, err)
		return
	}
	chunk := func(thinking, text string) ollamaChunk {
		return ollamaChunk{Model: s.info.Name, CreatedAt: time.Now().UTC().Format(time.RFC3339Nano), Response: &text, Thinking: thinking}
	}
	if gr.Prompt == "" && len(gr.Images) == 0 {
		s.ollamaLoad(w, gr.Model, gr.KeepAlive, chunk("", ""))
		return
	}
	req, ignored, err := s.ollamaGenerateOf(&gr)
	if err != nil {
		s.ollamaFailure(w, err)
		return
	}
	s.noteIgnored(w, apiOllama, ignored)
	g := generation{api: apiOllama, path: r.URL.Path, id: newID("ollama-"), client: clientKey(r, ""), req: req}
	s.ollamaRun(w, r, g, gr.Stream == nil || *gr.Stream, chunk)
}

// ollamaLoad answers the call with nothing to generate, which ollama's
// clients send to load a model (or, with keep_alive 0, to unload it): the
// model is loaded for as long as orchard serve runs, so both are answered
// at once and nothing changes.
func (s *Server) ollamaLoad(w http.ResponseWriter, model string, keepAlive json.RawMessage, c ollamaChunk) {
	if !s.modelOK(model) {
		s.ollamaFailure(w, s.unknownModel(model))
		return
	}
	c.Done, c.DoneReason = true, "load"
	switch strings.Trim(string(bytes.TrimSpace(keepAlive)), `"`) {
	case "0", "0s", "0m", "0h":
		c.DoneReason = "unload"
	}
	writeJSON(w, http.StatusOK, c)
}

// ollamaEmbed is /api/embed and /api/embeddings: 501, saying why.
func (s *Server) ollamaEmbed(w http.ResponseWriter, r *http.Request) {
	ollamaError(w, http.StatusNotImplemented, fmt.Sprintf("embeddings are not supported: orchard serves %s, a chat model converted to Core ML with no embedding output; use an embedding model elsewhere", s.info.Name))
}

// ollamaManage refuses ollama's model management: orchard serves the one
// bundle it was started with.
func (s *Server) ollamaManage(w http.ResponseWriter, r *http.Request) {
	ollamaError(w, http.StatusNotImplemented, fmt.Sprintf("%s is not supported: orchard serve serves the one Core ML bundle it was started with (%s); models are converted and chosen with orchard serve --model DIR", r.URL.Path, s.info.Name))
}
