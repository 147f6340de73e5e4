package swhrpc

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/revisit-sched/revisit/internal/testkit/swhtraffic"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/swhwire"
)

// FuzzCall sends any body to any path of the RPC over a SQLite store: the
// server answers every input, an error being a 4xx with an error body,
// never a 500 and never a panic. The seeds are an empty call of every
// path and the client's recorded requests.
func FuzzCall(f *testing.F) {
	empty, err := swhwire.Encode(swhwire.Map{})
	if err != nil {
		f.Fatal(err)
	}
	for i := range endpoints {
		f.Add(uint8(i), empty)
	}
	for _, name := range []string{swhtraffic.Smoke, swhtraffic.Conformance} {
		recorded, err := swhtraffic.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, x := range recorded {
			for i, e := range endpoints {
				if "/"+e.path == x.Path {
					f.Add(uint8(i), x.Req)
				}
			}
		}
	}
	srv := New(Config{Store: teststore.SQLite(f)})
	f.Fuzz(func(t *testing.T, at uint8, body []byte) {
		path := endpoints[int(at)%len(endpoints)].path
		req := httptest.NewRequest(http.MethodPost, "/"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentMsgpack)
		req.Header.Set("Accept", contentMsgpack)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s answered %d to %x: %s", path, rec.Code, body, rec.Body.Bytes())
		}
		if rec.Code != http.StatusOK {
			v, err := swhwire.Decode(rec.Body.Bytes())
			if err != nil {
				t.Fatalf("%s answered %d with an undecodable body: %v", path, rec.Code, err)
			}
			if _, err := swhwire.ParseException(v); err != nil {
				t.Fatalf("%s answered %d without an error body: %v", path, rec.Code, err)
			}
		}
	})
}
