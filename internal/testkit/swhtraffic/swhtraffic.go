// Package swhtraffic reads, for tests, the recorded exchanges of Software
// Heritage's scheduler RPC client with the upstream server: gzipped JSON
// lines the repository keeps in swhrpc/testdata.
package swhtraffic

import (
	"bufio"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The recordings.
const (
	Smoke       = "smoke.jsonl.gz"       // a lister-like session
	Conformance = "conformance.jsonl.gz" // upstream's backend test suite
)

// Exchange is one recorded request and the upstream server's response.
type Exchange struct {
	Line        int // 1-based, in its file
	Method      string
	Path        string // with its leading "/"
	ReqCT       string
	Req         []byte
	Status      int
	RespCT      string
	RespHeaders map[string]string
	Resp        []byte
}

// line is an Exchange as the files hold it.
type line struct {
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	ReqCT       string            `json:"req_ct"`
	ReqB64      string            `json:"req_b64"`
	Status      int               `json:"status"`
	RespCT      string            `json:"resp_ct"`
	RespHeaders map[string]string `json:"resp_headers"`
	RespB64     string            `json:"resp_b64"`
}

// Dir is the repository's swhrpc/testdata, found by walking up from the
// working directory to go.mod.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "swhrpc", "testdata")
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = filepath.Dir(dir)
	}
}

// Read returns the exchanges of the recording name (Smoke, Conformance) in
// the order they were recorded.
func Read(t testing.TB, name string) []Exchange {
	t.Helper()
	xs, err := ReadFile(filepath.Join(Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

// ReadFile reads the exchanges of one recording file.
func ReadFile(path string) ([]Exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	var out []Exchange
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		x := Exchange{Line: n, Method: l.Method, Path: l.Path, ReqCT: l.ReqCT, Status: l.Status,
			RespCT: l.RespCT, RespHeaders: l.RespHeaders}
		if x.Req, err = base64.StdEncoding.DecodeString(l.ReqB64); err != nil {
			return nil, fmt.Errorf("%s line %d: req_b64: %w", path, n, err)
		}
		if x.Resp, err = base64.StdEncoding.DecodeString(l.RespB64); err != nil {
			return nil, fmt.Errorf("%s line %d: resp_b64: %w", path, n, err)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
