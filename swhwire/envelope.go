package swhwire

import (
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
)

// Timedelta is Python's datetime.timedelta, normalized the Python way:
// 0 <= Seconds < 86400, 0 <= Microseconds < 1e6, Days carries the sign.
type Timedelta struct {
	Days, Seconds, Microseconds int64
}

// Python's timedelta bounds its days to ±999999999.
const maxTimedeltaDays = 999999999

// NewTimedelta is d, truncated to microseconds, as a normalized Timedelta.
func NewTimedelta(d time.Duration) Timedelta {
	td, _ := normalizeTimedelta(0, 0, int64(d/time.Microsecond))
	return td
}

// Duration is td as a time.Duration; ok is false when it does not fit.
func (td Timedelta) Duration() (d time.Duration, ok bool) {
	const maxDays = int64(math.MaxInt64/(24*time.Hour)) - 1
	if td.Days > maxDays || td.Days < -maxDays {
		return 0, false
	}
	return time.Duration(td.Days)*24*time.Hour + time.Duration(td.Seconds)*time.Second +
		time.Duration(td.Microseconds)*time.Microsecond, true
}

// normalizeTimedelta carries microseconds into seconds and seconds into days
// with floor division, as Python's timedelta constructor does.
func normalizeTimedelta(days, seconds, us int64) (Timedelta, error) {
	seconds += floorDiv(us, 1000000)
	us = floorMod(us, 1000000)
	days += floorDiv(seconds, 86400)
	seconds = floorMod(seconds, 86400)
	if days > maxTimedeltaDays || days < -maxTimedeltaDays {
		return Timedelta{}, fmt.Errorf("timedelta of %d days is beyond Python's ±%d", days, maxTimedeltaDays)
	}
	return Timedelta{Days: days, Seconds: seconds, Microseconds: us}, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// PagedResult is swh-core's PagedResult: one page of results and the token of
// the next page (nil on the last one).
type PagedResult struct {
	Results       any
	NextPageToken any
	TotalResults  any
}

// Exception is swh-core's exception_to_dict: the body of an RPC error
// response, and the payload of the "exception" envelope.
type Exception struct {
	Type      string
	Module    string
	Args      []any
	Message   string
	Traceback []string
}

// Model is a swh-scheduler model (Lister, ListedOrigin, Task, ...): its class
// name and its attrs fields in order. Nested models are Model values too.
type Model struct {
	Type   string
	Fields Map
}

// LastVisitStatus is swh-scheduler's LastVisitStatus enum.
type LastVisitStatus string

// The values of LastVisitStatus.
const (
	VisitSuccessful LastVisitStatus = "successful"
	VisitFailed     LastVisitStatus = "failed"
	VisitNotFound   LastVisitStatus = "not_found"
)

// Body is e as the plain map of an error response (not an envelope).
func (e Exception) Body() Map {
	args := e.Args
	if args == nil {
		args = []any{}
	}
	return Map{{"type", e.Type}, {"module", e.Module}, {"args", args}, {"message", e.Message}, {"traceback", anys(e.Traceback)}}
}

// ParseException reads an error body (or an exception envelope's payload):
// a map with str "type" and "module", an "args" array, and optionally a str
// "message" and a "traceback" array of str.
func ParseException(v any) (Exception, error) {
	m, ok := v.(Map)
	if !ok {
		return Exception{}, fmt.Errorf("exception is a %s, want a map", Kind(v))
	}
	var e Exception
	var err error
	if e.Type, err = field[string](m, "exception", "type", true); err != nil {
		return Exception{}, err
	}
	if e.Module, err = field[string](m, "exception", "module", true); err != nil {
		return Exception{}, err
	}
	if e.Args, err = field[[]any](m, "exception", "args", true); err != nil {
		return Exception{}, err
	}
	if e.Message, err = field[string](m, "exception", "message", false); err != nil {
		return Exception{}, err
	}
	tb, err := field[[]any](m, "exception", "traceback", false)
	if err != nil {
		return Exception{}, err
	}
	for i, l := range tb {
		s, ok := l.(string)
		if !ok {
			return Exception{}, fmt.Errorf("exception traceback[%d] is a %s, want a str", i, Kind(l))
		}
		e.Traceback = append(e.Traceback, s)
	}
	return e, nil
}

// field is m's str key name as a T; a missing optional key is T's zero.
func field[T any](m Map, what, name string, required bool) (T, error) {
	var zero T
	v, ok := m.Get(name)
	if !ok {
		if required {
			return zero, fmt.Errorf("%s has no %q", what, name)
		}
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%s %q is a %s, want a %s", what, name, Kind(v), Kind(zero))
	}
	return t, nil
}

// envelopeDecoders are the known swhtype names and their payload readers.
var envelopeDecoders = map[string]func(any) (any, error){
	"uuid":              decodeUUID,
	"timedelta":         decodeTimedelta,
	"paged_result":      decodePagedResult,
	"exception":         func(d any) (any, error) { return ParseException(d) },
	"scheduler_model":   decodeModel,
	"last_visit_status": decodeLastVisitStatus,
	"datetime":          decodeISODatetime,
}

// unwrapEnvelope returns the value m stands for when m is an envelope: exactly
// the bin keys "swhtype" and "d", and a known str swhtype. Otherwise it
// returns m itself.
func unwrapEnvelope(m Map) (any, error) {
	if len(m) != 2 {
		return m, nil
	}
	name, okT := m.getBin("swhtype")
	payload, okD := m.getBin("d")
	if !okT || !okD {
		return m, nil
	}
	s, ok := name.(string)
	if !ok {
		return m, nil
	}
	dec, ok := envelopeDecoders[s]
	if !ok {
		return m, nil
	}
	v, err := dec(payload)
	if err != nil {
		return nil, fmt.Errorf("%s envelope: %w", s, err)
	}
	return v, nil
}

func decodeUUID(d any) (any, error) {
	s, ok := d.(string)
	if !ok {
		return nil, fmt.Errorf("payload is a %s, want a str", Kind(d))
	}
	return uuid.Parse(s)
}

// timedeltaKeys are the payload keys of a timedelta envelope, in wire order.
var timedeltaKeys = map[string]int{"days": 0, "seconds": 1, "microseconds": 2}

func decodeTimedelta(d any) (any, error) {
	m, ok := d.(Map)
	if !ok {
		return nil, fmt.Errorf("payload is a %s, want a map", Kind(d))
	}
	var parts [3]int64
	for _, p := range m {
		k, _ := p.Key.(string)
		i, ok := timedeltaKeys[k]
		if !ok {
			return nil, fmt.Errorf("unexpected key %v", p.Key)
		}
		n, ok := p.Value.(int64)
		if !ok || n > 1<<53 || n < -(1<<53) {
			return nil, fmt.Errorf("%v is %v, want an integer within ±2^53", p.Key, p.Value)
		}
		parts[i] = n
	}
	return normalizeTimedelta(parts[0], parts[1], parts[2])
}

func decodePagedResult(d any) (any, error) {
	m, ok := d.(Map)
	if !ok {
		return nil, fmt.Errorf("payload is a %s, want a map", Kind(d))
	}
	var pr PagedResult
	for _, p := range m {
		switch p.Key {
		case "results":
			pr.Results = p.Value
		case "next_page_token":
			pr.NextPageToken = p.Value
		case "total_results":
			pr.TotalResults = p.Value
		default:
			return nil, fmt.Errorf("unexpected key %v", p.Key)
		}
	}
	return pr, nil
}

func decodeModel(d any) (any, error) {
	m, ok := d.(Map)
	if !ok {
		return nil, fmt.Errorf("payload is a %s, want a map", Kind(d))
	}
	typ, err := field[string](m, "model", "__type__", true)
	if err != nil {
		return nil, err
	}
	fields := make(Map, 0, len(m)-1)
	for _, p := range m {
		if p.Key != "__type__" {
			fields = append(fields, p)
		}
	}
	return Model{Type: typ, Fields: fields}, nil
}

func decodeLastVisitStatus(d any) (any, error) {
	switch s := LastVisitStatus(fmt.Sprint(d)); s {
	case VisitSuccessful, VisitFailed, VisitNotFound:
		if _, ok := d.(string); ok {
			return s, nil
		}
	}
	return nil, fmt.Errorf("payload %v is not one of successful, failed, not_found", d)
}

// decodeISODatetime reads the legacy datetime envelope's isoformat() text. A
// text without an offset (a naive Python datetime) is taken as UTC.
func decodeISODatetime(d any) (any, error) {
	s, ok := d.(string)
	if !ok {
		return nil, fmt.Errorf("payload is a %s, want a str", Kind(d))
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return checkTime(wireTime(t))
		}
	}
	return nil, fmt.Errorf("%q is not an ISO 8601 datetime", s)
}

// checkTime refuses a time outside Python's datetime range.
func checkTime(t time.Time) (time.Time, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("datetime %s is outside Python's years 1 to 9999", t.Format(time.RFC3339Nano))
	}
	return t, nil
}
