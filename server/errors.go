package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
)

// apiErrorBody is OpenAI's error object, the shape of every error but
// those of ollama's endpoints (/api/*) and Anthropic's (/v1/messages),
// which have theirs (writeError).
type apiErrorBody struct {
	Error apiErrorDetail `json:"error"`
}

type apiErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func apiError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	d := apiErrorDetail{Message: msg, Type: typ}
	if code != "" {
		d.Code = &code
	}
	if param != "" {
		d.Param = &param
	}
	writeJSON(w, status, apiErrorBody{Error: d})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

// badRequest is a request refused as given: HTTP 400 unless status says
// otherwise (413 for a body or a file over the limit, 408 for a body that
// stopped arriving).
type badRequest struct {
	status           int
	code, param, msg string
}

func (e *badRequest) httpStatus() int {
	if e.status != 0 {
		return e.status
	}
	return http.StatusBadRequest
}

func (e *badRequest) Error() string { return e.msg }

func bad(code, param, msg string) error { return &badRequest{code: code, param: param, msg: msg} }

// failure writes err as an OpenAI error.
func (s *Server) failure(w http.ResponseWriter, err error) {
	s.classify(apiOpenAI, err).writeOpenAI(w)
}

// apiFailure is an error as the APIs report it: the HTTP status, OpenAI's
// type, code and param, the message and, for a 503, the seconds to wait.
type apiFailure struct {
	status                int
	typ, code, param, msg string
	retryAfter            int
	closeConn             bool // the body was not read whole: the connection cannot carry another request
}

// The APIs orchard serves; each has its own error shape and its own words
// for a remedy.
const (
	apiOpenAI      = "openai"
	apiCompletions = "completions" // OpenAI's shape, a raw prompt
	apiOllama      = "ollama"
	apiAnthropic   = "anthropic"
	// apiTranscription is OpenAI's transcriptions (its error shape).
	apiTranscription = "transcription"
)

// classify judges err for an API: a refused request is 400 (413 for a
// body or file over the limit), a full line 503 with Retry-After, the rest
// 500.
func (s *Server) classify(api string, err error) apiFailure {
	var br *badRequest
	var re *engine.RequestError
	var fe *engine.FileError
	switch {
	case errors.As(err, &br):
		st := br.httpStatus()
		f := apiFailure{status: st, typ: "invalid_request_error", code: br.code, param: br.param, msg: br.msg,
			closeConn: st == http.StatusRequestTimeout || st == http.StatusRequestEntityTooLarge} // the body was not read whole
		if br.code == "context_length_exceeded" { // text refused by its length alone (checkText)
			f.msg += ": " + contextRemedy(api)
			if api == apiCompletions {
				f.param = "prompt"
			}
		}
		return f
	case errors.As(err, &fe):
		// A picture or clip the decoders refuse: its part is its name.
		return apiFailure{status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_file", param: fe.Path, msg: err.Error()}
	case errors.Is(err, engine.ErrNoEncoder):
		return apiFailure{status: http.StatusBadRequest, typ: "invalid_request_error", code: "unsupported_content", msg: err.Error()}
	case errors.Is(err, chain.ErrContextFull):
		param := "messages"
		if api == apiCompletions {
			param = "prompt"
		}
		return apiFailure{status: http.StatusBadRequest, typ: "invalid_request_error", code: "context_length_exceeded", param: param, msg: s.contextMessage(api, err)}
	case errors.As(err, &re):
		return apiFailure{status: http.StatusBadRequest, typ: "invalid_request_error", code: "unsupported_value", msg: err.Error()}
	case errors.Is(err, errBuffersFull):
		return apiFailure{status: http.StatusServiceUnavailable, typ: "server_error", code: "overloaded", msg: err.Error(), retryAfter: s.q.retryAfter()}
	case errors.Is(err, errQueueFull):
		return apiFailure{status: http.StatusServiceUnavailable, typ: "server_error", code: "queue_full", msg: err.Error() + "; retry later", retryAfter: s.q.retryAfter()}
	case errors.Is(err, errShuttingDown), errors.Is(err, engine.ErrClosed):
		return apiFailure{status: http.StatusServiceUnavailable, typ: "server_error", code: "shutting_down", msg: err.Error(), retryAfter: 5}
	case errors.Is(err, errChatBusy):
		return apiFailure{status: http.StatusConflict, typ: "invalid_request_error", code: "busy", msg: err.Error()}
	}
	return apiFailure{status: http.StatusInternalServerError, typ: "server_error", code: "engine_error", msg: err.Error()}
}

// contextMessage says that a prompt does not fit, with the remedy of the
// API it came through: the chat's /clear and context policy mean nothing
// to a client, and the context is the bundle's (num_ctx cannot raise it).
func (s *Server) contextMessage(api string, err error) string {
	what, n, limit := "the conversation", 0, s.info.Context
	var cf *engine.ContextFullError
	if errors.As(err, &cf) {
		n, limit = cf.Tokens, cf.Context
		if cf.Alone {
			what = "the last message alone"
		}
	}
	if api == apiCompletions {
		what = "the prompt"
	}
	msg := fmt.Sprintf("%s does not fit this model's context of %d tokens", what, limit)
	if n > 0 {
		msg = fmt.Sprintf("%s is %d tokens and this model's context holds %d", what, n, limit)
	}
	return msg + ": " + contextRemedy(api)
}

// contextRemedy is what a client of an API can do about a prompt that
// does not fit.
func contextRemedy(api string) string {
	switch api {
	case apiCompletions:
		return "shorten the prompt"
	case apiOllama:
		return "shorten the messages or leave out the oldest turns (the context is fixed by the Core ML bundle; options.num_ctx cannot raise it)"
	}
	return "shorten the messages or leave out the oldest turns (the context is fixed by the Core ML bundle)"
}

// retry sets the headers an error carries besides its body: when to
// try again, and that the connection closes.
func (f apiFailure) retry(w http.ResponseWriter) {
	if f.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
	}
	if f.closeConn {
		w.Header().Set("Connection", "close")
	}
}

// writeOpenAI writes OpenAI's nested error object.
func (f apiFailure) writeOpenAI(w http.ResponseWriter) {
	f.retry(w)
	apiError(w, f.status, f.typ, f.code, f.param, f.msg)
}

// writeOllama writes ollama's {"error": "message"}: its client shows the
// string (an object printed as [object Object]).
func (f apiFailure) writeOllama(w http.ResponseWriter) {
	f.retry(w)
	ollamaError(w, f.status, f.msg)
}

// apiOf names the API a path belongs to, for the errors written before
// a request reaches its handler (a missing key, an unknown path).
func apiOf(path string) string {
	switch {
	case path == "/api" || strings.HasPrefix(path, "/api/"):
		return apiOllama
	case path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/"):
		return apiAnthropic
	}
	return apiOpenAI
}

// writeError writes an error in the shape of the API r's path belongs to.
func writeError(w http.ResponseWriter, r *http.Request, f apiFailure) {
	switch apiOf(r.URL.Path) {
	case apiOllama:
		f.writeOllama(w)
	case apiAnthropic:
		f.writeAnthropic(w)
	default:
		f.writeOpenAI(w)
	}
}
