package jsonobj

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/revisit-sched/revisit"
)

// Check refuses, in data (one JSON value that encoding/json has accepted),
// what encoding/json silently changes: an object with a key twice (it keeps
// the last) and a string that is not valid UTF-8, raw or escaped as a lone
// UTF-16 surrogate (it replaces either with U+FFFD, making the string
// another value). The error is an
// invalid-input *revisit.Error whose field is the path to the value, as in
// origins[3].url.
func Check(data []byte) error {
	c := checker{data: data}
	c.value()
	if c.problem == "" {
		return nil
	}
	return revisit.Invalidf(c.field(), "%s", c.problem)
}

// checker walks one valid JSON value. path holds the keys (strings) and
// indexes (ints) from the top to the value being read.
type checker struct {
	data    []byte
	pos     int
	path    []any
	problem string
}

func (c *checker) fail(problem string) { c.problem = problem }

// field writes the path as field names are written, a.b[3].c, with
// invalid UTF-8 replaced.
func (c *checker) field() string {
	var b strings.Builder
	for _, p := range c.path {
		switch x := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(x)
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

func (c *checker) skipSpace() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value reads one value and stops at the first problem.
func (c *checker) value() {
	c.skipSpace()
	if c.pos >= len(c.data) {
		return
	}
	switch c.data[c.pos] {
	case '{':
		c.object()
	case '[':
		c.array()
	case '"':
		raw := c.str()
		switch {
		case !utf8.Valid(raw):
			c.fail("not valid UTF-8")
		case HasLoneSurrogate(raw):
			c.fail(`not valid text: a lone UTF-16 surrogate (\ud800–\udfff) that no character pairs`)
		}
	default:
		for c.pos < len(c.data) && !strings.ContainsRune(",]} \t\n\r", rune(c.data[c.pos])) {
			c.pos++
		}
	}
}

func (c *checker) object() {
	c.pos++ // {
	var keys keySet
	for c.problem == "" {
		c.skipSpace()
		if c.data[c.pos] == '}' {
			c.pos++
			return
		}
		if c.data[c.pos] == ',' {
			c.pos++
			c.skipSpace()
		}
		key := c.key()
		if c.problem != "" {
			return
		}
		c.path = append(c.path, key)
		if !keys.add(key) {
			c.fail("given twice in one object")
			return
		}
		c.skipSpace()
		c.pos++ // :
		c.value()
		if c.problem != "" {
			return
		}
		c.path = c.path[:len(c.path)-1]
	}
}

// key reads an object's key and returns its text.
func (c *checker) key() string {
	raw := c.str()
	if !utf8.Valid(raw) || HasLoneSurrogate(raw) {
		c.fail("a key is not valid UTF-8")
		return ""
	}
	if !strings.ContainsRune(string(raw), '\\') {
		return string(raw)
	}
	var k string
	if err := json.Unmarshal(c.data[c.pos-len(raw)-2:c.pos], &k); err != nil {
		c.fail("malformed key")
	}
	return k
}

func (c *checker) array() {
	c.pos++ // [
	for i := 0; c.problem == ""; i++ {
		c.skipSpace()
		switch c.data[c.pos] {
		case ']':
			c.pos++
			return
		case ',':
			c.pos++
		}
		c.path = append(c.path, i)
		c.value()
		if c.problem != "" {
			return
		}
		c.path = c.path[:len(c.path)-1]
	}
}

// str reads a string and returns its raw bytes, between the quotes.
func (c *checker) str() []byte {
	c.pos++ // "
	start := c.pos
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case '\\':
			c.pos += 2
			continue
		case '"':
			c.pos++
			return c.data[start : c.pos-1]
		}
		c.pos++
	}
	return c.data[start:]
}

// keySet holds the keys of one object: in a slice while they are few (most
// objects), in a map beyond.
type keySet struct {
	few  []string
	many map[string]bool
}

// add adds key and reports whether it was new.
func (s *keySet) add(key string) bool {
	if s.many != nil {
		if s.many[key] {
			return false
		}
		s.many[key] = true
		return true
	}
	for _, k := range s.few {
		if k == key {
			return false
		}
	}
	s.few = append(s.few, key)
	if len(s.few) > 16 {
		s.many = make(map[string]bool, 2*len(s.few))
		for _, k := range s.few {
			s.many[k] = true
		}
	}
	return true
}

// HasLoneSurrogate reports whether raw, a string's text between its
// quotes or a whole JSON text (outside strings JSON has no backslash),
// escapes a UTF-16 surrogate that is not half of a pair: a high one
// (\ud800–\udbff) not followed by a low one (\udc00–\udfff), or a low
// one alone. encoding/json replaces such a surrogate with U+FFFD.
func HasLoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := escapedUnit(raw, i)
		switch {
		case !ok:
			i++ // another escape: skip its letter
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			low, ok := escapedUnit(raw, i+6)
			if !ok || low < 0xdc00 || low > 0xdfff {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// escapedUnit reads the UTF-16 unit of the \uXXXX escape at raw[i:].
func escapedUnit(raw []byte, i int) (rune, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
	return rune(n), err == nil
}
