package celery

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyMaxDepth bounds container nesting in ParsePyLiteral (CPython's own
// parser stops near 200 nested brackets).
const pyMaxDepth = 100

// pyMaxIntDigits bounds the digits of an int literal, as CPython does by
// default when converting str to int (4300).
const pyMaxIntDigits = 4300

// SyntaxError reports where and why a Python literal could not be parsed.
type SyntaxError struct {
	Offset int    // byte offset in the input
	Msg    string // what is wrong
}

// Error formats the offset and the problem.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("python literal: offset %d: %s", e.Offset, e.Msg)
}

// ParsePyLiteral parses one Python literal as repr() prints it and returns
// it as a Go value:
//
//   - None → nil, True / False → bool
//   - int → int64, or *big.Int beyond int64
//   - float → float64 (also inf, -inf, nan as repr prints them)
//   - str (quoted with ' or ", prefixes r, u; escapes \n \t \xhh \uhhhh
//     \Uhhhhhhhh, octal, ...) → string; lone surrogates become U+FFFD
//   - bytes (b'...', rb'...') → []byte
//   - list and tuple → []any
//   - dict → map[string]any; a key that is not a str is keyed by its Python
//     repr (1 → "1", (1, 2) → "(1, 2)")
//
// Sets, complex numbers, triple-quoted and implicitly concatenated strings,
// \N{...} escapes and any expression (calls such as datetime.datetime(...))
// are errors. Errors are *SyntaxError. It never panics.
func ParsePyLiteral(s string) (any, error) {
	if !utf8.ValidString(s) {
		return nil, &SyntaxError{Offset: invalidUTF8Offset(s), Msg: "input is not valid UTF-8"}
	}
	p := pyParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.s) {
		return nil, p.errorf("unexpected %q after the value", p.peekToken())
	}
	return v, nil
}

func invalidUTF8Offset(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(s)
}

type pyParser struct {
	s   string
	pos int
	// tuple is true when the value just parsed is a tuple (a hashable
	// dict key), false for anything else, lists included.
	tuple bool
}

