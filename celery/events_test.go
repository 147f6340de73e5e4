package celery

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

const snapHex = "0123456789abcdef0123456789abcdef01234567"

func TestDecodeEventsSingle(t *testing.T) {
	body := `{"hostname": "celery@w1", "utcoffset": 0, "pid": 4242, "clock": 17,
		"uuid": "` + testID + `", "result": "{'status': 'eventful'}", "runtime": 1.25,
		"timestamp": 1700000000.123456, "type": "task-succeeded", "local_received": 1700000000.2}`
	evs, err := DecodeEvents("task.succeeded", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("got %d events, want 1", len(evs))
	}
	ev := evs[0]
	want := time.Date(2023, 11, 14, 22, 13, 20, 123456000, time.UTC)
	if ev.Type != TypeSucceeded || ev.UUID != testID || ev.Hostname != "celery@w1" || ev.PID != 4242 ||
		ev.Clock != 17 || !ev.Timestamp.Equal(want) || ev.Timestamp.Location() != time.UTC ||
		ev.Result != "{'status': 'eventful'}" || ev.Runtime != 1.25 || ev.VisitResult != nil {
		t.Errorf("event = %+v", ev)
	}
	if ev.Fields["utcoffset"] == nil || ev.Fields["local_received"] == nil {
		t.Errorf("Fields lost extra fields: %v", ev.Fields)
	}
}

