package swhwire

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exchange is one recorded request and response of the real swh scheduler.
type exchange struct {
	Path    string `json:"path"`
	ReqCT   string `json:"req_ct"`
	ReqB64  string `json:"req_b64"`
	Status  int    `json:"status"`
	RespCT  string `json:"resp_ct"`
	RespB64 string `json:"resp_b64"`
}

// trafficDir is ../shared/swh-rpc beside the repository root, found by
// walking up to go.mod. Without it the test skips, or fails when CI is set.
func trafficDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = filepath.Dir(dir)
	}
	traffic := filepath.Join(dir, "..", "shared", "swh-rpc")
	if _, err := os.Stat(traffic); err != nil {
		msg := "recorded swh RPC traffic not found at " + traffic + ": " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return traffic
}

func readExchanges(t *testing.T, path string) []exchange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	var out []exchange
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var x exchange
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordedTraffic decodes every msgpack body the real scheduler and its
// client exchanged, and checks that encoding the value gives the same bytes.
func TestRecordedTraffic(t *testing.T) {
	dir := trafficDir(t)
	seen := map[string]int{}
	bodies := 0
	for _, name := range []string{"smoke.jsonl", "conformance.jsonl.gz"} {
		for i, x := range readExchanges(t, filepath.Join(dir, name)) {
			for _, body := range []struct{ what, ct, b64 string }{
				{"request", x.ReqCT, x.ReqB64}, {"response", x.RespCT, x.RespB64},
			} {
				if !strings.HasPrefix(body.ct, "application/x-msgpack") || body.b64 == "" {
					continue
				}
				raw, err := base64.StdEncoding.DecodeString(body.b64)
				if err != nil {
					t.Fatal(err)
				}
				bodies++
				v, err := Decode(raw)
				if err != nil {
					t.Errorf("%s line %d %s %s: %v", name, i+1, x.Path, body.what, err)
					continue
				}
				countTypes(v, seen)
				again, err := Encode(v)
				if err != nil {
					t.Errorf("%s line %d %s %s: encode: %v", name, i+1, x.Path, body.what, err)
					continue
				}
				if !bytes.Equal(again, raw) {
					t.Errorf("%s line %d %s %s: re-encoded bytes differ\n got %x\nwant %x", name, i+1, x.Path, body.what, again, raw)
				}
			}
		}
	}
	t.Logf("%d msgpack bodies; types seen: %v", bodies, seen)
	for _, want := range []string{"swhwire.Model", "uuid.UUID", "swhwire.Timedelta", "swhwire.PagedResult", "time.Time", "[]uint8", "swhwire.LastVisitStatus"} {
		if seen[want] == 0 {
			t.Errorf("the recorded traffic never decoded to a %s", want)
		}
	}
}

// countTypes counts the Go types of v and of everything inside it.
func countTypes(v any, seen map[string]int) {
	seen[typeName(v)]++
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			countTypes(e, seen)
		}
	case Map:
		for _, p := range v {
			countTypes(p.Key, seen)
			countTypes(p.Value, seen)
		}
	case Model:
		countTypes(v.Fields, seen)
	case PagedResult:
		countTypes(v.Results, seen)
		countTypes(v.NextPageToken, seen)
	}
}
