// Package api is revisit's HTTP JSON API (under /api/v1): task types,
// listers, listed origins, the search of origins by URL and the page of
// one origin, next visits, visit stats and statuses, scheduler metrics,
// queues, the dashboard's summary, the operator's actions of the console
// (docs/actions.md), and the worker protocol of the embedded broker
// (wire.md §4), with /healthz, /readyz and
// /metrics beside it. One route table (Routes) builds both the handler and
// the OpenAPI 3 document served at /api/v1/openapi.json.
//
// Every request and response body is JSON. Request bodies are decoded
// strictly: unknown fields, wrong types, trailing data and bodies over the
// route's limit (MaxBodyBytes, MaxBatchBodyBytes for batches) are refused.
// Errors are
//
//	{"error": {"code": "invalid", "message": "...", "field": "max"}}
//
// with the code of the revisit.Error behind them and the HTTP status
// Status maps it to; internal details are logged, never shown.
//
// With tokens configured, every route but /healthz, /readyz and the
// OpenAPI document needs "Authorization: Bearer TOKEN": a read token for
// the routes that change nothing, a write token for the others.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/history"
	"github.com/revisit-sched/revisit/internal/kit/access"
	"github.com/revisit-sched/revisit/internal/kit/jsonobj"
	"github.com/revisit-sched/revisit/internal/service/livequeue"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
)

// Body limits. A batch route (listed origins, visit statuses) takes at
// most MaxBatch elements in at most MaxBatchBodyBytes; other routes take
// at most MaxBodyBytes.
const (
	MaxBodyBytes      = 1 << 20
	MaxBatchBodyBytes = 16 << 20
	MaxBatch          = 10_000
)

// Config configures a Server.
type Config struct {
	// Store holds the data the API serves; nil serves the worker routes
	// and health only (the tests of the worker protocol).
	Store Store
	// Broker measures queue depths; nil reports them unknown.
	Broker broker.Broker
	// Live measures the queues for /queues and the dashboard: the
	// orchestrator's of this process (orchestrator.Orchestrator.Queues),
	// so that they show what its gauges show; nil measures Store's queues
	// in Broker.
	Live *livequeue.Live
	// Queues is the embedded broker workers lease from; nil serves no
	// worker routes (the broker is RabbitMQ).
	Queues *embedded.Broker
	// Orchestrator is the orchestrator run by this process, whose loops
	// /readyz checks and whose shares the dashboard shows; nil when it
	// runs elsewhere.
	Orchestrator Orchestrator
	// Checks are more /readyz checks by name: the roles of this process
	// that depend on other services (the journal client's brokers).
	Checks map[string]func(context.Context) error
	// Journal is the journal client run by this process, whose lag the
	// dashboard shows; nil when it runs elsewhere.
	Journal JournalLag
	// History is the figures of the last 24 hours this process keeps
	// (GET /api/v1/history); nil serves an empty history.
	History History
	// Metrics is the registry the roles of this process register into:
	// served at /metrics, and read for the dashboard. Nil serves no
	// /metrics.
	Metrics prometheus.Gatherer
	// Tokens are the accepted bearer tokens; none leaves the API open.
	Tokens []config.Token
	// HealthOnly serves /healthz, /readyz and /metrics only: the server of
	// a process that runs other roles than the API.
	HealthOnly bool
	// Clock returns the current time; nil means time.Now.
	Clock revisit.Clock
	// MaxFuture is how far beyond Clock a visit status may be dated
	// (results.max_future); 0 is feedback.DefaultMaxFuture.
	MaxFuture time.Duration
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
}

