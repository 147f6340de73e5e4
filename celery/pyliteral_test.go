package celery

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

func TestParsePyLiteral(t *testing.T) {
	big100 := new(big.Int).Lsh(big.NewInt(1), 100)
	cases := []struct {
		in   string
		want any
	}{
		{"None", nil},
		{" True ", true},
		{"False", false},
		{"0", int64(0)},
		{"-12", int64(-12)},
		{"+7", int64(7)},
		{"9223372036854775807", int64(math.MaxInt64)},
		{"1267650600228229401496703205376", big100},
		{"-9223372036854775809", new(big.Int).Sub(big.NewInt(math.MinInt64), big.NewInt(1))},
		{"1.5", 1.5},
		{"1.", 1.0},
		{".5", 0.5},
		{"-2.5e-3", -0.0025},
		{"1e+16", 1e16},
		{"1E5", 1e5},
		{"1e999", math.Inf(1)},
		{"inf", math.Inf(1)},
		{"-inf", math.Inf(-1)},
		{"''", ""},
		{`'a\'b'`, "a'b"},
		{`"it's"`, "it's"},
		{`'\\ \n \t \r \a \b \f \v \0 \101 \x41 \u00e9 \U0001F600'`, "\\ \n \t \r \a \b \f \v \x00 A A é 😀"},
		{`'\q\d'`, `\q\d`},
		{"'line\\\ncontinued'", "linecontinued"},
		{`'\ud800'`, "\uFFFD"},
		{"'日本 é'", "日本 é"},
		{`u'x'`, "x"},
		{`r'a\nb\'c'`, `a\nb\'c`},
		{`R"\d"`, `\d`},
		{`b''`, []byte{}},
		{`b'a\x00\xff\'\n\101'`, []byte("a\x00\xff'\nA")},
		{`b'\u00e9'`, []byte(`\u00e9`)},
		{`rb'\x00'`, []byte(`\x00`)},
		{`Br'\n'`, []byte(`\n`)},
		{"[]", []any{}},
		{"[1, 'a', [None], ]", []any{int64(1), "a", []any{nil}}},
		{"()", []any{}},
		{"(1,)", []any{int64(1)}},
		{"(1)", int64(1)},
		{"((1, 2), 3)", []any{[]any{int64(1), int64(2)}, int64(3)}},
		{"{}", map[string]any{}},
		{"{'a': 1, \"b\": {'c': [1.5]}, }", map[string]any{"a": int64(1), "b": map[string]any{"c": []any{1.5}}}},
		{"{1: 'x', None: 2, (1, 2): 3, b'k': 4}", map[string]any{"1": "x", "None": int64(2), "(1, 2)": int64(3), "b'k'": int64(4)}},
		{"{(1): 2, ((1),): 3, (): 4, ((1, 2)): 5}", map[string]any{"1": int64(2), "(1,)": int64(3), "()": int64(4), "(1, 2)": int64(5)}},
		{"{'a': 1, 'a': 2}", map[string]any{"a": int64(2)}},
		{"\n{ 'status' :\t'eventful' }\n", map[string]any{"status": "eventful"}},
	}
	for _, c := range cases {
		got, err := ParsePyLiteral(c.in)
		if err != nil {
			t.Errorf("ParsePyLiteral(%s): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParsePyLiteral(%s) = %#v, want %#v", c.in, got, c.want)
		}
	}
	if v, err := ParsePyLiteral("nan"); err != nil || !math.IsNaN(v.(float64)) {
		t.Errorf("nan: %v, %v", v, err)
	}
}

func TestParsePyLiteralErrors(t *testing.T) {
	cases := []struct {
		in     string
		offset int
		msg    string
	}{
		{"", 0, "unexpected end of input"},
		{"   ", 3, "unexpected end of input"},
		{"[1, 2", 5, "unexpected end of input in a list"},
		{"[1 2]", 3, "want ',' or ']'"},
		{"{'a' 1}", 5, "want ':'"},
		{"{'a': 1", 7, "unexpected end of input in a dict"},
		{"{1, 2}", 2, "sets are not supported"},
		{"{[1]: 2}", 1, "unhashable"},
		{"{'k': 1, {}: 2}", 9, "unhashable"},
		{"{([1]): 2}", 1, "unhashable"},
		{"'abc", 0, "unterminated string"},
		{"'a\nb'", 2, "newline in a string"},
		{"'''x'''", 0, "triple-quoted"},
		{`'\x4'`, 1, "want 2 hex digits"},
		{`'\u12'`, 1, "want 4 hex digits"},
		{`'\U00110000'`, 1, "beyond U+10FFFF"},
		{`'\N{BULLET}'`, 1, `\N{...}`},
		{`b'é'`, 2, "ASCII"},
		{`b'\777'`, 2, "octal escape"},
		{`f'x'`, 0, "unknown string prefix"},
		{"datetime.datetime(2020, 1, 1)", 0, `unexpected name "datetime"`},
		{"1 2", 2, "after the value"},
		{"'a' 'b'", 4, "after the value"},
		{"-", 0, "malformed number"},
		{".", 0, "malformed number"},
		{"1e", 0, "malformed exponent"},
		{"0x1f", 1, "unsupported number syntax"},
		{"1_000", 1, "unsupported number syntax"},
		{"1j", 1, "unsupported number syntax"},
		{"1..2", 2, "unsupported number syntax"},
		{strings.Repeat("[", 101) + strings.Repeat("]", 101), 100, "nested deeper than 100"},
		{strings.Repeat("9", 4301), 0, "longer than 4300 digits"},
		{"'\xff'", 1, "not valid UTF-8"},
	}
	for _, c := range cases {
		_, err := ParsePyLiteral(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("ParsePyLiteral(%q) err = %v, want a *SyntaxError", c.in, err)
			continue
		}
		if se.Offset != c.offset || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("ParsePyLiteral(%q) = offset %d %q, want offset %d containing %q", c.in, se.Offset, se.Msg, c.offset, c.msg)
		}
	}
}

// Go value → Python repr → parse back gives the same value.
func TestReprRoundTrip(t *testing.T) {
	values := []any{
		nil, true, false, int64(0), int64(-5), int64(math.MaxInt64), int64(math.MinInt64),
		new(big.Int).Lsh(big.NewInt(3), 200),
		0.0, math.Copysign(0, -1), 1.0, 0.1, 1e16, 1e-5, 2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1),
		"", "plain", "it's", `"quoted"`, `both ' and "`, "\\", "\x00\x01\t\n\r\x7f", "\u00a0\u200b\u2028\ue000",
		"日本語 émoji 😀 \U0010ffff", strings.Repeat("x", 5000),
		[]byte{}, []byte{0, 1, 2, 0x7f, 0x80, 0xff, '\'', '"', '\\'},
		[]any{}, []any{int64(1), "two", []any{3.5, nil}},
		map[string]any{}, map[string]any{"status": "eventful", "snapshot_id": "ab12", "n": int64(3), "nested": map[string]any{"l": []any{false}}},
	}
	for _, v := range values {
		r := Repr(v)
		got, err := ParsePyLiteral(r)
		if err != nil {
			t.Errorf("ParsePyLiteral(Repr(%#v) = %s): %v", v, r, err)
			continue
		}
		if !sameValue(got, v) {
			t.Errorf("round trip of %#v via %s gave %#v", v, r, got)
		}
	}
}

// sameValue compares parsed values, treating *big.Int by value and
// float64 by bits (so -0.0 and 0.0 differ).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
