package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/browser"
	"github.com/revisit-sched/revisit/simulate"
)

// TestPageInChromium opens report.html from its file: no error, and every
// plot shows.
func TestPageInChromium(t *testing.T) {
	dir := t.TempDir()
	runs := []simulate.Result{result("baseline", 0), result("more <hg> workers", 3)}
	require.NoError(t, Write(dir, runs))
	plots, err := filepath.Glob(filepath.Join(dir, "plots", "*.svg"))
	require.NoError(t, err)

	ctx := browser.New(t)
	errors := browser.Errors(t, ctx)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, "report.html"))))

	type shown struct {
		ID, Caption, Text string
		SVGs              int
		Width, Height     float64
	}
	figures, err := chromedp.Run(ctx, chromedp.Evaluate[[]shown](`[...document.querySelectorAll("figure")].map((f) => {
		const svgs = f.querySelectorAll("svg");
		const box = svgs.length ? svgs[0].getBoundingClientRect() : {width: 0, height: 0};
		return {ID: f.id, Caption: f.querySelector("figcaption")?.textContent ?? "", Text: svgs[0]?.textContent ?? "",
			SVGs: svgs.length, Width: box.width, Height: box.height};
	})`))
	require.NoError(t, err)
	require.Len(t, figures, len(plots), "a figure per plot")
	for _, f := range figures {
		require.Equal(t, 1, f.SVGs, "figure %s", f.ID)
		require.Positive(t, f.Width, "figure %s", f.ID)
		require.Positive(t, f.Height, "figure %s", f.ID)
		require.NotEmpty(t, strings.TrimSpace(f.Caption), "figure %s", f.ID)
		require.FileExists(t, filepath.Join(dir, "plots", f.ID+".png"))
	}
	require.Equal(t, "origins", figures[0].ID)
	require.Contains(t, figures[0].Text, "more <hg> workers: known", "the legend names the runs")

	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("h1").textContent`))
	require.NoError(t, err)
	require.Equal(t, "revisit simulation: baseline vs more <hg> workers", title)
	require.Empty(t, errors(), "the page logs no error")
}
