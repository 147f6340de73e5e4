// Package api is revisit's HTTP JSON API. For now it serves the worker
// protocol of the embedded broker (wire.md §4): workers in any language
// lease task messages, extend their leases and post results.
//
// Every request and response body is JSON. Request bodies are decoded
// strictly: unknown fields, wrong types, trailing data and bodies over
// MaxBodyBytes are refused. Errors are
//
//	{"error": {"code": "invalid", "message": "...", "field": "max"}}
//
// with the code of the revisit.Error behind them and the HTTP status
// Status maps it to; internal details are logged, never shown.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
)

// MaxBodyBytes bounds the size of a request body.
const MaxBodyBytes = 1 << 20

// Config configures a Server.
type Config struct {
	// Queues is the embedded broker workers lease from; nil serves no
	// worker routes (the broker is RabbitMQ).
	Queues *embedded.Broker
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
}

// Server is the http.Handler of the API.
type Server struct {
	mux *http.ServeMux
	log *slog.Logger
	q   *embedded.Broker

	// draining ends when Drain is called; long polls watch it.
	draining context.Context
	drain    context.CancelFunc
}

// New returns the API server cfg describes.
func New(cfg Config) *Server {
	s := &Server{mux: http.NewServeMux(), log: cfg.Logger, q: cfg.Queues}
	s.draining, s.drain = context.WithCancel(context.Background())
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.q != nil {
		s.mux.HandleFunc("POST /api/v1/queues/{queue}/lease", s.handleLease)
		s.mux.HandleFunc("POST /api/v1/messages/{id}/heartbeat", s.handleHeartbeat)
		s.mux.HandleFunc("POST /api/v1/messages/{id}/result", s.handleResult)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, revisit.Errorf(revisit.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	return s
}

// Drain ends the long polls in progress at once, answering them with no
// message, and makes later ones answer at once: call it before
// http.Server.Shutdown, which would otherwise wait for them.
func (s *Server) Drain() { s.drain() }

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Status returns the HTTP status of an error code.
func Status(code revisit.ErrorCode) int {
	switch code {
	case revisit.CodeInvalid, revisit.CodeUnknownPolicy:
		return http.StatusBadRequest
	case revisit.CodeNotFound:
		return http.StatusNotFound
	case revisit.CodeConflict, revisit.CodeStaleData:
		return http.StatusConflict
	case revisit.CodeUnavailable:
		return http.StatusServiceUnavailable
	case codeTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// codeTooLarge is the code of a request body over MaxBodyBytes.
const codeTooLarge revisit.ErrorCode = "too_large"

// errorBody is the JSON form of an error.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    revisit.ErrorCode `json:"code"`
	Message string            `json:"message"`
	Field   string            `json:"field,omitempty"`
}

// writeError writes err as a JSON error; an error without a code is
// logged and shown as an internal error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var d errorDetail
	var e *revisit.Error
	switch {
	case errors.Is(err, broker.ErrClosed):
		d = errorDetail{Code: revisit.CodeUnavailable, Message: "shutting down"}
	case errors.As(err, &e) && e.Code != revisit.CodeInternal:
		d = errorDetail{Code: e.Code, Message: e.Message, Field: e.Field}
	default:
		s.log.Error("api: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		d = errorDetail{Code: revisit.CodeInternal, Message: "internal error"}
	}
	s.writeJSON(w, Status(d.Code), errorBody{Error: d})
}

// writeJSON writes v as the JSON response.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.log.Debug("api: writing a response", "err", err)
	}
}

// decode reads the request body into v strictly: one JSON object of at most
// MaxBodyBytes, with no unknown field and nothing after it. Errors are
// *revisit.Error values naming the problem, and the field when there is one.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	d := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return decodeError(err)
	}
	if err := d.Decode(&struct{}{}); err != io.EOF {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return decodeError(err)
		}
		return revisit.Invalidf("", "trailing data after the JSON object")
	}
	return nil
}

// decodeError explains an error of json.Decoder.Decode.
func decodeError(err error) error {
	var (
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
		tooLarge *http.MaxBytesError
	)
	switch {
	case errors.Is(err, io.EOF):
		return revisit.Invalidf("", "missing JSON body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return revisit.Invalidf("", "malformed JSON: unexpected end of the body")
	case errors.As(err, &syntax):
		return revisit.Invalidf("", "malformed JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return revisit.Invalidf("", "the body is a JSON %s, want an object", typ.Value)
		}
		return revisit.Invalidf(typ.Field, "got a JSON %s, want %s", typ.Value, jsonKind(typ.Type.String()))
	case errors.As(err, &tooLarge):
		return &revisit.Error{Code: codeTooLarge, Message: fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit)}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field := strings.Trim(name, `"`)
		return revisit.Invalidf(field, "unknown field %q", field)
	}
	return revisit.Invalidf("", "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	}
	return goType
}
