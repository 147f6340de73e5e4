package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/web"
)

// TestPagesShareTheLayout reads every page: each has its title, its
// script, the token form and the nav with its own entry marked.
func TestPagesShareTheLayout(t *testing.T) {
	srv := httptest.NewServer(web.Handler(http.NotFoundHandler(), ""))
	defer srv.Close()
	for _, c := range []struct{ path, title, script, current string }{
		{"/", "<title>revisit</title>", "dashboard.js", `<a href="/" aria-current="page">Overview</a>`},
		{"/origins", "<title>Origins · revisit</title>", "origins.js", `<a href="/origins" aria-current="page">Origins</a>`},
		{"/origin", "<title>Origin · revisit</title>", "origin.js", ""},
		{"/queues", "<title>Queues · revisit</title>", "queues.js", `<a href="/queues" aria-current="page">Queues</a>`},
		{"/workers", "<title>Workers · revisit</title>", "workers.js", `<a href="/workers" aria-current="page">Workers</a>`},
		{"/tasks", "<title>Tasks · revisit</title>", "tasks.js", `<a href="/tasks" aria-current="page">Tasks</a>`},
		{"/task", "<title>Task · revisit</title>", "task.js", `<a href="/tasks" aria-current="page">Tasks</a>`},
		{"/listers", "<title>Listers · revisit</title>", "listers.js", `<a href="/listers" aria-current="page">Listers</a>`},
		{"/actions", "<title>Actions · revisit</title>", "actionlog.js", `<a href="/actions" aria-current="page">Actions</a>`},
	} {
		resp, err := http.Get(srv.URL + c.path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		html := string(body)
		require.Equal(t, http.StatusOK, resp.StatusCode, c.path)
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'", c.path)
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", c.path)
		require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"), c.path)
		require.NotContains(t, html, `id="notice"`, "no notice but the demo's")
		require.Contains(t, html, c.title, c.path)
		require.Contains(t, html, `<script type="module" src="/assets/`+c.script+`"></script>`, c.path)
		require.Contains(t, html, `<form id="login" hidden>`, c.path)
		require.Contains(t, html, "<main", c.path)
		if c.current == "" {
			require.NotContains(t, html, "aria-current", c.path)
		} else {
			require.Contains(t, html, c.current, c.path)
			require.Equal(t, 1, strings.Count(html, "aria-current"), c.path)
		}
	}
}