func TestDecodeEventsPerType(t *testing.T) {
	base := `"uuid": "` + testID + `", "hostname": "h", "timestamp": 1, "pid": 1, "clock": null`
	cases := []struct {
		body  string
		check func(Event) bool
	}{
		{`{"type": "task-received", ` + base + `, "name": "swh.x", "args": "[]", "kwargs": "{'url': 'u'}", "retries": 2, "root_id": "r", "eta": null}`,
			func(e Event) bool {
				return e.Name == "swh.x" && e.Args == "[]" && e.Kwargs == "{'url': 'u'}" && e.Retries == 2 && e.Clock == 0
			}},
		{`{"type": "task-sent", ` + base + `, "name": "swh.y", "args": "()", "kwargs": "{}", "retries": 0, "queue": "q"}`,
			func(e Event) bool { return e.Name == "swh.y" && e.Args == "()" }},
		{`{"type": "task-started", ` + base + `}`,
			func(e Event) bool { return e.Type == TypeStarted && e.Timestamp.Equal(time.Unix(1, 0)) }},
		{`{"type": "task-failed", ` + base + `, "exception": "ValueError('x')", "traceback": "Traceback..."}`,
			func(e Event) bool { return e.Exception == "ValueError('x')" && e.Traceback == "Traceback..." }},
		{`{"type": "task-retried", ` + base + `, "exception": "Retry", "traceback": null}`,
			func(e Event) bool { return e.Exception == "Retry" && e.Traceback == "" }},
		{`{"type": "task-revoked", ` + base + `, "terminated": false, "signum": null, "expired": true}`,
			func(e Event) bool { return e.Expired && !e.Terminated }},
		{`{"type": "task-rejected", ` + base + `, "requeue": true}`,
			func(e Event) bool { return e.Requeue }},
		{`{"type": "task-result-exception", ` + base + `}`,
			func(e Event) bool { return e.Type == TypeResultException }},
		{`{"type": "task-result", ` + base + `, "result": {"status": "eventful", "snapshot_id": "` + snapHex + `"}}`,
			func(e Event) bool {
				v := e.VisitResult
				return v != nil && v.Status == VisitEventful && v.Eventful != nil && *v.Eventful &&
					hex.EncodeToString(v.SnapshotID) == snapHex && v.Raw["status"] == "eventful"
			}},
		{`{"type": "task-result", ` + base + `, "result": {"status": "success", "eventful": false}}`,
			func(e Event) bool {
				v := e.VisitResult
				return v.Status == VisitUneventful && v.Eventful != nil && !*v.Eventful && v.SnapshotID == nil
			}},
		{`{"type": "task-result", ` + base + `, "result": {"pages": 3, "origins": 120}}`,
			func(e Event) bool {
				v := e.VisitResult
				return v.Status == VisitEventful && v.Inferred && v.Eventful == nil
			}},
		{`{"type": "task-result", ` + base + `, "result": null}`,
			func(e Event) bool {
				v := e.VisitResult
				return v.Status == VisitUneventful && v.Inferred && v.Raw == nil
			}},
	}
	for _, c := range cases {
		evs, err := DecodeEvents("task.x", []byte(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if !c.check(evs[0]) {
			t.Errorf("%s: decoded %+v", c.body, evs[0])
		}
	}
}

func TestDecodeEventsErrors(t *testing.T) {
	ok := `"uuid": "u1", "timestamp": 1.5`
	cases := []struct {
		body  string
		kind  error
		field string
		text  string
	}{
		{``, ErrBadJSON, "", "empty body"},
		{`{"type": `, ErrBadJSON, "", "bad JSON"},
		{`{"type": "task-started", ` + ok + `} {}`, ErrBadJSON, "", "trailing data"},
		{`"task-started"`, ErrBadJSON, "", "event is a string, want an object"},
		{`null`, ErrBadJSON, "", "want an object"},
		{`{"type": "task-failed", "exception": "\udc00", ` + ok + `}`, ErrBadJSON, "", "lone UTF-16 surrogate"},
		{`{"uuid": "u1"}`, ErrMissingField, "type", `field "type": missing field`},
		{`{"type": 3, "uuid": "u1"}`, ErrBadField, "type", "got a number, want a string"},
		{`{"type": "worker-heartbeat", "hostname": "h"}`, ErrUnknownType, "", `unknown event type: "worker-heartbeat"`},
		{`{"type": "task-started", "timestamp": 1}`, ErrMissingField, "uuid", `task-started: field "uuid": missing field`},
		{`{"type": "task-started", "uuid": "", "timestamp": 1}`, ErrMissingField, "uuid", "missing field"},
		{`{"type": "task-started", "uuid": 12, "timestamp": 1}`, ErrBadField, "uuid", "want a string"},
		{`{"type": "task-started", "uuid": "u1"}`, ErrMissingField, "timestamp", "task-started u1"},
		{`{"type": "task-started", "uuid": "u1", "timestamp": "now"}`, ErrBadField, "timestamp", "want a number"},
		{`{"type": "task-started", "uuid": "u1", "timestamp": -1}`, ErrBadField, "timestamp", "between 1970 and 9999"},
		{`{"type": "task-started", "uuid": "u1", "timestamp": 1e300}`, ErrBadField, "timestamp", "between"},
		{`{"type": "task-started", ` + ok + `, "pid": 1.5}`, ErrBadField, "pid", "not a 64-bit integer"},
		{`{"type": "task-started", ` + ok + `, "pid": -3}`, ErrBadField, "pid", "not a process id"},
		{`{"type": "task-started", ` + ok + `, "clock": "7"}`, ErrBadField, "clock", "want an integer"},
		{`{"type": "task-started", ` + ok + `, "hostname": ["h"]}`, ErrBadField, "hostname", "got a list"},
		{`{"type": "task-succeeded", ` + ok + `, "result": {"status": "eventful"}}`, ErrBadField, "result", "got an object, want a string"},
		{`{"type": "task-succeeded", ` + ok + `, "runtime": "fast"}`, ErrBadField, "runtime", "want a number"},
		{`{"type": "task-revoked", ` + ok + `, "expired": "yes"}`, ErrBadField, "expired", "want a boolean"},
		{`{"type": "task-received", ` + ok + `, "retries": -1}`, ErrBadField, "retries", "not a retry count"},
		{`{"type": "task-result", ` + ok + `}`, ErrMissingField, "result", "missing field"},
		{`{"type": "task-result", ` + ok + `, "result": {"status": "eventful", "snapshot_id": "zz"}}`, ErrBadResult, "result", `"snapshot_id" is not a snapshot id of 40 hex digits (20 bytes): "zz"`},
		{`{"type": "task-result", ` + ok + `, "result": {"status": "eventful", "snapshot_id": "00"}}`, ErrBadResult, "result", `"snapshot_id" is not a snapshot id of 40 hex digits (20 bytes): "00"`},
		{`{"type": "task-result", ` + ok + `, "result": {"status": "weird"}}`, ErrBadResult, "result", `unknown status "weird"`},
		{`{"type": "task-result", ` + ok + `, "result": {"status": 1}}`, ErrBadResult, "result", `"status" is a number, want a string`},
		{`{"type": "task-result", ` + ok + `, "result": {"status": "success", "eventful": "yes"}}`, ErrBadResult, "result", `"eventful" is a str, want a boolean`},
		{`{"type": "task-result", ` + ok + `, "result": {"status": "eventful", "snapshot_id": 5}}`, ErrBadResult, "result", `want a hex string`},
	}
	for _, c := range cases {
		evs, err := DecodeEvents("task.k", []byte(c.body))
		if err == nil || evs != nil {
			t.Errorf("%s: got %v, %v; want an error", c.body, evs, err)
			continue
		}
		var ee *EventError
		if !errors.As(err, &ee) {
			t.Errorf("%s: error %T %v is not an *EventError", c.body, err, err)
			continue
		}
		if !errors.Is(err, c.kind) || ee.Field != c.field || ee.Index != -1 || ee.RoutingKey != "task.k" ||
			!strings.Contains(err.Error(), c.text) {
			t.Errorf("%s:\n got %v (field %q)\nwant kind %v, field %q, text %q", c.body, err, ee.Field, c.kind, c.field, c.text)
		}
	}
}

func TestDecodeEventsList(t *testing.T) {
	ev := func(typ, id string) string {
		return `{"type": "` + typ + `", "uuid": "` + id + `", "hostname": "h", "timestamp": 1700000000.5, "pid": 7, "clock": 1}`
	}
	body := "[" + strings.Join([]string{
		ev("task-received", "a"),
		`{"type": "task-started"}`,
		ev("task-started", "b"),
		`42`,
		ev("worker-online", "c"),
		ev("task-succeeded", "d"),
	}, ", ") + "]"
	evs, err := DecodeEvents("task.multi", []byte(body))
	if got := len(evs); got != 3 {
		t.Fatalf("got %d good events, want 3", got)
	}
	for i, id := range []string{"a", "b", "d"} {
		if evs[i].UUID != id {
			t.Errorf("event %d uuid %q, want %q", i, evs[i].UUID, id)
		}
	}
	var be *BatchError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a *BatchError", err)
	}
	if be.Total != 6 || len(be.Errors) != 3 {
		t.Fatalf("batch error: total %d, %d errors: %v", be.Total, len(be.Errors), be)
	}
	wantIdx := []int{1, 3, 4}
	wantKind := []error{ErrMissingField, ErrBadJSON, ErrUnknownType}
	for i, ee := range be.Errors {
		if ee.Index != wantIdx[i] || !errors.Is(ee, wantKind[i]) || ee.RoutingKey != "task.multi" {
			t.Errorf("item error %d: %v (index %d)", i, ee, ee.Index)
		}
	}
	if !errors.Is(err, ErrUnknownType) || !errors.Is(err, ErrBadJSON) || errors.Is(err, ErrBadResult) {
		t.Errorf("errors.Is through BatchError: %v", err)
	}
	if !strings.Contains(err.Error(), "3 of 6 bad") {
		t.Errorf("batch message: %v", err)
	}

	// Good lists, empty lists, whitespace.
	for _, b := range []string{"[]", " \n[ " + ev("task-started", "x") + " ]\n"} {
		if _, err := DecodeEvents("task.multi", []byte(b)); err != nil {
			t.Errorf("%q: %v", b, err)
		}
	}
	// A list that is not JSON loses everything, with one error.
	if evs, err := DecodeEvents("task.multi", []byte("["+ev("task-started", "x")+",")); evs != nil || !errors.Is(err, ErrBadJSON) {
		t.Errorf("broken list: %v, %v", evs, err)
	}
	// Many bad items: the message stays short.
	many := "[" + strings.Repeat(`1,`, 99) + `1]`
	_, err = DecodeEvents("task.multi", []byte(many))
	if !strings.Contains(err.Error(), "and 97 more") || len(err.Error()) > 500 {
		t.Errorf("long batch message: %d bytes: %.200s", len(err.Error()), err)
	}
}

func TestDecodeEventsTimestamp(t *testing.T) {
	cases := map[string]time.Time{
		"0":                  time.Unix(0, 0),
		"1700000000":         time.Unix(1700000000, 0),
		"1700000000.999999":  time.Unix(1700000000, 999999000),
		"1700000000.9999996": time.Unix(1700000001, 0),
		"1.5e9":              time.Unix(1500000000, 0),
	}
	for ts, want := range cases {
		evs, err := DecodeEvents("task.started", []byte(`{"type":"task-started","uuid":"u","timestamp":`+ts+`}`))
		if err != nil {
			t.Errorf("%s: %v", ts, err)
			continue
		}
		if !evs[0].Timestamp.Equal(want) {
			t.Errorf("timestamp %s → %v, want %v", ts, evs[0].Timestamp, want.UTC())
		}
	}
}

func TestEventErrorSnippetsUntrustedText(t *testing.T) {
	long := strings.Repeat("é", 500)
	_, err := DecodeEvents("task.x", []byte(`{"type": "`+long+`"}`))
	if err == nil || len(err.Error()) > 300 || !bytes.Contains([]byte(err.Error()), []byte("…")) {
		t.Errorf("error not shortened: %d bytes", len(err.Error()))
	}
}
