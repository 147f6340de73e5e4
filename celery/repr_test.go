package celery

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRepr(t *testing.T) {
	type point struct {
		X int    `json:"x"`
		Y string `json:"y"`
	}
	n := 7
	var nilPtr *int
	cyclic := []any{1, nil}
	cyclic[1] = cyclic
	cyclicMap := map[string]any{"a": 1}
	cyclicMap["self"] = cyclicMap
	cases := []struct {
		in   any
		want string
	}{
		{nil, "None"},
		{true, "True"},
		{false, "False"},
		{0, "0"},
		{-42, "-42"},
		{int8(-8), "-8"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{new(big.Int).Lsh(big.NewInt(1), 100), "1267650600228229401496703205376"},
		{1.0, "1.0"},
		{0.1, "0.1"},
		{math.Copysign(0, -1), "-0.0"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{1.5e16, "1.5e+16"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.2345e-7, "1.2345e-07"},
		{123456789.125, "123456789.125"},
		{1e300, "1e+300"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
		{float32(0.1), "0.10000000149011612"},
		{json.Number("12"), "12"},
		{json.Number("1.0"), "1.0"},
		{json.Number("1e2"), "100.0"},
		{json.Number("123456789012345678901234567890"), "123456789012345678901234567890"},
		{"", "''"},
		{"abc", "'abc'"},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`it's "x"`, `'it\'s "x"'`},
		{"back\\slash", `'back\\slash'`},
		{"tab\tnl\ncr\r", `'tab\tnl\ncr\r'`},
		{"\x00\x1f\x7f", `'\x00\x1f\x7f'`},
		{"é ü 日本 😀", "'é ü 日本 😀'"},
		{"\u00a0\u00ad", `'\xa0\xad'`},
		{"\u200b\u2028", `'\u200b\u2028'`},
		{"\ue000", `'\ue000'`},
		{"\U0010ffff", `'\U0010ffff'`},
		{"a\xffb", `'a\udcffb'`},
		{[]byte("a'b\x00\xff"), `b"a'b\x00\xff"`},
		{[]byte(`'"`), `b'\'"'`},
		{[]byte{}, "b''"},
		{[]any{}, "[]"},
		{[]any{1, "a", nil, []any{true}}, "[1, 'a', None, [True]]"},
		{map[string]any{}, "{}"},
		{map[string]any{"b": 1, "a": []any{}, "c": map[string]any{"z": nil}}, "{'a': [], 'b': 1, 'c': {'z': None}}"},
		{[]string{"x", "y"}, "['x', 'y']"},
		{[2]int{1, 2}, "[1, 2]"},
		{map[int]string{10: "a", 2: "b"}, "{10: 'a', 2: 'b'}"},
		{map[string]int{"b": 2, "a": 1}, "{'a': 1, 'b': 2}"},
		{&n, "7"},
		{nilPtr, "None"},
		{[]int(nil), "[]"},
		{point{1, "p"}, "{'x': 1, 'y': 'p'}"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "'2024-01-02T03:04:05+00:00'"},
		{cyclic, "[1, [...]]"},
		{cyclicMap, "{'a': 1, 'self': {...}}"},
		{make(chan int), ""}, // checked below: a string repr of something
	}
	for _, c := range cases {
		got := Repr(c.in)
		if c.want == "" {
			if !strings.HasPrefix(got, "'") {
				t.Errorf("Repr(%T) = %q, want a quoted fallback", c.in, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Repr(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestReprTruncated(t *testing.T) {
	v := []any{strings.Repeat("ab", 100), strings.Repeat("日", 100)}
	full := Repr(v)
	if got := ReprTruncated(v, len(full)); got != full {
		t.Errorf("at exact length: %q, want the full repr", got)
	}
	for _, max := range []int{0, 3, 4, 10, 205, 206, 207, 300, len(full) - 1} {
		got := ReprTruncated(v, max)
		limit := max
		if limit < 3 {
			limit = 3
		}
		if len(got) > limit || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
			t.Errorf("ReprTruncated(max=%d) = %q (len %d)", max, got, len(got))
		}
		if !strings.HasPrefix(full, strings.TrimSuffix(got, "...")) {
			t.Errorf("ReprTruncated(max=%d) = %q is not a prefix of the full repr", max, got)
		}
	}
	// A huge value is not formatted in full.
	huge := make([]any, 1_000_000)
	if got := ReprTruncated(huge, 20); got != "[None, None, None..." {
		t.Errorf("huge: %q", got)
	}
}
