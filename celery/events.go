package celery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// The kinds of malformed events; every *EventError wraps exactly one, so a
// consumer can count them with errors.Is.
var (
	ErrBadJSON      = errors.New("bad JSON")
	ErrUnknownType  = errors.New("unknown event type")
	ErrMissingField = errors.New("missing field")
	ErrBadField     = errors.New("bad field")
	ErrBadResult    = errors.New("bad task result")
)

// The task event types DecodeEvents accepts: Celery's own, plus the
// Software Heritage workers' task-result and task-result-exception.
const (
	TypeSent            = "task-sent"
	TypeReceived        = "task-received"
	TypeStarted         = "task-started"
	TypeSucceeded       = "task-succeeded"
	TypeFailed          = "task-failed"
	TypeRetried         = "task-retried"
	TypeRevoked         = "task-revoked"
	TypeRejected        = "task-rejected"
	TypeResult          = "task-result"
	TypeResultException = "task-result-exception"
)

const (
	maxTimestamp            = 253402300800 // 10000-01-01T00:00:00Z in UNIX seconds
	singleObjectIndex       = -1           // EventError.Index of a single-object body
	errorDetailSnippetBytes = 60           // longest untrusted text quoted in an error
)

var knownTypes = map[string]bool{
	TypeSent: true, TypeReceived: true, TypeStarted: true, TypeSucceeded: true,
	TypeFailed: true, TypeRetried: true, TypeRevoked: true, TypeRejected: true,
	TypeResult: true, TypeResultException: true,
}

// Event is one task event published by a Celery worker (wire.md §3).
type Event struct {
	// Type is the event type, e.g. "task-started".
	Type string
	// UUID is the task id, the id of the message revisit published.
	UUID string
	// Hostname is the worker's node name, e.g. "celery@host".
	Hostname string
	// Timestamp is when the worker sent the event, in UTC, to the
	// microsecond.
	Timestamp time.Time
	// PID is the process id of the sender; 0 when absent.
	PID int
	// Clock is the sender's logical clock; 0 when absent.
	Clock int64

	// Name is the task name (task-received, task-sent).
	Name string
	// Args and Kwargs are the repr strings of the arguments (task-received,
	// task-sent).
	Args, Kwargs string
	// Retries is how many times the task was retried (task-received,
	// task-sent).
	Retries int

	// Result is the Python repr of the return value (task-succeeded); see
	// ParseSucceededResult.
	Result string
	// Runtime is the run time in seconds (task-succeeded).
	Runtime float64

	// Exception and Traceback describe the failure (task-failed,
	// task-retried).
	Exception, Traceback string

	// Terminated and Expired tell why a task was revoked (task-revoked).
	Terminated, Expired bool
	// Requeue tells whether a rejected task went back to its queue
	// (task-rejected).
	Requeue bool

	// VisitResult is the decoded result object of a task-result event; nil
	// for other types.
	VisitResult *VisitResult

	// Fields holds every field of the event as decoded from JSON (numbers
	// as json.Number), including those without a field above.
	Fields map[string]any
}

// EventError describes one event that could not be decoded.
type EventError struct {
	// RoutingKey is the delivery's routing key.
	RoutingKey string
	// Index is the event's position in a list body, -1 for a single object.
	Index int
	// Type and UUID identify the event when they could be read.
	Type, UUID string
	// Field names the field at fault, if one is.
	Field string
	// Err is the kind: ErrBadJSON, ErrUnknownType, ErrMissingField,
	// ErrBadField or ErrBadResult.
	Err error
	// Detail says what exactly is wrong.
	Detail string
}

