package celery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit/internal/kit/jsonobj"
)

// Content type and encoding of every task message body.
const (
	ContentType     = "application/json"
	ContentEncoding = "utf-8"
)

// DeliveryPersistent is the AMQP delivery mode of a persistent message.
const DeliveryPersistent uint8 = 2

// maxNesting bounds the depth of args and kwargs values.
const maxNesting = 100

// Task is what NewMessage needs to build one task message.
type Task struct {
	// Name is the worker-side task name, e.g.
	// "swh.loader.git.tasks.UpdateGitRepository".
	Name string
	// ID is the task id, a UUID string (Celery uses uuid4); events carry it
	// back as their uuid.
	ID string
	// Args are the positional arguments; nil sends [].
	Args []any
	// Kwargs are the keyword arguments; nil sends {}.
	Kwargs map[string]any
	// Origin names the sender, "<program>@<hostname>".
	Origin string
	// ETA, when set, asks the worker not to run the task before it.
	ETA *time.Time
	// Expires, when set, makes the worker drop the task after it.
	Expires *time.Time
	// Priority, when set, becomes the AMQP priority property.
	Priority *uint8
}

// Properties are the AMQP basic properties of a task message.
type Properties struct {
	ContentType     string
	ContentEncoding string
	CorrelationID   string
	DeliveryMode    uint8
	// Priority is the message priority; 0 when the task set none.
	Priority uint8
}

// Message is one encoded task message: publish Body with these Properties
// and the header table Headers.Table renders.
type Message struct {
	Properties Properties
	Headers    Headers
	Body       []byte
}

// Headers are the protocol v2 headers that differ from one task message to
// the next; the others are constants (wire.md §1). A publisher renders
// them with Table, into a map it reuses: building a 16-entry map per
// message was a fifth of the bytes revisit allocated per visit.
type Headers struct {
	// Task is the task name.
	Task string
	// ID is the task id, also sent as root_id.
	ID string
	// ETA and Expires are ISO-8601 times, "" for None.
	ETA, Expires string
	// ArgsRepr and KwargsRepr are the Python reprs of args and kwargs,
	// truncated to ReprMaxLen.
	ArgsRepr, KwargsRepr string
	// Origin names the sender.
	Origin string
}

// Table renders h as an AMQP header table (every value nil, string,
// int32, bool or []any of those). It fills dst, cleared first, when dst
// is not nil, so that a publisher can reuse one map for every message; a
// nil dst gets a new map.
func (h Headers) Table(dst map[string]any) map[string]any {
	if dst == nil {
		dst = make(map[string]any, 16)
	} else {
		clear(dst)
	}
	id := any(h.ID) // boxed once for both
	dst["lang"] = "py"
	dst["task"] = h.Task
	dst["id"] = id
	dst["root_id"] = id
	dst["parent_id"] = nil
	dst["group"] = nil
	dst["group_index"] = nil
	dst["shadow"] = nil
	dst["eta"] = optionalString(h.ETA)
	dst["expires"] = optionalString(h.Expires)
	dst["retries"] = int32(0)
	dst["timelimit"] = []any{nil, nil}
	dst["argsrepr"] = h.ArgsRepr
	dst["kwargsrepr"] = h.KwargsRepr
	dst["origin"] = h.Origin
	dst["ignore_result"] = false
	return dst
}

// optionalString is s, or nil (None) when s is empty.
func optionalString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// NewMessage encodes t as a Celery protocol v2 task message (wire.md §1).
//
// Argument values may be nil, bool, any integer or float type, *big.Int,
// json.Number, string (valid UTF-8), time.Time (sent as an ISO-8601 UTC
// string), json.RawMessage, []any, map[string]any, or anything
// encoding/json can marshal (structs, typed slices and maps). []byte,
// NaN and infinities are refused: plain JSON cannot carry them.
func NewMessage(t Task) (Message, error) {
	if t.Name == "" {
		return Message{}, errors.New("celery task: name is empty")
	}
	if _, err := uuid.Parse(t.ID); err != nil || len(t.ID) != 36 {
		return Message{}, fmt.Errorf("celery task %s: id %q is not a UUID", t.Name, t.ID)
	}
	if t.Origin == "" {
		return Message{}, fmt.Errorf("celery task %s: origin is empty", t.Name)
	}
	eta, err := optionalISO(t.ETA)
	if err != nil {
		return Message{}, fmt.Errorf("celery task %s: eta: %w", t.Name, err)
	}
	expires, err := optionalISO(t.Expires)
	if err != nil {
		return Message{}, fmt.Errorf("celery task %s: expires: %w", t.Name, err)
	}

	args := make([]any, len(t.Args))
	for i, a := range t.Args {
		v, err := plainJSON(a, 0)
		if err != nil {
			return Message{}, fmt.Errorf("celery task %s: args[%d]: %w", t.Name, i, err)
		}
		args[i] = v
	}
	kwargs := make(map[string]any, len(t.Kwargs))
	for k, a := range t.Kwargs {
		if !utf8.ValidString(k) {
			return Message{}, fmt.Errorf("celery task %s: kwargs key %q is not valid UTF-8", t.Name, k)
		}
		v, err := plainJSON(a, 0)
		if err != nil {
			return Message{}, fmt.Errorf("celery task %s: kwargs[%q]: %w", t.Name, k, err)
		}
		kwargs[k] = v
	}

	body, err := taskBody(args, kwargs)
	if err != nil {
		return Message{}, fmt.Errorf("celery task %s: body: %w", t.Name, err)
	}

	headers := Headers{
		Task:       t.Name,
		ID:         t.ID,
		ETA:        eta,
		Expires:    expires,
		ArgsRepr:   ReprTruncated(args, ReprMaxLen),
		KwargsRepr: ReprTruncated(kwargs, ReprMaxLen),
		Origin:     t.Origin,
	}
	props := Properties{
		ContentType:     ContentType,
		ContentEncoding: ContentEncoding,
		CorrelationID:   t.ID,
		DeliveryMode:    DeliveryPersistent,
	}
	if t.Priority != nil {
		props.Priority = *t.Priority
	}
	return Message{Properties: props, Headers: headers, Body: body}, nil
}