// Store is what the API serves from a store: task types, listers, listed
// origins and their grab, visit stats and the results folded into them,
// the visits in flight, the scheduler metrics and what the console's
// actions change. store.Store implements it.
type Store interface {
	feedback.Store
	livequeue.Store
	ActionStore
	// TaskTypeCreate stores a new task type; ErrConflict if it exists.
	TaskTypeCreate(ctx context.Context, t revisit.TaskType) error
	// TaskTypeGet returns one task type; ErrNotFound if absent.
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	// ListerGetOrCreate returns the lister of that name and instance,
	// creating it if needed.
	ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	// ListerGet returns the lister of that name and instance; ErrNotFound if
	// absent.
	ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	// ListerList returns every lister, by name and instance name.
	ListerList(ctx context.Context) ([]revisit.Lister, error)
	// ListerGetByIDs returns the listers with those ids that exist.
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
	// ListedOriginsRecord upserts a batch of listed origins.
	ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error)
	// ListedOriginsGet returns one page in (lister_id, url, visit_type) order.
	ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error)
	// OriginsSearch returns one page of the listed rows whose URL matches
	// the search.
	OriginsSearch(ctx context.Context, s revisit.OriginSearch) (revisit.OriginSearchPage, error)
	// OriginsBrowse returns one page of the listed origins of a visit
	// type in the order of a view.
	OriginsBrowse(ctx context.Context, b revisit.OriginBrowse) (revisit.OriginBrowsePage, error)
	// VisitsOfOrigin returns the visits in flight of an origin.
	VisitsOfOrigin(ctx context.Context, key revisit.OriginKey) ([]revisit.Visit, error)
	// GrabNextVisits returns the true top p.Count eligible origins of the
	// policy and (unless p.DryRun) marks them scheduled.
	GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error)
	// MetricsUpdate recomputes and stores the scheduler metrics of one
	// lister (nil: all) at now, and returns them.
	MetricsUpdate(ctx context.Context, listerID *uuid.UUID, now time.Time) ([]revisit.SchedulerMetrics, error)
	// MetricsGet reads stored metrics, filtered by lister and visit type
	// when given.
	MetricsGet(ctx context.Context, listerID *uuid.UUID, visitType string) ([]revisit.SchedulerMetrics, error)
	// TasksGet returns one page of the tasks f selects, in id order.
	TasksGet(ctx context.Context, f revisit.TaskFilter) (revisit.TaskPage, error)
	// TaskRunsGet returns the runs of those tasks, by task and run id.
	TaskRunsGet(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error)
	// QueueNames returns the queues of the embedded broker that exist,
	// sorted.
	QueueNames(ctx context.Context) ([]string, error)
}

var _ Store = store.Store(nil)

// JournalLag is what the dashboard reads of a journal client;
// *journal.Consumer implements it.
type JournalLag interface {
	// Topic returns the topic read.
	Topic() string
	// Lag returns the messages left after the last batch, by partition.
	Lag() map[int32]int64
}

// Orchestrator is what the API reads of an orchestrator;
// *orchestrator.Orchestrator implements it.
type Orchestrator interface {
	// Health returns the state of every loop, by visit type.
	Health() map[string]orchestrator.Health
	// Shares returns the weighted policies of a visit type.
	Shares(visitType string) []orchestrator.Share
	// LoopStates returns the state of every loop, by visit type.
	LoopStates() map[string]orchestrator.LoopState
}

// Server is the http.Handler of the API.
type Server struct {
	cfg Config
	mux *http.ServeMux
	log *slog.Logger
	st  Store
	q   *embedded.Broker

	// draining ends when Drain is called; long polls watch it.
	draining context.Context
	drain    context.CancelFunc

	// live measures the queues for /queues and the dashboard.
	live *livequeue.Live
	// seen remembers the workers that called the worker routes.
	seen *seenWorkers
}

// New returns the API server cfg describes.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Live == nil {
		cfg.Live = livequeue.New(cfg.Store, cfg.Broker, cfg.Clock)
	}
	if cfg.History == nil {
		cfg.History = history.New(history.Config{Clock: cfg.Clock})
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), log: cfg.Logger, st: cfg.Store, q: cfg.Queues, live: cfg.Live}
	s.seen = newSeenWorkers(s.now())
	s.draining, s.drain = context.WithCancel(context.Background())
	for _, rt := range s.routes() {
		s.mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
	}
	s.mux.HandleFunc("/", s.handleNoRoute)
	return s
}

