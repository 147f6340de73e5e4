// Package swhcall calls, for tests, the Software Heritage scheduler RPC as
// its Python client does: a msgpack map of parameters posted to a path,
// the msgpack answer decoded.
package swhcall

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/revisit-sched/revisit/swhwire"
)

// Call posts params to base+"/"+path and returns the decoded answer,
// failing the test unless the call succeeds.
func Call(t testing.TB, base, path string, params swhwire.Map) any {
	t.Helper()
	body, err := swhwire.Encode(params)
	if err != nil {
		t.Fatalf("%s: encoding: %v", path, err)
	}
	req, err := http.NewRequest(http.MethodPost, base+"/"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-msgpack")
	req.Header.Set("Accept", "application/x-msgpack")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %q", path, resp.StatusCode, raw)
	}
	v, err := swhwire.Decode(raw)
	if err != nil {
		t.Fatalf("%s: decoding the answer: %v", path, err)
	}
	return v
}
