package swhrpc

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhwire"
)

// conv reads one decoded wire value as a T; errors name field.
type conv[T any] func(field string, v any) (T, error)

// optional is c for a value that may be None: nil stays nil.
func optional[T any](c conv[T]) conv[*T] {
	return func(field string, v any) (*T, error) {
		if v == nil {
			return nil, nil
		}
		t, err := c(field, v)
		if err != nil {
			return nil, err
		}
		return &t, nil
	}
}

// wrongType is the error of a value of another type than want.
func wrongType(field, want string, v any) error {
	return revisit.Invalidf(field, "want %s, got %s", want, pyKind(v))
}

func asStr(field string, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", wrongType(field, "a str", v)
}

func asBool(field string, v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, wrongType(field, "a bool", v)
}

func asInt(field string, v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case uint64, *big.Int:
		return 0, revisit.Invalidf(field, "%v is beyond 64-bit integers", n)
	}
	return 0, wrongType(field, "an int", v)
}

// asRange is asInt for an int between min and max.
func asRange(min, max int) conv[int] {
	return func(field string, v any) (int, error) {
		n, err := asInt(field, v)
		if err != nil {
			return 0, err
		}
		if n < int64(min) || n > int64(max) {
			return 0, revisit.Invalidf(field, "must be between %d and %d, not %d", min, max, n)
		}
		return int(n), nil
	}
}

// asLimit is asRange for the bounds of a limit.
func asLimit(l revisit.Limit) conv[int] { return asRange(l.Min, l.Max) }

// asFloat takes a float, or an int as Python would.
func asFloat(field string, v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, revisit.Invalidf(field, "%v is not a finite number", n)
		}
		return n, nil
	case float32:
		return asFloat(field, float64(n))
	case int64:
		return float64(n), nil
	}
	return 0, wrongType(field, "a float", v)
}

func asTime(field string, v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	return time.Time{}, wrongType(field, "a datetime with a timezone (msgpack timestamp)", v)
}

// asUUID takes a uuid envelope, or its text as the client sends lister ids
// in lists and page tokens.
func asUUID(field string, v any) (uuid.UUID, error) {
	switch id := v.(type) {
	case uuid.UUID:
		return id, nil
	case string:
		return revisit.ParseUUID(field, id)
	}
	return uuid.Nil, wrongType(field, "a UUID", v)
}

// asDuration takes a timedelta that is not negative.
func asDuration(field string, v any) (time.Duration, error) {
	td, ok := v.(swhwire.Timedelta)
	if !ok {
		return 0, wrongType(field, "a timedelta", v)
	}
	d, ok := td.Duration()
	if !ok || d < 0 {
		return 0, revisit.Invalidf(field, "timedelta of %d days %d s %d µs is negative or beyond 290 years", td.Days, td.Seconds, td.Microseconds)
	}
	return d, nil
}

func asBytes(field string, v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	return nil, wrongType(field, "bytes", v)
}

// asList takes a list of at most max elements.
func asList(max int) conv[[]any] {
	return func(field string, v any) ([]any, error) {
		a, ok := v.([]any)
		if !ok {
			return nil, wrongType(field, "a list", v)
		}
		if len(a) > max {
			return nil, revisit.Invalidf(field, "%d elements, at most %d at once", len(a), max)
		}
		return a, nil
	}
}

// each reads every element of a list of at most max elements with c; errors
// name the element as field[i].
func each[T any](max int, c conv[T]) conv[[]T] {
	return func(field string, v any) ([]T, error) {
		a, err := asList(max)(field, v)
		if err != nil {
			return nil, err
		}
		out := make([]T, len(a))
		for i, e := range a {
			if out[i], err = c(fmt.Sprintf("%s[%d]", field, i), e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

// oneOrMany takes a single value or a list of them, as search_tasks does.
func oneOrMany[T any](max int, c conv[T]) conv[[]T] {
	return func(field string, v any) ([]T, error) {
		if _, ok := v.([]any); ok {
			return each(max, c)(field, v)
		}
		t, err := c(field, v)
		return []T{t}, err
	}
}

// pyKind names the Python type of a decoded value, for error messages.
func pyKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case int64, uint64, *big.Int:
		return "an int"
	case float32, float64:
		return "a float"
	case string:
		return "a str"
	case []byte:
		return "bytes"
	case []any:
		return "a list"
	case time.Time:
		return "a datetime"
	case uuid.UUID:
		return "a UUID"
	case swhwire.Timedelta:
		return "a timedelta"
	case swhwire.LastVisitStatus:
		return "a LastVisitStatus"
	case swhwire.PagedResult:
		return "a paged result"
	case swhwire.Exception:
		return "an exception"
	case swhwire.Model:
		return "a " + v.Type + " model"
	case swhwire.Map:
		if name, ok := unknownEnvelope(v); ok {
			return fmt.Sprintf("an envelope of unknown swhtype %q", name)
		}
		return "a dict"
	}
	return fmt.Sprintf("a %T", v)
}

// unknownEnvelope reports whether m has the keys of an envelope ("swhtype"
// and "d", bin in msgpack, str in JSON), which the decoders leave as a map
// when they do not know the type, and names the type.
func unknownEnvelope(m swhwire.Map) (string, bool) {
	if len(m) != 2 {
		return "", false
	}
	var name any
	var hasD bool
	for _, p := range m {
		switch keyText(p.Key) {
		case "swhtype":
			name = p.Value
		case "d":
			hasD = true
		}
	}
	if name == nil || !hasD {
		return "", false
	}
	return fmt.Sprint(name), true
}

// keyText is a str or bin key as text; "" for other keys.
func keyText(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case []byte:
		return string(k)
	}
	return ""
}
