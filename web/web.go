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
// Every page is one layout (pages/layout.html: head, nav, token form)
// around its own main part (pages/<page>.html), put together at start.
//
// The other pages read one or two API routes each: /origins browses a
// visit type's origins in one of its views, or searches the listed
// origins by URL, /origin?url=…&visit_type=… shows one origin and
// explains its next visit; /queues the broker's
// queues and, for the queue of its URL, a page of its messages waiting or
// leased; /workers the embedded broker's workers; /tasks the task types
// and a page of generic tasks, /task?id=N one task and its runs; /listers
// each lister's last listing, first visits and stored scheduler metrics;
// /actions who did what: a page of the operators' actions, newest first,
// filtered by action and by who did them.
//
// When the API has tokens, a page asks for one and keeps it in the
// browser's session storage.
package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// pageFiles hold the layout every page shares and each page's main part.
//
//go:embed pages
var pageFiles embed.FS

// page is one page of the console: its path, the file of its main part,
// its title, what it adds to the layout, and the nav entry it is under
// ("" for none).
type page struct {
	path, file, title, script, nav string
	styles                         []string
}

var pages = []page{
	{path: "/{$}", file: "index.html", script: "dashboard.js", nav: "/"},
	{path: "/origins", file: "origins.html", title: "Origins", script: "origins.js", nav: "/origins", styles: []string{"pages.css", "origins.css"}},
	{path: "/origin", file: "origin.html", title: "Origin", script: "origin.js", styles: []string{"origins.css"}},
	{path: "/queues", file: "queues.html", title: "Queues", script: "queues.js", nav: "/queues", styles: []string{"pages.css"}},
	{path: "/workers", file: "workers.html", title: "Workers", script: "workers.js", nav: "/workers", styles: []string{"pages.css"}},
	{path: "/tasks", file: "tasks.html", title: "Tasks", script: "tasks.js", nav: "/tasks", styles: []string{"pages.css"}},
	{path: "/task", file: "task.html", title: "Task", script: "task.js", nav: "/tasks", styles: []string{"pages.css"}},
	{path: "/listers", file: "listers.html", title: "Listers", script: "listers.js", nav: "/listers", styles: []string{"pages.css"}},
	{path: "/actions", file: "actions.html", title: "Actions", script: "actionlog.js", nav: "/actions", styles: []string{"pages.css"}},
}

// navEntries are the nav bar's links, in order.
var navEntries = []struct{ href, label string }{
	{"/", "Overview"}, {"/origins", "Origins"}, {"/queues", "Queues"}, {"/workers", "Workers"},
	{"/tasks", "Tasks"}, {"/listers", "Listers"}, {"/actions", "Actions"},
}

// render returns the whole HTML of p: the layout around its main part,
// with the server's notice (none: "") above it.
func render(layout *template.Template, p page, notice string) ([]byte, error) {
	main, err := fs.ReadFile(pageFiles, "pages/"+p.file)
	if err != nil {
		return nil, err
	}
	type link struct {
		Href, Label string
		Current     bool
	}
	var nav []link
	for _, e := range navEntries {
		nav = append(nav, link{e.href, e.label, e.href == p.nav})
	}
	var b bytes.Buffer
	err = layout.Execute(&b, map[string]any{"Title": p.title, "Styles": p.styles, "Script": p.script, "Nav": nav,
		"Notice": notice,
		// The main parts are the binary's own files.
		"Main": template.HTML(main)})
	return b.Bytes(), err
}

// Handler serves the console's pages and their assets under /assets/,
// and hands every other request to next (the API). notice, when not
// empty, tells every page what this server is (as the demo's "a
// demonstration…").
func Handler(next http.Handler, notice string) http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	layout := template.Must(template.ParseFS(pageFiles, "pages/layout.html"))
	files := http.FileServerFS(sub)
	mux := http.NewServeMux()
	for _, p := range pages {
		html, err := render(layout, p, notice)
		if err != nil {
			panic(err) // the embedded pages are fixed: a test renders them all
		}
		mux.HandleFunc("GET "+p.path, func(w http.ResponseWriter, r *http.Request) {
			setHeaders(w)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(html)
		})
	}
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w)
		files.ServeHTTP(w, r)
	})))
	mux.Handle("/", next)
	return mux
}

// setHeaders forbids the page any source but its own server, and any
// other site to frame it (a page of another site could lay it under its
// own and have an operator's clicks act on it).
func setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
}
