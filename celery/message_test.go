package celery

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const testID = "0b4e3d0c-8d7e-4c6a-9f39-2a1f5e6d7c8b"

func TestNewMessageHeadersPropertiesBody(t *testing.T) {
	prio := uint8(5)
	eta := time.Date(2024, 3, 1, 12, 30, 0, 0, time.FixedZone("CET", 3600))
	expires := time.Date(2024, 3, 2, 11, 30, 0, 123456789, time.UTC)
	msg, err := NewMessage(Task{
		Name:     "swh.loader.git.tasks.UpdateGitRepository",
		ID:       testID,
		Kwargs:   map[string]any{"url": "https://example.org/r.git", "lister_name": "gitlab", "lister_instance_name": nil},
		Origin:   "revisit@host1",
		ETA:      &eta,
		Expires:  &expires,
		Priority: &prio,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantProps := Properties{
		ContentType: "application/json", ContentEncoding: "utf-8",
		CorrelationID: testID, DeliveryMode: 2, Priority: 5,
	}
	if msg.Properties != wantProps {
		t.Errorf("properties = %+v, want %+v", msg.Properties, wantProps)
	}
	wantHeaders := map[string]any{
		"lang":          "py",
		"task":          "swh.loader.git.tasks.UpdateGitRepository",
		"id":            testID,
		"root_id":       testID,
		"parent_id":     nil,
		"group":         nil,
		"group_index":   nil,
		"shadow":        nil,
		"eta":           "2024-03-01T11:30:00+00:00",
		"expires":       "2024-03-02T11:30:00.123456+00:00",
		"retries":       int32(0),
		"timelimit":     []any{nil, nil},
		"argsrepr":      "[]",
		"kwargsrepr":    "{'lister_instance_name': None, 'lister_name': 'gitlab', 'url': 'https://example.org/r.git'}",
		"origin":        "revisit@host1",
		"ignore_result": false,
	}
	if !reflect.DeepEqual(msg.Headers.Table(nil), wantHeaders) {
		t.Errorf("headers =\n%#v\nwant\n%#v", msg.Headers.Table(nil), wantHeaders)
	}
	// A reused table is cleared: a publisher's map holds one message's
	// headers at a time.
	reused := map[string]any{"stale": "from another message", "task": "other"}
	if got := msg.Headers.Table(reused); !reflect.DeepEqual(got, wantHeaders) || len(reused) != len(wantHeaders) {
		t.Errorf("reused table =\n%#v\nwant\n%#v", got, wantHeaders)
	}
	wantBody := `[[],{"lister_instance_name":null,"lister_name":"gitlab","url":"https://example.org/r.git"},{"callbacks":null,"chain":null,"chord":null,"errbacks":null}]`
	if string(msg.Body) != wantBody {
		t.Errorf("body =\n%s\nwant\n%s", msg.Body, wantBody)
	}
}

// Every header value must be something an AMQP 0-9-1 table carries.
func TestNewMessageHeaderTypesAreAMQPTableTypes(t *testing.T) {
	msg, err := NewMessage(Task{Name: "t", ID: testID, Origin: "o@h", Args: []any{1, "x"}})
	if err != nil {
		t.Fatal(err)
	}
	var check func(k string, v any)
	check = func(k string, v any) {
		switch x := v.(type) {
		case nil, string, int32, bool:
		case []any:
			for _, e := range x {
				check(k, e)
			}
		default:
			t.Errorf("header %s has type %T, not an AMQP table type", k, v)
		}
	}
	table := msg.Headers.Table(nil)
	for k, v := range table {
		check(k, v)
	}
	if table["eta"] != nil || table["expires"] != nil {
		t.Errorf("eta/expires = %v/%v, want nil when unset", table["eta"], table["expires"])
	}
	if msg.Properties.Priority != 0 {
		t.Errorf("priority = %d, want 0 when unset", msg.Properties.Priority)
	}
}

func TestNewMessageArgumentValues(t *testing.T) {
	type extra struct {
		Branch string `json:"branch"`
		Depth  int    `json:"depth"`
	}
	when := time.Date(2023, 5, 6, 7, 8, 9, 10000, time.UTC)
	raw := json.RawMessage(`{"a": [1, 2.5, "x"], "big": 123456789012345678901234567890}`)
	msg, err := NewMessage(Task{
		Name: "t", ID: testID, Origin: "o@h",
		Args: []any{int64(-3), uint8(7), 1.5, float32(0.5), true, nil, big.NewInt(1 << 40), json.Number("12")},
		Kwargs: map[string]any{
			"when":  when,
			"extra": extra{"main", 2},
			"tags":  []string{"a", "b"},
			"raw":   raw,
			"ptr":   &when,
			"html":  "<a&b>",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[[-3,7,1.5,0.5,true,null,1099511627776,12],` +
		`{"extra":{"branch":"main","depth":2},"html":"<a&b>","ptr":"2023-05-06T07:08:09.000010+00:00",` +
		`"raw":{"a":[1,2.5,"x"],"big":123456789012345678901234567890},"tags":["a","b"],` +
		`"when":"2023-05-06T07:08:09.000010+00:00"},` +
		`{"callbacks":null,"chain":null,"chord":null,"errbacks":null}]`
	if string(msg.Body) != want {
		t.Errorf("body =\n%s\nwant\n%s", msg.Body, want)
	}
	if got, want := msg.Headers.Table(nil)["argsrepr"], "[-3, 7, 1.5, 0.5, True, None, 1099511627776, 12]"; got != want {
		t.Errorf("argsrepr = %v, want %v", got, want)
	}
	wantKw := "{'extra': {'branch': 'main', 'depth': 2}, 'html': '<a&b>', 'ptr': '2023-05-06T07:08:09.000010+00:00', " +
		"'raw': {'a': [1, 2.5, 'x'], 'big': 123456789012345678901234567890}, 'tags': ['a', 'b'], " +
		"'when': '2023-05-06T07:08:09.000010+00:00'}"
	if got := msg.Headers.Table(nil)["kwargsrepr"]; got != wantKw {
		t.Errorf("kwargsrepr =\n%v\nwant\n%v", got, wantKw)
	}
}

func TestNewMessageTruncatesRepr(t *testing.T) {
	long := strings.Repeat("é", 2000)
	msg, err := NewMessage(Task{Name: "t", ID: testID, Origin: "o@h", Args: []any{long}, Kwargs: map[string]any{"k": long}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"argsrepr", "kwargsrepr"} {
		s := msg.Headers.Table(nil)[h].(string)
		if len(s) > ReprMaxLen || !strings.HasSuffix(s, "...") || !utf8.ValidString(s) {
			t.Errorf("%s: len %d, suffix %q, valid UTF-8 %v; want <= %d bytes ending in ...", h, len(s), s[len(s)-5:], utf8.ValidString(s), ReprMaxLen)
		}
	}
	// The body itself is never truncated.
	var body []any
	if err := json.Unmarshal(msg.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body[0].([]any)[0] != long {
		t.Error("body arg was altered")
	}
}

func TestNewMessageErrors(t *testing.T) {
	cyclic := []any{nil}
	cyclic[0] = cyclic
	bad := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		task Task
		want string
	}{
		{"no name", Task{ID: testID, Origin: "o@h"}, "name is empty"},
		{"no id", Task{Name: "t", Origin: "o@h"}, "is not a UUID"},
		{"bad id", Task{Name: "t", ID: "{" + testID + "}", Origin: "o@h"}, "is not a UUID"},
		{"no origin", Task{Name: "t", ID: testID}, "origin is empty"},
		{"nan", Task{Name: "t", ID: testID, Origin: "o@h", Args: []any{math.NaN()}}, "args[0]: float NaN"},
		{"inf nested", Task{Name: "t", ID: testID, Origin: "o@h", Kwargs: map[string]any{"x": []any{1, math.Inf(1)}}}, `kwargs["x"]: [1]: float +Inf`},
		{"bytes", Task{Name: "t", ID: testID, Origin: "o@h", Kwargs: map[string]any{"b": []byte("x")}}, "[]byte cannot travel"},
		{"invalid utf8", Task{Name: "t", ID: testID, Origin: "o@h", Kwargs: map[string]any{"u": "a\xffb"}}, "not valid UTF-8"},
		{"invalid utf8 key", Task{Name: "t", ID: testID, Origin: "o@h", Kwargs: map[string]any{"\xff": 1}}, "key"},
		{"cycle", Task{Name: "t", ID: testID, Origin: "o@h", Args: []any{cyclic}}, "nested deeper"},
		{"func", Task{Name: "t", ID: testID, Origin: "o@h", Args: []any{func() {}}}, "cannot travel in JSON"},
		{"bad number", Task{Name: "t", ID: testID, Origin: "o@h", Args: []any{json.Number("1x")}}, "is not a number"},
		{"bad raw", Task{Name: "t", ID: testID, Origin: "o@h", Args: []any{json.RawMessage("{")}}, "raw JSON"},
		{"eta range", Task{Name: "t", ID: testID, Origin: "o@h", ETA: &bad}, "eta: year 10000"},
		{"expires range", Task{Name: "t", ID: testID, Origin: "o@h", Expires: &bad}, "expires: year 10000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewMessage(c.task)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestIsoformat(t *testing.T) {
	cases := map[time.Time]string{
		time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC):                    "2024-01-02T03:04:05+00:00",
		time.Date(2024, 1, 2, 3, 4, 5, 999, time.UTC):                  "2024-01-02T03:04:05+00:00",
		time.Date(2024, 1, 2, 3, 4, 5, 1000, time.UTC):                 "2024-01-02T03:04:05.000001+00:00",
		time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("", -5*3600)): "2024-01-02T08:04:05+00:00",
	}
	for in, want := range cases {
		if got := isoformat(in); got != want {
			t.Errorf("isoformat(%v) = %q, want %q", in, got, want)
		}
	}
	if _, err := optionalISO(nil); err != nil {
		t.Error(err)
	}
}

// BenchmarkNewMessage encodes a visit message as the orchestrator does and
// renders its headers into a reused table as the AMQP publisher does
// (docs/performance.md: publishing 30,000 messages/s leaves ~33 µs per
// message for everything).
func BenchmarkNewMessage(b *testing.B) {
	b.ReportAllocs()
	kwargs := map[string]any{"url": "https://git.example.org/project-000000042",
		"lister_name": "gitlab", "lister_instance_name": "gitlab.example.org"}
	t := Task{Name: "swh.loader.git.tasks.UpdateGitRepository",
		ID: "0b7f1a55-3a53-4a2e-9e8e-3d1b2c4d5e6f", Origin: "revisit@host", Kwargs: kwargs}
	var table map[string]any
	for b.Loop() {
		m, err := NewMessage(t)
		if err != nil {
			b.Fatal(err)
		}
		table = m.Headers.Table(table)
	}
}

// TestPlainJSONMatchesEncodingJSON: the body encoder writes what
// encoding/json writes, for every kind of plain value.
func TestPlainJSONMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "quote\" back\\ nl\n cr\r tab\t bs\b ff\f bell\x07 us\x1f del\x7f", "\u2028\u2029 é 😀 <&>",
		"bad \xff utf-8", json.Number("12"), json.Number("-1.5e300"), 0.0, 1.5, -2.25e-9, 1e21, 123456789.0,
		[]any{}, []any{nil, "a", []any{json.Number("1")}}, map[string]any{},
		map[string]any{"z": 1.0, "a": map[string]any{"y": []any{}, "b": "c"}, "é": nil},
	}
	for _, v := range values {
		got, err := appendPlainJSON(nil, v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		want, err := marshalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%#v: got %s, encoding/json writes %s", v, got, want)
		}
	}
}

// marshalJSON encodes v as compact JSON without HTML escaping, as
// encoding/json does: the oracle of the body encoder.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
