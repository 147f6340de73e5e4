package swhrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhwire"
)

// The free-form values of the scheduler (a lister's current_state, extra
// loader arguments, task arguments, run metadata) are JSON in the stores.
// On the wire they are msgpack, which says more: plain converts what JSON
// can hold and refuses the rest, naming where it is; wire converts back.

// maxPlainDepth bounds the nesting of a free-form value.
const maxPlainDepth = revisit.MaxExtraLoaderArgumentsDepth

// asObject reads a dict with str keys as a JSON object.
func asObject(field string, v any) (map[string]any, error) {
	m, ok := v.(swhwire.Map)
	if !ok {
		return nil, wrongType(field, "a dict", v)
	}
	obj, err := plain(field, m, 1)
	if err != nil {
		return nil, err
	}
	return obj.(map[string]any), nil
}

// asArray reads a list as a JSON array.
func asArray(field string, v any) ([]any, error) {
	if _, ok := v.([]any); !ok {
		return nil, wrongType(field, "a list", v)
	}
	a, err := plain(field, v, 1)
	if err != nil {
		return nil, err
	}
	return a.([]any), nil
}

// plain is v as a JSON value: nil, bool, int64, float64, string, []any or
// map[string]any.
func plain(field string, v any, depth int) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64, string:
		return x, nil
	case float32:
		return plain(field, float64(x), depth)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, revisit.Invalidf(field, "%v cannot be stored (not a JSON number)", x)
		}
		return x, nil
	case []any, swhwire.Map:
		if depth > maxPlainDepth {
			return nil, revisit.Invalidf(field, "nested deeper than %d lists and dicts", maxPlainDepth)
		}
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = plain(fmt.Sprintf("%s[%d]", field, i), e, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case swhwire.Map:
		out := make(map[string]any, len(x))
		for _, p := range x {
			k, ok := p.Key.(string)
			if !ok {
				return nil, revisit.Invalidf(field, "a key is %s; only str keys can be stored", pyKind(p.Key))
			}
			if _, dup := out[k]; dup {
				return nil, revisit.Invalidf(field+"."+k, "key given twice")
			}
			e, err := plain(field+"."+k, p.Value, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	}
	return nil, revisit.Invalidf(field, "%s cannot be stored: only None, bool, int, float, str, list and dict with str keys can", pyKind(v))
}

// wire is a JSON value read from a store as it goes on the wire: numbers
// without a fraction are ints, as the client sent them.
func wire(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return int64(x)
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wire(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = wire(e)
		}
		return out
	}
	return v
}

// wireJSON is stored JSON text (a lister's current_state) on the wire; empty
// text is an empty dict.
func wireJSON(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("stored JSON: %w", err)
	}
	return wire(v), nil
}

// pythonJSON is v as Python's json.dumps writes it by default: ", " and
// ": " between items, every character beyond ASCII escaped; keys sorted.
func pythonJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(wire(v)); err != nil {
		return "null"
	}
	var out strings.Builder
	inString, escaped := false, false
	for _, r := range strings.TrimSuffix(buf.String(), "\n") {
		switch {
		case inString && escaped:
			escaped = false
		case inString && r == '\\':
			escaped = true
		case r == '"':
			inString = !inString
		case inString && r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&out, "\\u%04x", u)
			}
			continue
		case !inString && (r == ',' || r == ':'):
			out.WriteRune(r)
			out.WriteByte(' ')
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}
