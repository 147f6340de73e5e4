package celery

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ReprMaxLen is the longest argsrepr / kwargsrepr header NewMessage sends,
// in bytes, the same bound Celery itself applies (1024).
const ReprMaxLen = 1024

// reprMaxDepth bounds nesting in Repr; deeper values print as "...".
const reprMaxDepth = 100

// truncMark ends a truncated repr.
const truncMark = "..."

// Repr returns the Python repr of a Go value, as Python would print the value
// the JSON body carries to the worker:
//
//   - nil → None, bool → True / False
//   - integers (every Go integer type, *big.Int) → decimal
//   - float32 / float64 → Python's shortest round-trip form (1.0, 1e+16,
//     inf, nan)
//   - string → a quoted literal with Python's escapes and choice of quote
//   - []byte → a bytes literal b'...'
//   - json.Number → the int or float it denotes
//   - time.Time → the ISO-8601 string NewMessage sends in its place
//   - slices and arrays → [a, b]; maps → {'k': v} with keys sorted
//   - pointers → the value pointed to, nil → None
//   - anything else → the repr of its JSON form (structs become dicts), or
//     failing that the repr of fmt.Sprint of it.
//
// Cyclic values print "[...]" / "{...}" where they recur, as Python does.
// Repr never panics.
func Repr(v any) string {
	r := reprWriter{limit: -1}
	r.b.Grow(64)
	r.value(v, 0)
	return r.b.String()
}

// ReprTruncated is Repr cut to at most max bytes: a longer repr is cut on a
// character boundary and ends with "...". It stops formatting once past the
// limit, so it is cheap even for huge values. max < len("...") is treated as
// len("...").
func ReprTruncated(v any, max int) string {
	if max < len(truncMark) {
		max = len(truncMark)
	}
	r := reprWriter{limit: max}
	r.b.Grow(64)
	r.value(v, 0)
	s := r.b.String()
	if len(s) <= max {
		return s
	}
	cut := max - len(truncMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncMark
}

// reprKey identifies a container on the current path, to detect cycles.
type reprKey struct {
	ptr  uintptr
	kind reflect.Kind
	n    int
}

type reprWriter struct {
	b     strings.Builder
	limit int // -1: unlimited
	// path holds the containers on the current path, outermost first, in
	// its first depth entries: one per nesting level, and value stops
	// nesting past reprMaxDepth. A scan of it is cheaper than a map.
	path  [reprMaxDepth + 2]reprKey
	depth int
}

// onPath reports whether container k is on the current path.
func (r *reprWriter) onPath(k reprKey) bool {
	for _, p := range r.path[:r.depth] {
		if p == k {
			return true
		}
	}
	return false
}

// enter records container k on the current path.
func (r *reprWriter) enter(k reprKey) {
	r.path[r.depth] = k
	r.depth++
}

// leave removes the innermost container from the current path.
func (r *reprWriter) leave() {
	r.depth--
}

// writeInt writes an integer of any Go integer type in decimal.
func (r *reprWriter) writeInt(x any) {
	var buf [24]byte
	switch v := reflect.ValueOf(x); v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		r.b.Write(strconv.AppendInt(buf[:0], v.Int(), 10))
	default:
		r.b.Write(strconv.AppendUint(buf[:0], v.Uint(), 10))
	}
}

// full reports whether the output is already past the limit.
func (r *reprWriter) full() bool {
	return r.limit >= 0 && r.b.Len() > r.limit
}

func (r *reprWriter) value(v any, depth int) {
	if r.full() {
		return
	}
	if depth > reprMaxDepth {
		r.b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil:
		r.b.WriteString("None")
	case bool:
		if x {
			r.b.WriteString("True")
		} else {
			r.b.WriteString("False")
		}
	case string:
		writePyString(&r.b, x)
	case []byte:
		r.b.WriteString(pyBytesRepr(x))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		r.writeInt(x) // decimal, as Python writes ints
	case float32:
		r.b.WriteString(pyFloatRepr(float64(x)))
	case float64:
		r.b.WriteString(pyFloatRepr(x))
	case *big.Int:
		if x == nil {
			r.b.WriteString("None")
		} else {
			r.b.WriteString(x.String())
		}
	case big.Int:
		r.b.WriteString(x.String())
	case json.Number:
		r.b.WriteString(jsonNumberRepr(x))
	case time.Time:
		r.b.WriteString(pyStringRepr(isoformat(x)))
	case []any:
		if len(x) == 0 {
			r.b.WriteString("[]")
			return
		}
		k := reprKey{reflect.ValueOf(x).Pointer(), reflect.Slice, len(x)}
		if r.onPath(k) {
			r.b.WriteString("[...]")
			return
		}
		r.enter(k)
		r.b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				r.b.WriteString(", ")
			}
			r.value(e, depth+1)
			if r.full() {
				break
			}
		}
		r.b.WriteByte(']')
		r.leave()
	case map[string]any:
		if len(x) == 0 {
			r.b.WriteString("{}")
			return
		}
		k := reprKey{reflect.ValueOf(x).Pointer(), reflect.Map, 0}
		if r.onPath(k) {
			r.b.WriteString("{...}")
			return
		}
		r.enter(k)
		keys := make([]string, 0, len(x))
		for key := range x {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		r.b.WriteByte('{')
		for i, key := range keys {
			if i > 0 {
				r.b.WriteString(", ")
			}
			writePyString(&r.b, key)
			r.b.WriteString(": ")
			r.value(x[key], depth+1)
			if r.full() {
				break
			}
		}
		r.b.WriteByte('}')
		r.leave()
	default:
		r.reflectValue(reflect.ValueOf(v), depth)
	}
}