// Error names the delivery, the event and what is wrong with it.
func (e *EventError) Error() string {
	var b strings.Builder
	b.WriteString("celery event")
	if e.RoutingKey != "" {
		fmt.Fprintf(&b, " %s", e.RoutingKey)
	}
	if e.Index >= 0 {
		fmt.Fprintf(&b, " [%d]", e.Index)
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " %s", e.Type)
	}
	if e.UUID != "" {
		fmt.Fprintf(&b, " %s", e.UUID)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns the kind of error, for errors.Is.
func (e *EventError) Unwrap() error { return e.Err }

// BatchError lists the events of a list body that could not be decoded.
// DecodeEvents returns it together with the events that could.
type BatchError struct {
	// RoutingKey is the delivery's routing key.
	RoutingKey string
	// Total is the number of items in the list.
	Total int
	// Errors has one entry per bad item, in list order.
	Errors []*EventError
}

// Error summarizes the bad items, quoting the first three.
func (e *BatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "celery events %s: %d of %d bad", e.RoutingKey, len(e.Errors), e.Total)
	for i, ee := range e.Errors {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Errors)-3)
			break
		}
		b.WriteString("; ")
		b.WriteString(ee.Error())
	}
	return b.String()
}

// Unwrap returns the per-item errors, so errors.Is and errors.As see them.
func (e *BatchError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, ee := range e.Errors {
		out[i] = ee
	}
	return out
}

// DecodeEvents decodes the body of one delivery from the events exchange:
// a single event object (routing keys such as task.succeeded) or a JSON list
// of them (task.multi, sent by workers that buffer events).
//
// A single object that cannot be decoded yields no events and an
// *EventError. For a list, the good events are returned in order together
// with a *BatchError listing each bad item, so one bad item never loses the
// others; a body that is not JSON at all yields an *EventError. The routing
// key only labels errors. DecodeEvents never panics.
func DecodeEvents(routingKey string, body []byte) ([]Event, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &EventError{RoutingKey: routingKey, Index: singleObjectIndex, Err: ErrBadJSON, Detail: "empty body"}
	}
	if trimmed[0] != '[' {
		ev, err := decodeEvent(routingKey, singleObjectIndex, body)
		if err != nil {
			return nil, err
		}
		return []Event{ev}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, &EventError{RoutingKey: routingKey, Index: singleObjectIndex, Err: ErrBadJSON, Detail: err.Error()}
	}
	events := make([]Event, 0, len(items))
	var bad []*EventError
	for i, item := range items {
		ev, err := decodeEvent(routingKey, i, item)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		events = append(events, ev)
	}
	if len(bad) > 0 {
		return events, &BatchError{RoutingKey: routingKey, Total: len(items), Errors: bad}
	}
	return events, nil
}

// eventReader reads typed fields from one event object, recording the
// first problem.
type eventReader struct {
	m   map[string]any
	err *EventError
}

func (r *eventReader) fail(field string, kind error, format string, args ...any) {
	if r.err == nil {
		r.err = &EventError{Field: field, Err: kind, Detail: fmt.Sprintf(format, args...)}
	}
}

// str reads an optional string field; null reads as "".
func (r *eventReader) str(field string) string {
	v, ok := r.m[field]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail(field, ErrBadField, "got %s, want a string", jsonKind(v))
	}
	return s
}

// boolean reads an optional boolean field; null reads as false.
func (r *eventReader) boolean(field string) bool {
	v, ok := r.m[field]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		r.fail(field, ErrBadField, "got %s, want a boolean", jsonKind(v))
	}
	return b
}

// integer reads an optional integer field; null reads as 0.
func (r *eventReader) integer(field string) int64 {
	v, ok := r.m[field]
	if !ok || v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		r.fail(field, ErrBadField, "got %s, want an integer", jsonKind(v))
		return 0
	}
	i, err := n.Int64()
	if err != nil {
		r.fail(field, ErrBadField, "%s is not a 64-bit integer", snippet(string(n)))
	}
	return i
}

// number reads an optional number field; null reads as 0.
func (r *eventReader) number(field string) float64 {
	v, ok := r.m[field]
	if !ok || v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		r.fail(field, ErrBadField, "got %s, want a number", jsonKind(v))
		return 0
	}
	f, err := n.Float64()
	if err != nil {
		r.fail(field, ErrBadField, "%s is out of range", snippet(string(n)))
	}
	return f
}

// decodeEvent decodes one event object.
func decodeEvent(routingKey string, index int, data []byte) (Event, *EventError) {
	label := func(e *EventError) *EventError {
		e.RoutingKey, e.Index = routingKey, index
		return e
	}
	v, err := decodeJSONValue(data)
	if err != nil {
		return Event{}, label(&EventError{Err: ErrBadJSON, Detail: err.Error()})
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Event{}, label(&EventError{Err: ErrBadJSON, Detail: fmt.Sprintf("event is %s, want an object", jsonKind(v))})
	}
	ev, e := eventFromMap(m)
	if e != nil {
		return Event{}, label(e)
	}
	return ev, nil
}

