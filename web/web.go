// Package web is revisit's overview: one HTML page, its style sheet and
// small script modules, embedded in the binary. The script polls the
// API's summary (GET /api/v1/dashboard) every few seconds and the
// server's history of the last hour (GET /api/v1/history) less often, and
// draws, for each visit type, the state of its loop in words, the queue
// depth against its maximum, free slots, visits in flight and lost, rates
// and results by outcome, the policies' shares against the configured
// ones, and charts of the last hour (inline SVG); the scheduler metrics of
// each lister; and, when a journal client runs in the server's process,
// its topic and lag by partition. Every figure over time comes from the
// server, so a new tab shows the past hour at once. Its buttons act:
// pause and resume a visit type's loop, requeue its lost visits, refresh
// the scheduler metrics (actions.js, which other pages use for their
// own actions, asks for confirmation in a dialog first; docs/actions.md).
// Nothing is fetched from elsewhere, and no style or script is inline.
//
// When the API has tokens, the page asks for one and keeps it in the
// browser's session storage.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Handler serves the dashboard at / and its assets under /assets/, and
// hands every other request to next (the API).
func Handler(next http.Handler) http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	files := http.FileServerFS(sub)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w)
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w)
		files.ServeHTTP(w, r)
	})))
	mux.Handle("/", next)
	return mux
}

// setHeaders forbids the page any source but its own server.
func setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
}
