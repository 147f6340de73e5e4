package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
)

// TestServeRefusesCrossSiteWrites: a page of another site, open in the
// operator's Chromium, tries to write to the default loopback server
// without tokens (a no-cors fetch, a plain-text form); nothing is written.
// A request naming another host (DNS rebinding) is refused, and the
// server's own console still writes.
func TestServeRefusesCrossSiteWrites(t *testing.T) {
	t.Parallel()
	base := startServe(t, buildRevisit(t), t.TempDir(), "serve")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(base, "", nil)
	require.NoError(t, err)
	require.NoError(t, c.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: "q", MaxQueueLength: 10}))
	lister, err := c.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)

	origins := fmt.Sprintf(`{"origins": [{"lister_id": "%s", "url": "https://evil.example/x", "visit_type": "git"}]}`, lister.ID)
	page := `<!doctype html><body>
<iframe name="sink"></iframe>
<form id="f" method="post" enctype="text/plain" target="sink" action="` + base + `/api/v1/listed-origins">
<input name='` + strings.TrimSuffix(origins, "}") + `, "x": "' value='"}'></form>
<script>
fetch("` + base + `/api/v1/visit-types/git/pause", {method: "POST", mode: "no-cors", body: "{}",
  headers: {"Content-Type": "text/plain"}}).finally(() => {
  fetch("` + base + `/api/v1/visit-types/git/pause", {method: "POST", mode: "no-cors"}).finally(() => {
    document.getElementById("f").submit();
    setTimeout(() => { document.title = "done"; }, 1000);
  });
});
</script></body>`
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, page)
	}))
	defer other.Close()
	// Another site: the page is at localhost, the server at 127.0.0.1.
	attacker := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	bctx := browser.New(t)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(attacker),
		chromedp.Poll[chromedp.Void](`document.title === "done"`, chromedp.WithPollingTimeout(20*time.Second))))
	page1, err := c.ListedOriginsGet(ctx, revisit.ListedOriginFilter{})
	require.NoError(t, err)
	require.Empty(t, page1.Origins, "the cross-site form recorded nothing")
	was, err := c.VisitTypePauseClear(ctx, "git")
	require.NoError(t, err)
	require.False(t, was, "the cross-site fetches paused nothing")

	// DNS rebinding: a name of another site that resolves to the server.
	req, err := http.NewRequest("GET", base+"/api/v1/listers", nil)
	require.NoError(t, err)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, string(body), `not \"evil.example\"`)

	// The server's own pages write, from its origin.
	_, err = chromedp.Run(bctx, chromedp.Navigate(base+"/"))
	require.NoError(t, err)
	status, err := chromedp.Run(bctx, chromedp.Evaluate[int](`fetch("/api/v1/visit-types/git/pause",
		{method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	was, err = c.VisitTypePauseClear(ctx, "git")
	require.NoError(t, err)
	require.True(t, was, "the console's own write went through")
}
