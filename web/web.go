// Package web is revisit's console: plain HTML pages and small scripts,
// embedded in the binary, over the API. The overview at / polls the API's
// summary (GET /api/v1/dashboard) every few seconds and draws it: for each
// visit type, the queue depth against its maximum, free slots, visits
// scheduled per minute by policy (an inline SVG chart), fetched origins
// against the configured shares, visits in flight and lost, results by
// outcome; the scheduler metrics of each lister; and, when a journal
// client runs in the server's process, its topic and lag by partition.
// /origins searches the listed origins by URL, and /origin?url=…&
// visit_type=… shows one origin and explains its next visit. Nothing is
// fetched from elsewhere.
//
// When the API has tokens, a page asks for one and keeps it in the
// browser's session storage.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// pages are the console's pages: their paths and files.
var pages = map[string]string{
	"/{$}":     "index.html",
	"/origins": "origins.html",
	"/origin":  "origin.html",
}

// Handler serves the console's pages and their assets under /assets/,
// and hands every other request to next (the API).
func Handler(next http.Handler) http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	files := http.FileServerFS(sub)
	mux := http.NewServeMux()
	for path, file := range pages {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			setHeaders(w)
			http.ServeFileFS(w, r, sub, file)
		})
	}
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