// embedNone is the body's third element: no callbacks, errbacks, chain or
// chord (keys in encoding/json's order).
const embedNone = `{"callbacks":null,"chain":null,"chord":null,"errbacks":null}`

// taskBody encodes the body [args, kwargs, embed] of plain args and kwargs.
func taskBody(args []any, kwargs map[string]any) ([]byte, error) {
	b := make([]byte, 0, 128+len(embedNone))
	b = append(b, '[')
	b, err := appendPlainJSON(b, args)
	if err != nil {
		return nil, err
	}
	b = append(b, ',')
	if b, err = appendPlainJSON(b, kwargs); err != nil {
		return nil, err
	}
	return append(append(append(b, ','), embedNone...), ']'), nil
}

// optionalISO formats an optional time for the eta / expires headers, ""
// when t is nil.
func optionalISO(t *time.Time) (string, error) {
	if t == nil {
		return "", nil
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return "", fmt.Errorf("year %d is outside Python's datetime range", y)
	}
	return isoformat(*t), nil
}

// isoformat renders t in UTC as Python's datetime.isoformat() renders an
// aware UTC datetime: microseconds only when non-zero, offset "+00:00".
func isoformat(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05-07:00")
	}
	return t.Format("2006-01-02T15:04:05.000000-07:00")
}

// decodeJSONValue decodes one JSON value, numbers as json.Number.
func decodeJSONValue(data []byte) (any, error) {
	if jsonobj.HasLoneSurrogate(data) {
		return nil, errors.New(`text escapes a lone UTF-16 surrogate (\ud800–\udfff): not valid text`)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// plainJSON converts an argument value into the generic JSON tree the body
// carries (nil, bool, string, json.Number, float64, []any, map[string]any),
// refusing what plain JSON cannot carry.
func plainJSON(v any, depth int) (any, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("nested deeper than %d levels (a cycle?)", maxNesting)
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("string %q is not valid UTF-8", x)
		}
		return x, nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return json.Number(fmt.Sprint(x)), nil
	case float32:
		return plainJSON(float64(x), depth)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("float %v cannot travel in JSON", x)
		}
		return x, nil
	case *big.Int:
		if x == nil {
			return nil, nil
		}
		return json.Number(x.String()), nil
	case json.Number:
		if !isJSONNumber(string(x)) {
			return nil, fmt.Errorf("json.Number %q is not a number", string(x))
		}
		return x, nil
	case time.Time:
		if y := x.UTC().Year(); y < 1 || y > 9999 {
			return nil, fmt.Errorf("time year %d is outside Python's datetime range", y)
		}
		return isoformat(x), nil
	case json.RawMessage:
		g, err := decodeJSONValue(x)
		if err != nil {
			return nil, fmt.Errorf("raw JSON: %w", err)
		}
		return plainJSON(g, depth)
	case []byte:
		return nil, errors.New("[]byte cannot travel in plain JSON (send hex or base64 text)")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			g, err := plainJSON(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = g
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // deterministic first error
		for _, k := range keys {
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("key %q is not valid UTF-8", k)
			}
			g, err := plainJSON(x[k], depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", k, err)
			}
			out[k] = g
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return plainJSON(rv.Elem().Interface(), depth+1)
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.String:
		return plainJSON(rv.String(), depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return plainJSON(rv.Int(), depth)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return plainJSON(rv.Uint(), depth)
	case reflect.Float32, reflect.Float64:
		return plainJSON(rv.Float(), depth)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return nil, errors.New("[]byte cannot travel in plain JSON (send hex or base64 text)")
		}
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return []any{}, nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			g, err := plainJSON(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = g
		}
		return out, nil
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return nil, fmt.Errorf("a %s cannot travel in JSON", rv.Type())
	}
	// Structs, typed maps and the rest: their encoding/json form.
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T as JSON: %w", v, err)
	}
	g, err := decodeJSONValue(data)
	if err != nil {
		return nil, fmt.Errorf("re-read %T JSON: %w", v, err)
	}
	return plainJSON(g, depth+1)
}

// isJSONNumber reports whether s is a JSON number literal.
func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '-' || r == '+' || r == '.' || r == 'e' || r == 'E')
	}) < 0 && json.Valid([]byte(s))
}
