package swhwire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/revisit-sched/revisit/internal/testkit/swhtraffic"
)

// TestRecordedTraffic decodes every msgpack body the real scheduler and its
// client exchanged, and checks that encoding the value gives the same bytes.
func TestRecordedTraffic(t *testing.T) {
	seen := map[string]int{}
	bodies := 0
	for _, name := range []string{swhtraffic.Smoke, swhtraffic.Conformance} {
		for _, x := range swhtraffic.Read(t, name) {
			for _, body := range []struct {
				what, ct string
				raw      []byte
			}{
				{"request", x.ReqCT, x.Req}, {"response", x.RespCT, x.Resp},
			} {
				if !strings.HasPrefix(body.ct, "application/x-msgpack") || len(body.raw) == 0 {
					continue
				}
				raw := body.raw
				bodies++
				v, err := Decode(raw)
				if err != nil {
					t.Errorf("%s line %d %s %s: %v", name, x.Line, x.Path, body.what, err)
					continue
				}
				countTypes(v, seen)
				again, err := Encode(v)
				if err != nil {
					t.Errorf("%s line %d %s %s: encode: %v", name, x.Line, x.Path, body.what, err)
					continue
				}
				if !bytes.Equal(again, raw) {
					t.Errorf("%s line %d %s %s: re-encoded bytes differ\n got %x\nwant %x", name, x.Line, x.Path, body.what, again, raw)
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
