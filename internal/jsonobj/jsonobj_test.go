package jsonobj

import (
	"errors"
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
	if _, err := obj.Time("date"); err == nil || !strings.Contains(err.Error(), "date: \"2024-01-01\" is not an RFC 3339 time with a zone") {
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

// Strings read without the JSON decoder and strings it must decode (escapes,
// invalid UTF-8, which it replaces) come out as the decoder gives them.
func TestDecodeStrings(t *testing.T) {
	for in, want := range map[string]string{
		`{"s": "https://forge.example/a b"}`: "https://forge.example/a b",
		`{"s": "caf\u00e9 \"q\" \\ \/"}`:     `café "q" \ /`,
		`{"s": ""}`:                          "",
		"{\"s\": \"\xff\"}":                  "\ufffd",
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
