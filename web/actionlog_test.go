package web_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
)

// TestActionsPage does actions through the API, after a hundred recorded
// earlier by the command line, and checks the actions page: newest first,
// in words, each target linked to its page, a page at a time, filtered by
// action and by who; on both stores.
func TestActionsPage(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			st, err := eng.open(t, ctx)
			require.NoError(t, err)
			seed(t, ctx, st)
			earlier := time.Now().Add(-time.Hour)
			for i := range 100 {
				_, err := st.OperatorActionRecord(ctx, revisit.OperatorAction{At: earlier.Add(time.Duration(i) * time.Second),
					By: "cli:alice", Action: "pause", Target: "hg", Answer: revisit.ActionAnswer("paused_by", "cli:alice")})
				require.NoError(t, err)
			}
			require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-gitlab",
				BackendName: "swh.lister.gitlab.tasks.IncrementalGitLabLister", DefaultInterval: 24 * time.Hour}))
			tasks, err := st.TasksCreate(ctx, []revisit.NewTask{{Type: "list-gitlab", NextRun: time.Now().Add(time.Hour),
				Policy: revisit.TaskRecurring, Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://gitlab.com"}}}})
			require.NoError(t, err)
			s := newStack(t, ctx, st, nil)

			var (
				out    map[string]any
				paused api.VisitTypePause
			)
			postJSON(t, s.srv.URL, "/api/v1/visit-types/git/pause", "", &paused)
			postJSON(t, s.srv.URL, "/api/v1/listed-origins/disable", `{"url": "https://github.com/o/r1", "visit_type": "git"}`, &out)
			postJSON(t, s.srv.URL, "/api/v1/visit-types/git/resume", "", &out)
			postJSON(t, s.srv.URL, fmt.Sprintf("/api/v1/tasks/%d/disable", tasks[0].ID), "", &out)
			postJSON(t, s.srv.URL, "/api/v1/scheduler-metrics/refresh", "{}", &out)
			done, err := st.OperatorActionsList(ctx, revisit.OperatorActionFilter{By: "anonymous"})
			require.NoError(t, err)
			require.Len(t, done.Actions, 5)
			row := func(i int) string { return fmt.Sprintf(`#actions [data-action="%d"] `, done.Actions[i].ID) }

			bctx := browser.New(t)
			problems := browser.Errors(t, bctx)
			visit(t, bctx, s.srv.URL+"/actions")
			refresh, task, resume, origin, pause := row(0), row(1), row(2), row(3), row(4)
			waitText(t, bctx, refresh+`[data-field="action"]`, "refresh scheduler metrics")
			waitText(t, bctx, refresh+`[data-field="target"]`, "every lister")
			waitText(t, bctx, refresh+`[data-field="answer"]`, "metrics: 1")
			waitText(t, bctx, refresh+`[data-field="by"]`, "anonymous")
			waitText(t, bctx, refresh+`[data-field="at"]`, pageTime(done.Actions[0].At))
			waitText(t, bctx, task+`[data-field="action"]`, "disable task")
			waitText(t, bctx, task+`[data-field="target"]`, fmt.Sprintf("task %d", tasks[0].ID))
			waitText(t, bctx, task+`[data-field="answer"]`, "status: disabled, type: list-gitlab")
			waitText(t, bctx, resume+`[data-field="action"]`, "resume visit type")
			waitText(t, bctx, resume+`[data-field="answer"]`, "was paused: true")
			waitText(t, bctx, origin+`[data-field="action"]`, "disable origin")
			waitText(t, bctx, origin+`[data-field="target"]`, "https://github.com/o/r1 (git)")
			waitText(t, bctx, origin+`[data-field="answer"]`, "changed: 1, lister: every lister")
			waitText(t, bctx, pause+`[data-field="action"]`, "pause visit type")
			waitText(t, bctx, pause+`[data-field="answer"]`, "paused at: "+pageTime(paused.Paused.At)+", paused by: anonymous")
			linkOf := func(sel string) string {
				return evaluate[string](t, bctx, `document.querySelector('`+sel+`[data-field="target"] a').getAttribute("href")`)
			}
			require.Equal(t, "/listers", linkOf(refresh))
			require.Equal(t, fmt.Sprintf("/task?id=%d", tasks[0].ID), linkOf(task))
			require.Equal(t, "/", linkOf(resume))
			require.Equal(t, "/origin?"+url.Values{"url": {"https://github.com/o/r1"}, "visit_type": {"git"}}.Encode(),
				linkOf(origin))
			rows := func() int {
				return evaluate[int](t, bctx, `document.querySelectorAll("#actions [data-action]").length`)
			}
			require.Equal(t, 100, rows(), "a page of 100")
			waitText(t, bctx, `#actions tbody tr:nth-child(6) [data-field="by"]`, "cli:alice")

			// The next page: the five oldest of the command line's.
			click(t, bctx, "#next")
			waitLocation(t, bctx, "page_token=")
			waitText(t, bctx, `#actions tbody tr:nth-child(5) [data-field="by"]`, "cli:alice")
			require.Equal(t, 5, rows())
			require.True(t, evaluate[bool](t, bctx, `document.getElementById("next").hidden`), "the last page")

			// Filtered by action, from the form; then by who.
			visit(t, bctx, s.srv.URL+"/actions")
			waitText(t, bctx, refresh+`[data-field="action"]`, "refresh scheduler metrics")
			require.NoError(t, chromedp.Do(bctx, chromedp.SetValue(chromedp.CSS("#action"), "disable_origin")))
			click(t, bctx, `#filters button[type="submit"]`)
			waitLocation(t, bctx, "action=disable_origin")
			waitText(t, bctx, origin+`[data-field="action"]`, "disable origin")
			require.Equal(t, 1, rows())
			require.Equal(t, "disable_origin", evaluate[string](t, bctx, `document.getElementById("action").value`))
			visit(t, bctx, s.srv.URL+"/actions?action=pause&by=anonymous")
			waitText(t, bctx, pause+`[data-field="action"]`, "pause visit type")
			require.Equal(t, 1, rows())
			visit(t, bctx, s.srv.URL+"/actions?by=anonymous")
			waitTrue(t, bctx, `document.querySelectorAll("#actions tbody tr").length === 5`)
			screenshot(t, bctx, "actions-"+eng.name+".png")
			visit(t, bctx, s.srv.URL+"/actions?by=nobody")
			waitText(t, bctx, `#actions td.empty`, "No action matches.")
			require.Empty(t, problems(), "the page logs no error")
		})
	}
}
