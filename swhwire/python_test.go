package swhwire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/revisit-sched/revisit/internal/testkit/pytest"
)

var (
	lister = uuid.MustParse("cdd8f804-9db6-40c3-93ab-5955d3836234")
	dt     = time.Date(2026, 11, 25, 12, 0, 0, 123456000, time.UTC)
)

func bigInt(s string) *big.Int {
	n, _ := new(big.Int).SetString(s, 10)
	return n
}

// peerValues are testdata/swhpeer.py's VALUES as Go values.
var peerValues = map[string]any{
	"dt_us":       dt,
	"dt_seconds":  time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC),
	"dt_offset":   time.Date(2015, 3, 4, 18, 25, 13, 1234000, time.FixedZone("", 118*60)).UTC(),
	"dt_past":     time.Date(1900, 1, 1, 0, 0, 0, 1000, time.UTC),
	"dt_future":   time.Date(2600, 6, 1, 8, 30, 0, 999999000, time.UTC),
	"dt_min":      time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	"dt_max":      time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
	"td_64_days":  Timedelta{Days: 64},
	"td_negative": Timedelta{Days: -1, Seconds: 86399, Microseconds: 999999},
	"td_mixed":    Timedelta{Days: -3, Seconds: 5, Microseconds: 7},
	"uuid":        lister,
	"bytes":       []byte{0, 1, 0xff},
	"empty_bytes": []byte{},
	"text":        "été",
	"ints":        []any{int64(0), int64(-1), int64(-33), int64(255), int64(65536), uint64(1 << 63), uint64(1<<64 - 1), int64(-1 << 63)},
	"big_ints":    []any{bigInt("18446744073709551616"), bigInt("1267650600228229401496703205376"), bigInt("-18446744073709551616"), bigInt("-1267650600228229401496703205376")},
	"floats":      []any{2.5, -0.0, 1e300},
	"odd_keys":    Map{{int64(1), "one"}, {nil, "none"}, {[]byte("raw"), true}},
	"status":      VisitNotFound,
	"task": Model{Type: "Task", Fields: Map{
		{"type", "load-git"},
		{"arguments", Model{Type: "TaskArguments", Fields: Map{{"args", []any{}}, {"kwargs", Map{{"url", "https://github.com/o/r"}}}}}},
		{"next_run", dt}, {"status", "next_run_not_scheduled"}, {"policy", "recurring"}, {"retries_left", int64(0)},
		{"id", int64(42)}, {"current_interval", Timedelta{Days: 1}}, {"priority", nil},
	}},
	"page": PagedResult{
		Results: []any{Model{Type: "ListedOrigin", Fields: Map{
			{"lister_id", lister}, {"url", "https://github.com/o/r"}, {"visit_type", "git"},
			{"extra_loader_arguments", Map{}}, {"last_update", nil}, {"is_fork", nil}, {"forked_from_url", nil},
			{"enabled", true}, {"first_seen", dt}, {"last_seen", dt},
		}}},
		NextPageToken: []any{lister.String(), "https://github.com/o/r"},
	},
	"exception": Exception{Type: "ValueError", Module: "builtins", Args: []any{"boom", int64(3)},
		Message: "('boom', 3)", Traceback: []string{"ValueError: ('boom', 3)\n"}},
	"not_envelope_extra_key": Map{{[]byte("swhtype"), "uuid"}, {[]byte("d"), lister.String()}, {[]byte("x"), int64(1)}},
	"not_envelope_unknown":   Map{{[]byte("swhtype"), "nope"}, {[]byte("d"), int64(1)}},
	"not_envelope_str_keys":  Map{{"swhtype", "uuid"}, {"d", lister.String()}},
}

// pythonOnly are the values only Python sends: the legacy datetime envelope.
var pythonOnly = map[string]any{
	"legacy_datetime":        time.Date(2015, 1, 1, 12, 4, 42, 231455000, time.UTC),
	"legacy_datetime_offset": time.Date(2015, 3, 4, 16, 27, 13, 1234000, time.UTC),
}

func runPeer(t *testing.T, py, mode string, stdin []byte) []byte {
	t.Helper()
	cmd := pytest.Command(py, "testdata/swhpeer.py", mode)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("swhpeer.py %s: %v\n%s", mode, err, out)
	}
	return out
}

// TestPythonEncodes decodes what swh-core's way of packing writes.
func TestPythonEncodes(t *testing.T) {
	py := pytest.Msgpack(t)
	var packed map[string]string
	if err := json.Unmarshal(runPeer(t, py, "encode", nil), &packed); err != nil {
		t.Fatal(err)
	}
	for _, want := range []map[string]any{peerValues, pythonOnly} {
		for name, w := range want {
			raw, err := base64.StdEncoding.DecodeString(packed[name])
			if err != nil || len(raw) == 0 {
				t.Fatalf("%s: no bytes from Python (%v)", name, err)
			}
			got, err := Decode(raw)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s: decoded %#v\nwant %#v", name, got, w)
			}
			if _, legacy := pythonOnly[name]; legacy {
				continue
			}
			if again, err := Encode(got); err != nil || !bytes.Equal(again, raw) {
				t.Errorf("%s: re-encoded %x, Python wrote %x (%v)", name, again, raw, err)
			}
		}
	}
}

// TestPythonDecodes has Python unpack what Encode writes, the way swh-core
// does, and compare it with the values it expects.
func TestPythonDecodes(t *testing.T) {
	py := pytest.Msgpack(t)
	packed := map[string]string{}
	for name, v := range peerValues {
		b, err := Encode(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		packed[name] = base64.StdEncoding.EncodeToString(b)
	}
	in, _ := json.Marshal(packed)
	out := strings.TrimSpace(string(runPeer(t, py, "check", in)))
	if !strings.HasSuffix(out, "verdict: ok") {
		t.Fatalf("Python disagrees:\n%s", out)
	}
}