// reflectValue formats the values the type switch does not know.
func (r *reprWriter) reflectValue(rv reflect.Value, depth int) {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			r.b.WriteString("None")
			return
		}
		if rv.Kind() == reflect.Pointer {
			k := reprKey{rv.Pointer(), reflect.Pointer, 0}
			if r.onPath(k) {
				r.b.WriteString("...")
				return
			}
			r.enter(k)
			defer r.leave()
		}
		r.value(rv.Elem().Interface(), depth+1)
		return
	case reflect.Bool:
		r.value(rv.Bool(), depth)
		return
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		r.value(rv.Int(), depth)
		return
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		r.value(rv.Uint(), depth)
		return
	case reflect.Float32, reflect.Float64:
		r.value(rv.Float(), depth)
		return
	case reflect.String:
		r.value(rv.String(), depth)
		return
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice {
			if rv.IsNil() {
				r.b.WriteString("[]")
				return
			}
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				r.value(rv.Bytes(), depth)
				return
			}
			if rv.Len() > 0 {
				k := reprKey{rv.Pointer(), reflect.Slice, rv.Len()}
				if r.onPath(k) {
					r.b.WriteString("[...]")
					return
				}
				r.enter(k)
				defer r.leave()
			}
		}
		r.b.WriteByte('[')
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				r.b.WriteString(", ")
			}
			r.value(rv.Index(i).Interface(), depth+1)
			if r.full() {
				break
			}
		}
		r.b.WriteByte(']')
		return
	case reflect.Map:
		if rv.Len() == 0 {
			r.b.WriteString("{}")
			return
		}
		k := reprKey{rv.Pointer(), reflect.Map, 0}
		if r.onPath(k) {
			r.b.WriteString("{...}")
			return
		}
		r.enter(k)
		defer r.leave()
		type entry struct {
			sortKey, keyRepr string
			val              reflect.Value
		}
		entries := make([]entry, 0, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			kv := iter.Key()
			kr := Repr(kv.Interface())
			sk := kr
			if kv.Kind() == reflect.String {
				sk = kv.String()
			}
			entries = append(entries, entry{sk, kr, iter.Value()})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].sortKey < entries[j].sortKey })
		r.b.WriteByte('{')
		for i, e := range entries {
			if i > 0 {
				r.b.WriteString(", ")
			}
			r.b.WriteString(e.keyRepr)
			r.b.WriteString(": ")
			r.value(e.val.Interface(), depth+1)
			if r.full() {
				break
			}
		}
		r.b.WriteByte('}')
		return
	}
	// Structs and the rest: their JSON form, as the body would carry them.
	if rv.IsValid() && rv.CanInterface() {
		if data, err := json.Marshal(rv.Interface()); err == nil {
			if g, err := decodeJSONValue(data); err == nil {
				r.value(g, depth+1)
				return
			}
		}
		r.b.WriteString(pyStringRepr(fmt.Sprint(rv.Interface())))
		return
	}
	r.b.WriteString("None")
}

// jsonNumberRepr prints a JSON number as Python's json module would load it:
// an int when it has no fraction or exponent, else a float.
func jsonNumberRepr(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return i.String()
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil || math.IsInf(f, 0) {
		return pyFloatRepr(f)
	}
	return pyStringRepr(s)
}

// pyFloatRepr formats f as Python's repr(float) does: the shortest digits
// that round-trip, positional for exponents in [-4, 16), scientific
// otherwise, and always with a '.' or an exponent.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	i := strings.LastIndexByte(sci, 'e')
	exp, _ := strconv.Atoi(sci[i+1:])
	if exp < -4 || exp >= 16 {
		return sci
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// pyStringRepr quotes s as Python's repr(str) does. Bytes that are not valid
// UTF-8 (a Python str cannot hold them) print as \udcXX, Python's
// surrogateescape convention.
func pyStringRepr(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	writePyString(&b, s)
	return b.String()
}

// writePyString writes pyStringRepr(s) to b.
func writePyString(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	if plainPrintable(s, quote) {
		b.WriteByte(quote)
		b.WriteString(s)
		b.WriteByte(quote)
		return
	}
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			writeEscape(b, `\udc`, rune(s[i]), 2)
			i++
			continue
		}
		i += size
		switch {
		case c == rune(quote) || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < ' ' || c == 0x7f:
			writeEscape(b, `\x`, c, 2)
		case c < 0x7f:
			b.WriteRune(c)
		case unicode.IsPrint(c):
			b.WriteRune(c)
		case c <= 0xff:
			writeEscape(b, `\x`, c, 2)
		case c <= 0xffff:
			writeEscape(b, `\u`, c, 4)
		default:
			writeEscape(b, `\U`, c, 8)
		}
	}
	b.WriteByte(quote)
}

// writeEscape writes prefix and c in digits lower-case hex digits, zero
// padded (Python's \xXX, \uXXXX, \UXXXXXXXX escapes).
func writeEscape(b *strings.Builder, prefix string, c rune, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hex[(c>>shift)&0xf])
	}
}

// plainPrintable reports whether s is printable ASCII without quote or
// backslash: its repr is s between quotes.
func plainPrintable(s string, quote byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f || c == quote || c == '\\' {
			return false
		}
	}
	return true
}

// pyBytesRepr quotes p as Python's repr(bytes) does.
func pyBytesRepr(p []byte) string {
	quote := byte('\'')
	hasSingle, hasDouble := false, false
	for _, c := range p {
		hasSingle = hasSingle || c == '\''
		hasDouble = hasDouble || c == '"'
	}
	if hasSingle && !hasDouble {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(p) + 3)
	b.WriteByte('b')
	b.WriteByte(quote)
	for _, c := range p {
		switch {
		case c == quote || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < ' ' || c >= 0x7f:
			writeEscape(&b, `\x`, rune(c), 2)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
	return b.String()
}
