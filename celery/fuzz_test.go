package celery

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeEvents: any body decodes to events or typed errors, never a
// panic; a list never loses a good item because of a bad one.
func FuzzDecodeEvents(f *testing.F) {
	seeds := []string{
		`{"type": "task-started", "uuid": "u", "hostname": "h", "timestamp": 1700000000.5, "pid": 1, "clock": 2}`,
		`{"type": "task-succeeded", "uuid": "u", "timestamp": 1, "result": "{'status': 'eventful'}", "runtime": 0.5}`,
		`{"type": "task-failed", "uuid": "u", "timestamp": 1, "exception": "E()", "traceback": "T"}`,
		`{"type": "task-received", "uuid": "u", "timestamp": 1, "name": "n", "args": "[]", "kwargs": "{}", "retries": 0}`,
		`{"type": "task-result", "uuid": "u", "timestamp": 1, "result": {"status": "success", "eventful": true, "snapshot_id": "` + snapHex + `"}}`,
		`{"type": "task-revoked", "uuid": "u", "timestamp": 1, "expired": true, "terminated": false, "signum": null}`,
		`[{"type": "task-started", "uuid": "a", "timestamp": 1}, 1, {"type": "x"}, {"type": "task-rejected", "uuid": "b", "timestamp": 2, "requeue": false}]`,
		`[]`, `{}`, `null`, `[`, `{"type": "task-started", "uuid": "u", "timestamp": 1e400}`,
	}
	for _, s := range seeds {
		f.Add("task.multi", []byte(s))
	}
	f.Fuzz(func(t *testing.T, key string, body []byte) {
		evs, err := DecodeEvents(key, body)
		for _, ev := range evs {
			if ev.UUID == "" || !knownTypes[ev.Type] || ev.Timestamp.IsZero() && ev.Fields["timestamp"] == nil {
				t.Fatalf("bad event accepted: %+v", ev)
			}
			if ev.Type == TypeResult && ev.VisitResult == nil {
				t.Fatalf("task-result without VisitResult: %+v", ev)
			}
		}
		if err == nil {
			return
		}
		_ = err.Error()
		var be *BatchError
		var ee *EventError
		switch {
		case errors.As(err, &be):
			if len(be.Errors) == 0 || len(evs)+len(be.Errors) != be.Total {
				t.Fatalf("batch: %d good + %d bad != %d", len(evs), len(be.Errors), be.Total)
			}
		case errors.As(err, &ee):
			if evs != nil {
				t.Fatalf("events returned with a single error: %v", err)
			}
			if !isKind(ee.Err) {
				t.Fatalf("untyped error kind: %v", ee.Err)
			}
		default:
			t.Fatalf("error of type %T: %v", err, err)
		}
	})
}

func isKind(err error) bool {
	for _, k := range []error{ErrBadJSON, ErrUnknownType, ErrMissingField, ErrBadField, ErrBadResult} {
		if err == k {
			return true
		}
	}
	return false
}

// FuzzParseSucceededResult: never panics; errors always wrap ErrBadResult.
func FuzzParseSucceededResult(f *testing.F) {
	for _, s := range []string{
		"{'status': 'eventful', 'snapshot_id': '" + snapHex + "'}",
		"{'status': 'success', 'eventful': False}",
		"{'status': 'failed'}", "{'pages': 2}", "None", "[1, 2]",
		`{'status': 'eventful', 'snapshot_id': b'\x01\x02'}`, "{'a': {'b': (1,)}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseSucceededResult(s)
		if err != nil {
			if !errors.Is(err, ErrBadResult) {
				t.Fatalf("error does not wrap ErrBadResult: %v", err)
			}
			return
		}
		switch r.Status {
		case VisitEventful, VisitUneventful, VisitFailed, VisitNotFound:
		default:
			t.Fatalf("status %q", r.Status)
		}
		if r.Raw == nil || r.Inferred {
			t.Fatalf("result %+v", r)
		}
	})
}

