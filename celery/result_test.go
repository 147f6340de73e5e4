package celery

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestParseSucceededResult(t *testing.T) {
	snap, _ := hex.DecodeString(snapHex)
	yes, no := true, false
	cases := []struct {
		repr     string
		status   VisitStatus
		eventful *bool
		snapshot []byte
	}{
		{"{'status': 'eventful', 'snapshot_id': '" + snapHex + "'}", VisitEventful, &yes, snap},
		{"{'status': 'uneventful', 'snapshot_id': 'swh:1:snp:" + snapHex + "'}", VisitUneventful, &no, snap},
		{"{'status': 'failed'}", VisitFailed, nil, nil},
		{"{'status': 'not_found', 'snapshot_id': None}", VisitNotFound, nil, nil},
		{"{'status': 'success', 'eventful': True}", VisitEventful, &yes, nil},
		{"{'status': 'success', 'eventful': False, 'snapshot': ''}", VisitUneventful, &no, nil},
		{"{'status': 'success'}", VisitUneventful, nil, nil},
		{`{"status": "eventful", 'snapshot_id': b'` + bytesEscape(snap) + `'}`, VisitEventful, &yes, snap},
		{"{'status': 'eventful', 'snapshot_id': b'" + snapHex + "'}", VisitEventful, &yes, snap},
		{"{'status': 'eventful', 'extra': [1, (2, 3)], 1: None}", VisitEventful, &yes, nil},
	}
	for _, c := range cases {
		r, err := ParseSucceededResult(c.repr)
		if err != nil {
			t.Errorf("%s: %v", c.repr, err)
			continue
		}
		if r.Status != c.status || (r.Eventful == nil) != (c.eventful == nil) ||
			(r.Eventful != nil && *r.Eventful != *c.eventful) || string(r.SnapshotID) != string(c.snapshot) ||
			r.Inferred || r.Raw == nil {
			t.Errorf("%s: got %+v", c.repr, r)
		}
	}
}

func bytesEscape(p []byte) string {
	var b strings.Builder
	for _, c := range p {
		b.WriteString(`\x`)
		b.WriteString(hex.EncodeToString([]byte{c}))
	}
	return b.String()
}

func TestParseSucceededResultErrors(t *testing.T) {
	cases := map[string]string{
		"None":                                 "result is a Python None, not a dict",
		"'eventful'":                           "result is a Python str, not a dict",
		"[1]":                                  "result is a Python list, not a dict",
		"{'pages': 1}":                         `result has no "status"`,
		"{'status': 'ok'}":                     `unknown status "ok"`,
		"{'status': None}":                     `"status" is a None, want a string`,
		"{'status': 'success', 'eventful': 1}": `"eventful" is a int, want a boolean`,
		"{'status': 'eventful', 'snapshot_id': 'xyz'}":  `"snapshot_id" is not a snapshot id of 40 hex digits`,
		"{'status': 'eventful', 'snapshot_id': b'abc'}": `"snapshot_id" is not a snapshot id of 40 hex digits`,
		"{'status': 'eventful', 'snapshot_id': '00'}":   `"snapshot_id" is not a snapshot id of 40 hex digits (20 bytes): "00"`,
		"{'status': 'eventful', 'snapshot_id': 3.5}":    "want a hex string",
		"{'status': 'eventful'":                         "offset 21: unexpected end of input in a dict",
		"{'status': 'eventful', 'x': 'aaaa...":          "unterminated string",
		"<MyObject at 0x7f>":                            "unexpected",
	}
	for in, want := range cases {
		_, err := ParseSucceededResult(in)
		if !errors.Is(err, ErrBadResult) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want ErrBadResult containing %q", in, err, want)
		}
	}
	// A syntax error stays reachable.
	_, err := ParseSucceededResult("{")
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("err %v does not carry a *SyntaxError", err)
	}
}

func TestParseTaskResult(t *testing.T) {
	cases := []struct {
		repr     string
		status   VisitStatus
		inferred bool
	}{
		{"{'status': 'uneventful'}", VisitUneventful, false},
		{"{'status': 'success', 'eventful': True}", VisitEventful, false},
		{"{'pages': 3, 'origins': 120}", VisitEventful, true},
		{"{}", VisitUneventful, true},
		{"None", VisitUneventful, true},
		{"0", VisitUneventful, true},
		{"''", VisitUneventful, true},
		{"[1]", VisitEventful, true},
		{"'done'", VisitEventful, true},
		{"True", VisitEventful, true},
	}
	for _, c := range cases {
		r, err := ParseTaskResult(c.repr)
		if err != nil {
			t.Errorf("%s: %v", c.repr, err)
			continue
		}
		if r.Status != c.status || r.Inferred != c.inferred {
			t.Errorf("%s: got status %s inferred %v, want %s %v", c.repr, r.Status, r.Inferred, c.status, c.inferred)
		}
	}
	for _, repr := range []string{"<object object at 0x7f>", "{'status': 'ok'}", ""} {
		if _, err := ParseTaskResult(repr); !errors.Is(err, ErrBadResult) {
			t.Errorf("%q: got %v, want ErrBadResult", repr, err)
		}
	}
}
