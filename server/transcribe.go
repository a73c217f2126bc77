package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/regfile"
)

// OpenAI's POST /v1/audio/transcriptions, backed by the bundle's audio
// encoder: the clip goes through the engine attached to the published
// app's transcription instruction, as a clip sent without words does in
// the chat. The body is read as JSON bodies are (bounded, within the
// bodies' budget), then its form part by part in memory (nothing is
// written to disk), each part bounded.

// transcriptionForm is what a transcription request says.
type transcriptionForm struct {
	file           []byte
	fileName       string
	model          string
	language       string
	prompt         string
	responseFormat string
	temperature    *float64
	stream         bool
	include        []string // extra outputs asked for (logprobs)
	ignored        []string // the sampling parameters decoding ignored (sampling.go)
}

// maxFieldBytes bounds a form field other than the file.
const maxFieldBytes = 64 << 10

// readTranscriptionForm reads the multipart form; the file may be as
// large as one file a request may carry.
func (s *Server) readTranscriptionForm(w http.ResponseWriter, r *http.Request) (*transcriptionForm, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, bad("invalid_request", "", "send the clip as multipart/form-data with a file field, as OpenAI's clients do")
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	f := &transcriptionForm{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("invalid_request", "", "reading the form: "+err.Error())
		}
		name := p.FormName()
		limit := int64(maxFieldBytes)
		if name == "file" {
			limit = s.maxMedia()
		}
		b, err := io.ReadAll(io.LimitReader(p, limit+1))
		if err != nil {
			return nil, bad("invalid_request", "", "reading the form: "+err.Error())
		}
		if int64(len(b)) > limit {
			if name == "file" {
				return nil, tooLarge("file", int64(len(b)), limit)
			}
			return nil, bad("invalid_value", name, fmt.Sprintf("the %s field is over %s", name, regfile.Size(limit)))
		}
		v := strings.TrimSpace(string(b))
		switch name {
		case "file":
			f.file, f.fileName = b, p.FileName()
		case "model":
			f.model = v
		case "language":
			f.language = v
		case "prompt":
			f.prompt = v
		case "response_format":
			f.responseFormat = v
		case "temperature":
			t, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, bad("invalid_value", "temperature", "temperature must be a number")
			}
			f.temperature = &t
		case "stream":
			f.stream = v == "true"
		case "include[]", "include":
			f.include = append(f.include, v)
		}
	}
	if f.file == nil {
		return nil, bad("invalid_value", "file", "file: field required (the clip: WAV, FLAC, MP3 or another format orchard decodes)")
	}
	return f, nil
}

// transcriptionFor is the transcription instruction for a language (an
// ISO-639-1 code, English when none): the published app's, which names
// the language twice.
func transcriptionFor(code string) (string, error) {
	if code == "" {
		return engine.TranscriptionInstruction, nil
	}
	tag, err := language.Parse(code)
	name := ""
	if err == nil {
		name = display.English.Languages().Name(tag)
	}
	if name == "" {
		return "", bad("invalid_value", "language", fmt.Sprintf("language %q is not a language code orchard knows: send an ISO-639-1 code such as en, fr or de", code))
	}
	return strings.Replace(engine.TranscriptionInstruction, transcriptionLanguage, fmt.Sprintf("in %s into %s text", name, name), 1), nil
}

// maxTranscriptTokens caps a transcript when the defaults set no cap:
// Whisper's longest, for a 30-second window.
const maxTranscriptTokens = 448

// transcriptionLanguage is where the instruction names its language.
const transcriptionLanguage = "in English into English text"

// transcriptionRequest maps the form to an engine request.
func (s *Server) transcriptionRequest(f *transcriptionForm) (engine.Request, error) {
	if !s.modelOK(f.model) {
		return engine.Request{}, s.unknownModel(f.model)
	}
	switch f.responseFormat {
	case "", "json", "text":
	default:
		return engine.Request{}, bad("unsupported_value", "response_format", fmt.Sprintf("response_format %q is not supported: json or text (the model gives no timestamps)", f.responseFormat))
	}
	switch {
	case f.stream:
		return engine.Request{}, bad("unsupported_value", "stream", "streamed transcriptions are not supported")
	case len(f.include) > 0:
		return engine.Request{}, bad("unsupported_value", "include", fmt.Sprintf("include %q is not supported", f.include))
	case f.prompt != "":
		return engine.Request{}, bad("unsupported_value", "prompt", "a transcription prompt is not supported: the model follows its own transcription instruction")
	}
	instruction, err := s.instruction(f.language)
	if err != nil {
		return engine.Request{}, err
	}
	clip, err := s.mediaRules().file(engine.MediaAudio, "file", f.file)
	if err != nil {
		return engine.Request{}, err
	}
	if f.fileName != "" {
		clip.Name = "file " + f.fileName
	}
	// A transcript ends at the model's end of turn; the defaults' cap, or
	// Whisper's 448 tokens, bounds a model that does not.
	set := s.o.Defaults
	set.System, set.Thinking, set.ContextPolicy = "", false, engine.ContextStop
	if set.MaxTokens == 0 {
		set.MaxTokens = maxTranscriptTokens
	}
	if f.ignored, err = s.applySampling(&set, askedSampling{Temperature: f.temperature}, openAISamplingNames); err != nil {
		return engine.Request{}, err
	}
	if err := s.checkSettings(set); err != nil {
		return engine.Request{}, openAISamplingNames.refusal(err)
	}
	return engine.Request{Messages: []engine.Message{{Role: "user", Content: instruction}}, Settings: set,
		Media: map[int][]engine.MediaFile{0: {clip}}}, nil
}

// transcriptions is POST /v1/audio/transcriptions: {"text": ...}, or the
// text alone with response_format text.
func (s *Server) transcriptions(w http.ResponseWriter, r *http.Request) {
	f, err := s.readTranscriptionForm(w, r)
	if err != nil {
		s.failure(w, err)
		return
	}
	req, err := s.transcriptionRequest(f)
	if err != nil {
		s.failure(w, err)
		return
	}
	s.noteIgnored(w, apiTranscription, f.ignored)
	g := generation{api: apiTranscription, path: r.URL.Path, id: newID("transcribe-"), client: clientKey(r, ""), req: req}
	e, ok := s.generateWhole(r, g, func(err error) { s.failure(w, err) })
	if !ok {
		return
	}
	text := strings.TrimSpace(e.Reply)
	if f.responseFormat == "text" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, text+"\n")
		return
	}
	m := e.Metrics
	writeJSON(w, http.StatusOK, map[string]any{"text": text, "usage": map[string]any{"type": "tokens",
		"input_tokens": m.PromptTokens, "output_tokens": m.GeneratedTokens, "total_tokens": m.PromptTokens + m.GeneratedTokens}})
}
