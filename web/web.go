// Package web is revisit's console: plain HTML pages, their style sheets
// and small script modules, embedded in the binary, over the API. The
// overview at / polls the API's summary (GET /api/v1/dashboard) every
// few seconds and the server's history of the last hour (GET
// /api/v1/history) less often, and
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
// The other pages read one or two API routes each: /origins searches the
// listed origins by URL, /origin?url=…&visit_type=… shows one origin and
// explains its next visit; /queues the broker's
// queues and, for the queue of its URL, a page of its messages waiting or
// leased; /workers the embedded broker's workers; /tasks the task types
// and a page of generic tasks, /task?id=N one task and its runs; /listers
// each lister's last listing, first visits and stored scheduler metrics.
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
	"/queues":  "queues.html",
	"/workers": "workers.html",
	"/tasks":   "tasks.html",
	"/task":    "task.html",
	"/listers": "listers.html",
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
