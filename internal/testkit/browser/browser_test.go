package browser_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/revisit-sched/revisit/internal/testkit/browser"
)

// TestErrors loads a page that logs an error, throws, and misses an image:
// Errors reports all three, and nothing of the page's plain logging.
func TestErrors(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.html")
	html := `<!doctype html><title>errors</title>
<img src="missing.png" alt="">
<script>console.log("fine"); console.error("broken", 42); throw new Error("thrown");</script>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browser.New(t)
	errors := browser.Errors(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(errors(), "\n")
	for _, want := range []string{"console.error: broken 42", "Error: thrown", "missing.png"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fine") {
		t.Errorf("errors hold a plain log:\n%s", got)
	}
}
