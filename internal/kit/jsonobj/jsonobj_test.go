package jsonobj

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/revisit-sched/revisit"
)

func TestParseAndFields(t *testing.T) {
	known := []string{"url", "date", "n"}
	for in, want := range map[string]string{
		`{"url": `:              "malformed JSON",
		`[1]`:                   "want a JSON object",
		`null`:                  "want a JSON object, got null",
		`{"url": "x"} {}`:       "text after the object",
		`{"url": "x", "zz": 1}`: `zz: unknown field (known: url, date, n)`,
	} {
		if _, err := Parse([]byte(in), known); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", in, err, want)
		}
	}
	obj, err := Parse([]byte(`{"url": 5, "date": "2024-01-01", "n": null}`), known)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if _, err := obj.Decode("url", &s, "a string"); !errors.Is(err, revisit.ErrInvalid) || !strings.Contains(err.Error(), "url: want a string, got 5") {
		t.Errorf("Decode of a number as a string: %v", err)
	}
	if _, err := obj.Time("date"); err == nil || !strings.Contains(err.Error(), `date: want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "2024-01-01"`) {
		t.Errorf("Time without a zone: %v", err)
	}
	if obj.Has("n") || obj.Has("missing") {
		t.Error("null and absent fields must not count as present")
	}
	obj, _ = Parse([]byte(`{"date": "2024-01-01T12:00:00+02:00"}`), known)
	if ts, err := obj.Time("date"); err != nil || ts.Hour() != 10 || ts.Location().String() != "UTC" {
		t.Errorf("Time: %v, %v", ts, err)
	}
}

// Strings read without the JSON decoder and strings it must decode
// (escapes) come out as the decoder gives them.
func TestDecodeStrings(t *testing.T) {
	for in, want := range map[string]string{
		`{"s": "https://forge.example/a b"}`: "https://forge.example/a b",
		`{"s": "caf\u00e9 \"q\" \\ \/"}`:     `café "q" \ /`,
		`{"s": ""}`:                          "",
		`{"s": "ünïcödé"}`:                   "ünïcödé",
	} {
		obj, err := Parse([]byte(in), []string{"s"})
		if err != nil {
			t.Fatalf("Parse(%s): %v", in, err)
		}
		var got string
		if ok, err := obj.Decode("s", &got, "a string"); !ok || err != nil || got != want {
			t.Errorf("Decode(%s) = %q, %v, %v; want %q", in, got, ok, err, want)
		}
	}
}

// What encoding/json silently changes (a key given twice, invalid UTF-8) is
// refused, naming the path to the value.
func TestCheck(t *testing.T) {
	const lone = `not valid text: a lone UTF-16 surrogate (\ud800–\udfff) that no character pairs`
	for in, want := range map[string]string{
		`{"url": "a", "url": "b"}`:                                   "url: given twice in one object",
		`{"a": 1, "\u0061": 2}`:                                      "a: given twice in one object",
		`{"origins": [{"url": "a"}, {"x": 1, "x": 2}]}`:              "origins[1].x: given twice in one object",
		"{\"origins\": [{}, {\"url\": \"https://e.org/\xff\xfe\"}]}": "origins[1].url: not valid UTF-8",
		"[1, {\"k\": [\"ok\", \"\xc3\"]}]":                           "[1].k[1]: not valid UTF-8",
		"{\"a\xff\": 1}":                                             "a key is not valid UTF-8",
		`{"url": "https://e.org/\ud800"}`:                            "url: " + lone,
		`{"v": ["ok", "x\udc00y"]}`:                                  "v[1]: " + lone,
		`{"v": "\ud83d\u0041"}`:                                      "v: " + lone,
		`{"v": "\\\ud800"}`:                                          "v: " + lone,
		`{"\udbff": 1}`:                                              "a key is not valid UTF-8",
	} {
		err := Check([]byte(in))
		if !errors.Is(err, revisit.ErrInvalid) || err.Error() != want {
			t.Errorf("Check(%q) = %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{`{}`, `[]`, `{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}`, `"é"`, `12.5e3`,
		`{"s": "q\"uote\\", "t": true, "n": null}`, ` [ 1 , { } , [ ] ] `,
		`{"emoji": "\ud83d\ude00", "escaped": "\\ud800", "bmp": "\u00e9\uffff"}`} {
		if err := Check([]byte(in)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", in, err)
		}
	}
	many := `{"k0": 0`
	for i := 1; i < 40; i++ {
		many += fmt.Sprintf(`, "k%d": %d`, i, i)
	}
	if err := Check([]byte(many + `, "k3": 3}`)); err == nil || err.Error() != "k3: given twice in one object" {
		t.Errorf("Check of a large object with a key twice = %v", err)
	}
	if _, err := Parse([]byte(`{"url": "a", "url": "b"}`), []string{"url"}); err == nil {
		t.Error("Parse accepted a key given twice")
	}
}
