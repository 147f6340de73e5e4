package crosssite

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	loopback := Handler(Config{Loopback: true}, ok)
	named := Handler(Config{Hosts: []string{"revisit.example.org"}}, ok)
	open := Handler(Config{}, ok)
	for _, c := range []struct {
		name    string
		h       http.Handler
		method  string
		host    string
		headers map[string]string
		want    int
	}{
		{"loopback read", loopback, "GET", "127.0.0.1:5080", nil, 204},
		{"localhost read", loopback, "GET", "localhost:5080", nil, 204},
		{"IPv6 loopback read", loopback, "GET", "[::1]:5080", nil, 204},
		{"rebound name", loopback, "GET", "evil.example:5080", nil, 403},
		{"rebound name, any address", open, "GET", "evil.example:5080", nil, 204},
		{"configured name", named, "GET", "revisit.example.org", nil, 204},
		{"other name", named, "GET", "evil.example", nil, 403},
		{"program write", loopback, "POST", "127.0.0.1:5080", map[string]string{"Content-Type": "application/json"}, 204},
		{"write without a body", loopback, "POST", "127.0.0.1:5080", nil, 204},
		{"msgpack write", loopback, "POST", "127.0.0.1:5080", map[string]string{"Content-Type": "application/x-msgpack"}, 204},
		{"own page write", loopback, "POST", "127.0.0.1:5080", map[string]string{"Content-Type": "application/json; charset=utf-8",
			"Origin": "http://127.0.0.1:5080", "Sec-Fetch-Site": "same-origin"}, 204},
		{"page behind a proxy", named, "POST", "10.0.0.2:5080", map[string]string{"Content-Type": "application/json",
			"Origin": "https://revisit.example.org"}, 403}, // the proxy names a host not served
		{"other origin", loopback, "POST", "127.0.0.1:5080", map[string]string{"Content-Type": "application/json",
			"Origin": "http://localhost:8000"}, 403},
		{"null origin", loopback, "DELETE", "127.0.0.1:5080", map[string]string{"Origin": "null"}, 403},
		{"cross-site fetch", loopback, "POST", "127.0.0.1:5080", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"plain text", loopback, "POST", "127.0.0.1:5080", map[string]string{"Content-Type": "text/plain"}, 415},
		{"form", loopback, "POST", "127.0.0.1:5080", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"cross-site read", loopback, "GET", "127.0.0.1:5080", map[string]string{"Origin": "http://evil.example"}, 204},
	} {
		r := httptest.NewRequest(c.method, "http://x/api/v1/listers", strings.NewReader(""))
		r.Host = c.host
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		c.h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, w.Code, w.Body, c.want)
		}
		if c.want >= 400 && !strings.Contains(w.Body.String(), `"message"`) {
			t.Errorf("%s: %s is not a JSON error", c.name, w.Body)
		}
	}
}