// eventFromMap reads an event object's fields.
func eventFromMap(m map[string]any) (Event, *EventError) {
	r := eventReader{m: m}
	ev := Event{Fields: m}

	typ, ok := m["type"]
	if !ok || typ == nil {
		return ev, &EventError{Field: "type", Err: ErrMissingField}
	}
	if ev.Type, ok = typ.(string); !ok {
		return ev, &EventError{Field: "type", Err: ErrBadField, Detail: fmt.Sprintf("got %s, want a string", jsonKind(typ))}
	}
	if !knownTypes[ev.Type] {
		return ev, &EventError{Type: snippet(ev.Type), Err: ErrUnknownType, Detail: fmt.Sprintf("%q", snippet(ev.Type))}
	}
	withID := func(e *EventError) *EventError {
		e.Type, e.UUID = ev.Type, snippet(ev.UUID)
		return e
	}
	ev.UUID = r.str("uuid")
	if r.err != nil {
		return ev, withID(r.err)
	}
	if ev.UUID == "" {
		return ev, withID(&EventError{Field: "uuid", Err: ErrMissingField})
	}

	if ts, ok := m["timestamp"]; !ok || ts == nil {
		return ev, withID(&EventError{Field: "timestamp", Err: ErrMissingField})
	}
	secs := r.number("timestamp")
	if r.err == nil && (math.IsNaN(secs) || secs < 0 || secs >= maxTimestamp) {
		r.fail("timestamp", ErrBadField, "%v is not a UNIX time between 1970 and 9999", secs)
	}
	if r.err == nil {
		ev.Timestamp = unixSeconds(secs)
	}
	ev.Hostname = r.str("hostname")
	pid := r.integer("pid")
	if r.err == nil && (pid < 0 || pid > math.MaxInt32) {
		r.fail("pid", ErrBadField, "%d is not a process id", pid)
	}
	ev.PID = int(pid)
	ev.Clock = r.integer("clock")

	switch ev.Type {
	case TypeSent, TypeReceived:
		ev.Name = r.str("name")
		ev.Args = r.str("args")
		ev.Kwargs = r.str("kwargs")
		retries := r.integer("retries")
		if r.err == nil && (retries < 0 || retries > math.MaxInt32) {
			r.fail("retries", ErrBadField, "%d is not a retry count", retries)
		}
		ev.Retries = int(retries)
	case TypeSucceeded:
		ev.Result = r.str("result")
		ev.Runtime = r.number("runtime")
	case TypeFailed, TypeRetried:
		ev.Exception = r.str("exception")
		ev.Traceback = r.str("traceback")
	case TypeRevoked:
		ev.Terminated = r.boolean("terminated")
		ev.Expired = r.boolean("expired")
	case TypeRejected:
		ev.Requeue = r.boolean("requeue")
	case TypeResult:
		res, ok := m["result"]
		if !ok {
			r.fail("result", ErrMissingField, "")
			break
		}
		vr, err := visitResult(res, false)
		if err != nil {
			r.fail("result", ErrBadResult, "%s", strings.TrimPrefix(err.Error(), ErrBadResult.Error()+": "))
			break
		}
		ev.VisitResult = &vr
	}
	if r.err != nil {
		return ev, withID(r.err)
	}
	return ev, nil
}

// unixSeconds converts float UNIX seconds to a UTC time, to the microsecond.
func unixSeconds(f float64) time.Time {
	sec := math.Floor(f)
	us := math.Round((f - sec) * 1e6)
	if us >= 1e6 {
		sec++
		us -= 1e6
	}
	return time.Unix(int64(sec), int64(us)*1000).UTC()
}

// jsonKind names the JSON type of a decoded value, for errors.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// snippet shortens untrusted text quoted in errors.
func snippet(s string) string {
	if len(s) <= errorDetailSnippetBytes {
		return s
	}
	cut := errorDetailSnippetBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
