package feedback

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/revisit-sched/revisit"
)

func TestParseJSON(t *testing.T) {
	v, err := ParseJSON([]byte(`{"origin": "https://github.com/a/b", "type": "git", "status": "full",
		"date": "2026-01-02T03:04:05.123456+01:00", "snapshot": "00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff", "eventful": true}`), Horizon{})
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 1, 2, 2, 4, 5, 123456000, time.UTC)
	if v.Origin != "https://github.com/a/b" || v.VisitType != "git" || v.Status != StatusFull ||
		!v.Date.Equal(want) || string(v.Snapshot) != strings.Repeat("\x00\xff", 10) || v.Eventful == nil || !*v.Eventful {
		t.Fatalf("parsed %+v", v)
	}
	if v, err := ParseJSON([]byte(`{"origin": "https://x.org/r", "visit_type": "hg", "status": "not_found", "date": "2026-01-02T03:04:05Z"}`), Horizon{}); err != nil || v.VisitType != "hg" || v.Snapshot != nil {
		t.Fatalf("visit_type spelling: %+v, %v", v, err)
	}
	for in, field := range map[string]string{
		`{"origin": "https://x.org/r", "visit_type": "git", "type": "hg", "status": "full", "date": "2026-01-02T03:04:05Z"}`:                "type",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z", "snapshot": "xyz"}`:           "snapshot",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z", "snapshot": "00"}`:            "snapshot",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "full", "date": "2999-01-01T00:00:00Z"}`:                              "date",
		`{"origin": "https://x.org/r", "origin": "https://x.org/s", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z"}`: "origin",
		"{\"origin\": \"https://e.org/\xff\xfe\", \"visit_type\": \"git\", \"status\": \"full\", \"date\": \"2026-01-02T03:04:05Z\"}":       "origin",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "full", "date": "2026-01-02 03:04:05"}`:                               "date",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "done", "date": "2026-01-02T03:04:05Z"}`:                              "status",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "full"}`:                                                              "date",
		`{"origin": "a\u0000b", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z"}`:                                     "url",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z", "colour": 1}`:                 "colour",
		`{"origin": "https://x.org/r", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z", "eventful": "yes"}`:           "eventful",
	} {
		_, err := ParseJSON([]byte(in), Horizon{})
		var e *revisit.Error
		if !errors.As(err, &e) || e.Field != field {
			t.Errorf("%s: error %v, want one naming %q", in, err, field)
		}
	}
	if _, err := ParseJSON([]byte(`{"origin": `), Horizon{}); err == nil || !strings.Contains(err.Error(), "malformed JSON") {
		t.Errorf("malformed line: %v", err)
	}
}

// BenchmarkParseJSON parses a line of the shape visit-status ingest reads
// from the upstream journal.
func BenchmarkParseJSON(b *testing.B) {
	line := []byte(`{"origin" : "https://git.example.org/project-003298578", "visit_type" : "git", "status" : "full", ` +
		`"date" : "2026-11-24T00:00:00.001Z", "snapshot" : "40297d4c0b49d47c1a16ce3fcd2a19f640297d4c"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseJSON(line, Horizon{}); err != nil {
			b.Fatal(err)
		}
	}
}
