package swhrpc

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhwire"
)

// client calls a Server through a real HTTP listener, as the Python client
// does: msgpack bodies, Accept: application/x-msgpack.
type client struct {
	t   *testing.T
	url string
	// auth is the Authorization header of every call, if any.
	auth string
}

// serve starts a Server over st and returns a client of it.
func serve(t *testing.T, st store.Store, cfg Config) *client {
	t.Helper()
	cfg.Store = st
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return &client{t: t, url: srv.URL + "/"}
}

// response is what a call got back.
type response struct {
	status int
	header http.Header
	raw    []byte
	value  any
}

// post sends body (raw bytes) with a content type to path.
func (c *client) post(path, contentType string, body []byte) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url+path, bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", contentMsgpack)
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	return c.do(req)
}

func (c *client) do(req *http.Request) response {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), contentMsgpack) && len(raw) > 0 {
		r.value, err = swhwire.Decode(raw)
		require.NoError(c.t, err, "decoding the response of %s", req.URL.Path)
	}
	return r
}

// call sends params (alternating names and values) to path.
func (c *client) call(path string, params ...any) response {
	c.t.Helper()
	body, err := swhwire.Encode(pairs(params...))
	require.NoError(c.t, err)
	return c.post(path, contentMsgpack, body)
}

// ok calls path and returns its result, failing the test on an error.
func (c *client) ok(path string, params ...any) any {
	c.t.Helper()
	r := c.call(path, params...)
	require.Equal(c.t, http.StatusOK, r.status, "%s: %v", path, r.value)
	return r.value
}

// fails calls path and checks the error: its status, exception type and
// that its message says want.
func (c *client) fails(status int, typ, want, path string, params ...any) {
	c.t.Helper()
	c.refused(c.call(path, params...), status, typ, want)
}

// refused checks an error response.
func (c *client) refused(r response, status int, typ, want string) {
	c.t.Helper()
	require.Equal(c.t, status, r.status, "body %v", r.value)
	require.Equal(c.t, contentMsgpack, r.header.Get("Content-Type"))
	exc, err := swhwire.ParseException(r.value)
	require.NoError(c.t, err, "error body %v", r.value)
	require.Equal(c.t, typ, exc.Type, "error %+v", exc)
	require.Contains(c.t, exc.Message, want)
	require.Equal(c.t, []any{exc.Message}, exc.Args)
}

// fields returns the fields of a model by name, checking its class.
func fields(t *testing.T, v any, typ string) map[string]any {
	t.Helper()
	m, ok := v.(swhwire.Model)
	require.True(t, ok, "want a %s model, got %#v", typ, v)
	require.Equal(t, typ, m.Type)
	out := map[string]any{}
	for _, p := range m.Fields {
		out[p.Key.(string)] = p.Value
	}
	return out
}

// names returns the field names of a model, in order.
func names(m swhwire.Model) []string {
	out := make([]string, len(m.Fields))
	for i, p := range m.Fields {
		out[i] = p.Key.(string)
	}
	return out
}

// engines runs body against a server over each store.
func engines(t *testing.T, body func(t *testing.T, c *client)) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		body(t, serve(t, st, Config{}))
	})
}

// list returns a result that must be a list.
func list(t *testing.T, v any) []any {
	t.Helper()
	l, ok := v.([]any)
	require.True(t, ok, "want a list, got %#v", v)
	return l
}
