// Package headerlimit refuses requests whose headers are larger than a
// bound with a JSON 431, as the API writes its errors. The HTTP server
// itself refuses, in plain text and before any handler, headers beyond its
// own MaxHeaderBytes: set that above the bound.
package headerlimit

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// DefaultMax is the bound revisit serve applies: far above what any
// client of the API or the RPC sends (a token, a few standard headers).
const DefaultMax = 64 << 10

// Handler refuses with 431 a request whose request line and headers take
// more than max bytes, and passes the others to next.
func Handler(max int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := size(r); n > max {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "headers_too_large",
				"message": fmt.Sprintf("the request's headers take %d bytes, at most %d", n, max)}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// size is the bytes of r's request line and headers, as sent.
func size(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + len(r.Host) + 4
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}
