package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/orchard-llm/orchard/engine"
)

// apiErrorBody is OpenAI's error object; every error orchard serve
// returns has this shape (ollama's endpoints use theirs).
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

// failure writes err as an OpenAI error: a refused request is 400, a
// full line or a full budget of bodies 503 with Retry-After, the rest 500.
func (s *Server) failure(w http.ResponseWriter, err error) {
	var br *badRequest
	var re *engine.RequestError
	var fe *engine.FileError
	switch {
	case errors.As(err, &br):
		if st := br.httpStatus(); st == http.StatusRequestTimeout || st == http.StatusRequestEntityTooLarge {
			w.Header().Set("Connection", "close") // the body was not read whole
		}
		apiError(w, br.httpStatus(), "invalid_request_error", br.code, br.param, br.msg)
	case errors.As(err, &fe):
		// A picture or clip the decoders refuse: its part is its name.
		apiError(w, http.StatusBadRequest, "invalid_request_error", "invalid_file", fe.Path, err.Error())
	case errors.Is(err, engine.ErrNoEncoder):
		apiError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_content", "", err.Error())
	case errors.Is(err, engine.ErrContextFull):
		apiError(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", "messages", err.Error())
	case errors.As(err, &re):
		apiError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_value", "", err.Error())
	case errors.Is(err, errBuffersFull):
		w.Header().Set("Retry-After", strconv.Itoa(s.q.retryAfter()))
		apiError(w, http.StatusServiceUnavailable, "server_error", "overloaded", "", err.Error())
	case errors.Is(err, errQueueFull):
		w.Header().Set("Retry-After", strconv.Itoa(s.q.retryAfter()))
		apiError(w, http.StatusServiceUnavailable, "server_error", "queue_full", "", err.Error()+"; retry later")
	case errors.Is(err, errShuttingDown), errors.Is(err, engine.ErrClosed):
		w.Header().Set("Retry-After", "5")
		apiError(w, http.StatusServiceUnavailable, "server_error", "shutting_down", "", err.Error())
	case errors.Is(err, errChatBusy):
		apiError(w, http.StatusConflict, "invalid_request_error", "busy", "", err.Error())
	default:
		apiError(w, http.StatusInternalServerError, "server_error", "engine_error", "", err.Error())
	}
}