func (p *pyParser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

// peekToken returns a short excerpt at the current position, for errors.
func (p *pyParser) peekToken() string {
	rest := p.s[p.pos:]
	if len(rest) > 10 {
		cut := 10
		for cut > 0 && !utf8.RuneStart(rest[cut]) {
			cut--
		}
		rest = rest[:cut]
	}
	return rest
}

func (p *pyParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *pyParser) value(depth int) (any, error) {
	p.tuple = false
	p.skipSpace()
	if p.pos >= len(p.s) {
		return nil, p.errorf("unexpected end of input, want a value")
	}
	c := p.s[p.pos]
	switch {
	case c == '[' || c == '(' || c == '{':
		if depth >= pyMaxDepth {
			return nil, p.errorf("nested deeper than %d levels", pyMaxDepth)
		}
		switch c {
		case '[':
			v, err := p.list(depth)
			p.tuple = false
			return v, err
		case '(':
			return p.parenOrTuple(depth)
		default:
			v, err := p.dict(depth)
			p.tuple = false
			return v, err
		}
	case c == '\'' || c == '"':
		return p.str(false, false)
	case isDigit(c) || c == '.' || c == '-' || c == '+':
		return p.number()
	case isIdentStart(c):
		start := p.pos
		end := start
		for end < len(p.s) && isIdentChar(p.s[end]) {
			end++
		}
		word := p.s[start:end]
		if end < len(p.s) && (p.s[end] == '\'' || p.s[end] == '"') {
			raw, isBytes, ok := stringPrefix(word)
			if !ok {
				return nil, p.errorf("unknown string prefix %q", word)
			}
			p.pos = end
			return p.str(raw, isBytes)
		}
		switch word {
		case "None":
			p.pos = end
			return nil, nil
		case "True":
			p.pos = end
			return true, nil
		case "False":
			p.pos = end
			return false, nil
		case "inf":
			p.pos = end
			return math.Inf(1), nil
		case "nan":
			p.pos = end
			return math.NaN(), nil
		}
		return nil, p.errorf("unexpected name %q (only literals are accepted)", word)
	}
	return nil, p.errorf("unexpected %q, want a value", p.peekToken())
}

// stringPrefix interprets the letters before a quote.
func stringPrefix(w string) (raw, isBytes, ok bool) {
	switch strings.ToLower(w) {
	case "r":
		return true, false, true
	case "u":
		return false, false, true
	case "b":
		return false, true, true
	case "br", "rb":
		return true, true, true
	}
	return false, false, false
}

func (p *pyParser) list(depth int) (any, error) {
	p.pos++ // '['
	out, _, err := p.items(depth, ']', "list")
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parenOrTuple parses a tuple, or a parenthesized value.
func (p *pyParser) parenOrTuple(depth int) (any, error) {
	p.pos++ // '('
	out, comma, err := p.items(depth, ')', "tuple")
	if err != nil {
		return nil, err
	}
	if len(out) == 1 && !comma {
		return out[0], nil // (x) is x, not a tuple; p.tuple is x's
	}
	p.tuple = true
	return out, nil
}

// items parses comma-separated values up to closing (the opening bracket
// already read), and reports whether the sequence was empty or ended with
// a comma: "(x,)" is a tuple, "(x)" is not.
func (p *pyParser) items(depth int, closing byte, what string) (out []any, comma bool, err error) {
	out = []any{}
	for {
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == closing {
			p.pos++
			return out, true, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, false, err
		}
		out = append(out, v)
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, false, p.errorf("unexpected end of input in a %s, want ',' or '%c'", what, closing)
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case closing:
			p.pos++
			return out, false, nil
		default:
			return nil, false, p.errorf("unexpected %q in a %s, want ',' or '%c'", p.peekToken(), what, closing)
		}
	}
}

func (p *pyParser) dict(depth int) (any, error) {
	p.pos++ // '{'
	out := map[string]any{}
	for {
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return out, nil
		}
		keyPos := p.pos
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		var key string
		switch kk := k.(type) {
		case string:
			key = kk
		case []any:
			if !p.tuple {
				return nil, &SyntaxError{Offset: keyPos, Msg: "unhashable dict key (a list)"}
			}
			key = tupleRepr(kk)
		case map[string]any:
			return nil, &SyntaxError{Offset: keyPos, Msg: "unhashable dict key (a dict)"}
		default:
			key = Repr(kk)
		}
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, p.errorf("unexpected end of input in a dict, want ':'")
		}
		if c := p.s[p.pos]; c == ',' || c == '}' {
			return nil, p.errorf("sets are not supported")
		} else if c != ':' {
			return nil, p.errorf("unexpected %q after a dict key, want ':'", p.peekToken())
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[key] = v
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, p.errorf("unexpected end of input in a dict, want ',' or '}'")
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return out, nil
		default:
			return nil, p.errorf("unexpected %q in a dict, want ',' or '}'", p.peekToken())
		}
	}
}

// tupleRepr prints a parsed tuple as Python would: (a, b), (a,) or ().
func tupleRepr(t []any) string {
	inner := Repr(t)
	inner = inner[1 : len(inner)-1]
	if len(t) == 1 {
		inner += ","
	}
	return "(" + inner + ")"
}

func (p *pyParser) number() (any, error) {
	start := p.pos
	neg := false
	if c := p.s[p.pos]; c == '-' || c == '+' {
		neg = c == '-'
		p.pos++
		// inf / nan after a sign, as repr prints -inf.
		for _, w := range []string{"inf", "nan"} {
			if strings.HasPrefix(p.s[p.pos:], w) &&
				(p.pos+len(w) == len(p.s) || !isIdentChar(p.s[p.pos+len(w)])) {
				p.pos += len(w)
				if w == "nan" {
					return math.NaN(), nil
				}
				if neg {
					return math.Inf(-1), nil
				}
				return math.Inf(1), nil
			}
		}
	}
	digits := p.pos
	for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
		p.pos++
	}
	intEnd := p.pos
	isFloat := false
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		isFloat = true
		p.pos++
		for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
			p.pos++
		}
	}
	if p.pos == digits || p.pos == digits+1 && isFloat {
		p.pos = start
		return nil, p.errorf("malformed number %q", p.peekToken())
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		isFloat = true
		p.pos++
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			p.pos++
		}
		expDigits := p.pos
		for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
			p.pos++
		}
		if p.pos == expDigits {
			p.pos = start
			return nil, p.errorf("malformed exponent in %q", p.peekToken())
		}
	}
	if p.pos < len(p.s) && (isIdentChar(p.s[p.pos]) || p.s[p.pos] == '.') {
		return nil, p.errorf("unsupported number syntax near %q", p.peekToken())
	}
	text := p.s[start:p.pos]
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("malformed float %q", text)}
		}
		return f, nil
	}
	if intEnd-digits > pyMaxIntDigits {
		return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("int literal longer than %d digits", pyMaxIntDigits)}
	}
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i, nil
	}
	b, ok := new(big.Int).SetString(strings.TrimPrefix(text, "+"), 10)
	if !ok {
		return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("malformed int %q", text)}
	}
	return b, nil
}