// methods are the methods a route of the API may take.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// handleNoRoute answers the requests no route takes: 405 with an Allow
// header when routes take the path with other methods, else 404.
func (s *Server) handleNoRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range methods {
		probe := *r
		probe.Method = m
		if _, pattern := s.mux.Handler(&probe); pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		s.writeError(w, r, revisit.Errorf(revisit.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	s.writeError(w, r, &revisit.Error{Code: codeMethodNotAllowed,
		Message: fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", "))})
}

// Drain ends the long polls in progress at once, answering them with no
// message, and makes later ones answer at once: call it before
// http.Server.Shutdown, which would otherwise wait for them.
func (s *Server) Drain() { s.drain() }

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// now returns the current time of the server's clock, in UTC.
func (s *Server) now() time.Time { return s.cfg.Clock.Now().UTC() }

// horizon bounds the dates of the visit statuses the server takes in.
func (s *Server) horizon() feedback.Horizon {
	return feedback.Horizon{Clock: s.cfg.Clock, MaxFuture: s.cfg.MaxFuture}
}

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
	case access.CodeUnauthorized:
		return http.StatusUnauthorized
	case access.CodeForbidden:
		return http.StatusForbidden
	case codeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// Codes of the errors of the HTTP layer itself.
const (
	// codeTooLarge: the request body is over the route's limit.
	codeTooLarge revisit.ErrorCode = "too_large"
	// codeMethodNotAllowed: a known path with a method none of its routes
	// takes.
	codeMethodNotAllowed revisit.ErrorCode = "method_not_allowed"
)

// ErrorBody is the JSON form of an error.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error of an ErrorBody: its code, a message for
// people, and the field at fault, if any.
type ErrorDetail struct {
	Code    revisit.ErrorCode `json:"code"`
	Message string            `json:"message"`
	Field   string            `json:"field,omitempty"`
}

// writeError writes err as a JSON error; an error without a code is
// logged and shown as an internal error, but for the end of a request
// whose client went away.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var d ErrorDetail
	var e *revisit.Error
	switch {
	case errors.Is(err, broker.ErrClosed):
		d = ErrorDetail{Code: revisit.CodeUnavailable, Message: "shutting down"}
	case r.Context().Err() != nil:
		// The caller left, or the server is stopping: what failed failed
		// for that (a context's error, or a transaction it rolled back),
		// and nothing went wrong here.
		s.log.Debug("api: request cancelled", "method", r.Method, "path", r.URL.Path, "err", err)
		d = ErrorDetail{Code: revisit.CodeUnavailable, Message: "the request was cancelled: its client left or the server is stopping"}
	case errors.As(err, &e) && e.Code != revisit.CodeInternal:
		d = ErrorDetail{Code: e.Code, Message: e.Message, Field: e.Field}
	default:
		s.log.Error("api: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		d = ErrorDetail{Code: revisit.CodeInternal, Message: "internal error"}
	}
	s.writeJSON(w, Status(d.Code), ErrorBody{Error: d})
}

// writeJSON writes v as the JSON response.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.log.Debug("api: writing a response", "err", err)
	}
}

// decode reads the request body into v strictly: one JSON value (of at
// most the route's body limit, which the route table sets), with no
// unknown field, no key given twice, only valid UTF-8 text, and nothing
// after it. Errors are *revisit.Error values naming the problem, and the
// field when there is one (as in origins[3].url).
func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return decodeError(err)
	}
	if err := decodeFrom(data, v, ""); err != nil {
		return err
	}
	return jsonobj.Check(data)
}