// FuzzParsePyLiteral: never panics; whatever parses, printed again with
// Repr, parses to a value with the same repr (Repr and the parser agree).
func FuzzParsePyLiteral(f *testing.F) {
	for _, s := range []string{
		"None", "True", "-12", "1.5e-07", "inf", "'it\\'s'", `"say \"hi\""`, `b'\x00\xff'`,
		`r'\d'`, "[1, (2,), {'a': None}]", "{1: 2, (1, 2): 3}", `'\u00e9\U0001F600\101'`,
		"123456789012345678901234567890", "((((1))))", "{'status': 'eventful'}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParsePyLiteral(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		r1 := Repr(v)
		v2, err := ParsePyLiteral(r1)
		if err != nil {
			t.Fatalf("Repr output %q does not parse: %v", r1, err)
		}
		if r2 := Repr(v2); r2 != r1 {
			t.Fatalf("repr not stable: %q then %q", r1, r2)
		}
	})
}

// FuzzReprRoundTrip: Go string / float / bytes → Python repr → parse back.
func FuzzReprRoundTrip(f *testing.F) {
	f.Add("plain", 1.5, []byte("b"))
	f.Add("it's \"q\" \\ \x00 \u2028 😀", math.Inf(-1), []byte{0xff, '\''})
	f.Add("", 1e-300, []byte{})
	f.Fuzz(func(t *testing.T, s string, x float64, p []byte) {
		if utf8.ValidString(s) {
			got, err := ParsePyLiteral(Repr(s))
			if err != nil || got != s {
				t.Fatalf("string %q → %s → %q, %v", s, Repr(s), got, err)
			}
		}
		got, err := ParsePyLiteral(Repr(x))
		if err != nil {
			t.Fatalf("float %v → %s: %v", x, Repr(x), err)
		}
		if g := got.(float64); math.Float64bits(g) != math.Float64bits(x) && !(math.IsNaN(g) && math.IsNaN(x)) {
			t.Fatalf("float %v → %s → %v", x, Repr(x), g)
		}
		gotB, err := ParsePyLiteral(Repr(p))
		if err != nil || string(gotB.([]byte)) != string(p) {
			t.Fatalf("bytes %q → %s → %q, %v", p, Repr(p), gotB, err)
		}
	})
}

// FuzzNewMessage: any string in kwargs encodes (or fails cleanly), the
// body carries it back unchanged, byte for byte as encoding/json writes it.
func FuzzNewMessage(f *testing.F) {
	f.Add("https://example.org/repo.git", "url")
	f.Add("\x00<>&\u2028", "k\"ey")
	f.Add("\b\f\t\r\n\x1f\x7f\\/\u2029é😀", "\u00e9")
	f.Fuzz(func(t *testing.T, val, key string) {
		msg, err := NewMessage(Task{Name: "t", ID: testID, Origin: "o@h", Kwargs: map[string]any{key: val}, Args: []any{val}})
		if err != nil {
			if utf8.ValidString(val) && utf8.ValidString(key) {
				t.Fatalf("valid input refused: %v", err)
			}
			return
		}
		var body []any
		if err := json.Unmarshal(msg.Body, &body); err != nil {
			t.Fatalf("body is not JSON: %v", err)
		}
		if body[0].([]any)[0] != val || body[1].(map[string]any)[key] != val {
			t.Fatalf("body altered the value: %s", msg.Body)
		}
		want, err := marshalJSON([]any{[]any{val}, map[string]any{key: val},
			map[string]any{"callbacks": nil, "errbacks": nil, "chain": nil, "chord": nil}})
		if err != nil || string(msg.Body) != string(want) {
			t.Fatalf("body %s, encoding/json writes %s (%v)", msg.Body, want, err)
		}
		if r := msg.Headers.Table(nil)["kwargsrepr"].(string); len(r) > ReprMaxLen || !utf8.ValidString(r) {
			t.Fatalf("kwargsrepr %q", r)
		}
	})
}