// str parses a quoted str or bytes literal at p.pos (the opening quote).
func (p *pyParser) str(raw, isBytes bool) (any, error) {
	start := p.pos
	q := p.s[p.pos]
	p.pos++
	if strings.HasPrefix(p.s[p.pos:], string([]byte{q, q})) {
		p.pos = start
		return nil, p.errorf("triple-quoted strings are not supported")
	}
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			return nil, &SyntaxError{Offset: start, Msg: "unterminated string"}
		}
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			if isBytes {
				return []byte(b.String()), nil
			}
			return b.String(), nil
		case c == '\n' || c == '\r':
			return nil, p.errorf("newline in a string")
		case c == '\\':
			if err := p.escape(&b, raw, isBytes); err != nil {
				return nil, err
			}
		case c >= utf8.RuneSelf:
			if isBytes {
				return nil, p.errorf("bytes can only contain ASCII literal characters")
			}
			_, n := utf8.DecodeRuneInString(p.s[p.pos:])
			b.WriteString(p.s[p.pos : p.pos+n])
			p.pos += n
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// escape handles one backslash sequence at p.pos.
func (p *pyParser) escape(b *strings.Builder, raw, isBytes bool) error {
	escPos := p.pos
	p.pos++ // '\\'
	if p.pos >= len(p.s) {
		return &SyntaxError{Offset: escPos, Msg: "unterminated string (trailing backslash)"}
	}
	c := p.s[p.pos]
	if raw {
		// In a raw literal the backslash stays; it only protects the next
		// character (a quote or another backslash) from ending the string.
		b.WriteByte('\\')
		if c == '\n' || c == '\r' {
			return p.errorf("newline in a string")
		}
		if c >= utf8.RuneSelf {
			return nil // the character itself is copied by the caller
		}
		b.WriteByte(c)
		p.pos++
		return nil
	}
	p.pos++
	switch c {
	case '\n':
		// line continuation: nothing
	case '\\', '\'', '"':
		b.WriteByte(c)
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v := int(c - '0')
		for i := 0; i < 2 && p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '7'; i++ {
			v = v*8 + int(p.s[p.pos]-'0')
			p.pos++
		}
		if isBytes {
			if v > 0xff {
				return &SyntaxError{Offset: escPos, Msg: "octal escape value > 0o377 in bytes"}
			}
			b.WriteByte(byte(v))
		} else {
			b.WriteRune(rune(v))
		}
	case 'x':
		v, err := p.hexDigits(escPos, 2)
		if err != nil {
			return err
		}
		if isBytes {
			b.WriteByte(byte(v))
		} else {
			b.WriteRune(rune(v))
		}
	case 'u', 'U', 'N':
		if isBytes {
			// Not escapes in bytes: kept as written.
			b.WriteByte('\\')
			b.WriteByte(c)
			return nil
		}
		if c == 'N' {
			return &SyntaxError{Offset: escPos, Msg: `\N{...} escapes are not supported`}
		}
		n := 4
		if c == 'U' {
			n = 8
		}
		v, err := p.hexDigits(escPos, n)
		if err != nil {
			return err
		}
		if v > unicode.MaxRune {
			return &SyntaxError{Offset: escPos, Msg: fmt.Sprintf(`\U escape %#x beyond U+10FFFF`, v)}
		}
		b.WriteRune(rune(v)) // surrogates become U+FFFD
	default:
		// Unknown escape: Python keeps the backslash.
		b.WriteByte('\\')
		if c >= utf8.RuneSelf {
			p.pos-- // let the caller copy the whole character
			if isBytes {
				return p.errorf("bytes can only contain ASCII literal characters")
			}
			return nil
		}
		b.WriteByte(c)
	}
	return nil
}

// hexDigits reads exactly n hex digits.
func (p *pyParser) hexDigits(escPos, n int) (uint64, error) {
	if p.pos+n > len(p.s) {
		return 0, &SyntaxError{Offset: escPos, Msg: fmt.Sprintf("truncated escape: want %d hex digits", n)}
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+n], 16, 32)
	if err != nil {
		return 0, &SyntaxError{Offset: escPos, Msg: fmt.Sprintf("truncated escape: want %d hex digits", n)}
	}
	p.pos += n
	return v, nil
}