// timesInRange checks every time decoded into v (revisit.ValidateTime),
// naming the first out of range by its path, as in origins[3].last_update.
func timesInRange(v reflect.Value, path string) error {
	if !v.IsValid() || !holdsTimes(v.Type()) {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return timesInRange(v.Elem(), path)
	case reflect.Struct:
		if v.Type() == timeType {
			return revisit.ValidateTime(path, v.Interface().(time.Time))
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if f.Anonymous && f.Tag.Get("json") == "" {
				name = strings.TrimSuffix(path, ".")
			} else if path != "" {
				name = path + "." + name
			}
			if err := timesInRange(v.Field(i), name); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := timesInRange(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			key := fmt.Sprint(it.Key().Interface())
			if path != "" {
				key = path + "." + key
			}
			if err := timesInRange(it.Value(), key); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdsTimeCache remembers which types holdsTimes found to hold times.
var holdsTimeCache sync.Map // reflect.Type → bool

// holdsTimes reports whether a value of type t may hold a time.Time (what
// JSON decodes into an interface never does).
func holdsTimes(t reflect.Type) bool {
	if held, ok := holdsTimeCache.Load(t); ok {
		return held.(bool)
	}
	holdsTimeCache.Store(t, false) // a type that refers to itself holds what its other fields hold
	held := false
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		held = holdsTimes(t.Elem())
	case reflect.Struct:
		held = t == timeType
		for i := 0; i < t.NumField() && !held; i++ {
			held = t.Field(i).IsExported() && holdsTimes(t.Field(i).Type)
		}
	}
	holdsTimeCache.Store(t, held)
	return held
}

// decodeFrom decodes one JSON value of data into v strictly; the fields
// errors name start with prefix (as in "origins[3].").
func decodeFrom(data []byte, v any, prefix string) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		if ferr := valueError(data, reflect.TypeOf(v)); ferr != nil {
			return prefixed(ferr, prefix)
		}
		return prefixed(decodeError(err), prefix)
	}
	if err := d.Decode(&struct{}{}); err != io.EOF {
		return revisit.Invalidf(strings.TrimSuffix(prefix, "."), "trailing data after the JSON value")
	}
	return timesInRange(reflect.ValueOf(v), strings.TrimSuffix(prefix, "."))
}

// prefixed prefixes the field of an invalid-input error.
func prefixed(err error, prefix string) error {
	var e *revisit.Error
	if prefix == "" || !errors.As(err, &e) || e.Code != revisit.CodeInvalid {
		return err
	}
	return &revisit.Error{Code: e.Code, Message: e.Message, Field: strings.TrimSuffix(prefix+e.Field, ".")}
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
			return revisit.Invalidf("", "got a JSON %s, want %s", typ.Value, jsonKind(typ.Type))
		}
		return revisit.Invalidf(typ.Field, "got a JSON %s, want %s", typ.Value, jsonKind(typ.Type))
	case errors.As(err, &tooLarge):
		return &revisit.Error{Code: codeTooLarge, Message: fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit)}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field := strings.Trim(name, `"`)
		return revisit.Invalidf(field, "unknown field %q", field)
	}
	return revisit.Invalidf("", "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// valueError finds the field of data, decoded into a value of type t,
// whose own decoding (a UUID, a time, a duration) failed, and explains it
// in the terms of the API; nil when no field is at fault that way.
func valueError(data []byte, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := fields[name]
		if !ok || name == "" || name == "-" {
			continue
		}
		err := json.Unmarshal(raw, reflect.New(f.Type).Interface())
		var typ *json.UnmarshalTypeError
		if err == nil || errors.As(err, &typ) {
			continue // a type error is explained by decodeError
		}
		if nested := valueError(raw, f.Type); nested != nil {
			return prefixed(nested, name+".")
		}
		var text string
		if json.Unmarshal(raw, &text) != nil {
			text = string(raw)
		}
		return textValueError(name, text, f.Type, err)
	}
	return nil
}

// textValueError explains why text is not a value of type t for the field.
func textValueError(field, text string, t reflect.Type, err error) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[uuid.UUID]():
		_, err = revisit.ParseUUID(field, text)
	case reflect.TypeFor[time.Time]():
		_, err = revisit.ParseTime(field, text)
	default:
		err = revisit.Invalidf(field, "%s", err.Error())
	}
	return err
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}
