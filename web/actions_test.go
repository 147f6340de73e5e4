package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// click clicks the element sel once it is visible.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(cctx, chromedp.Click(chromedp.CSS(sel))), "click %s", sel)
}

// answer waits for the confirmation dialog to ask question and clicks
// its button action (confirm or cancel).
func answer(t *testing.T, ctx context.Context, question, action string) {
	t.Helper()
	waitPrefix(t, ctx, `#confirm-action[open] [data-field="question"]`, question)
	click(t, ctx, `#confirm-action [data-action="`+action+`"]`)
	require.Eventually(t, func() bool { return !evaluate[bool](t, ctx, `document.getElementById("confirm-action").open`) },
		10*time.Second, 50*time.Millisecond, "the dialog closes")
}

// pauses returns the paused visit types, as the store says.
func pauses(t *testing.T, ctx context.Context, st store.Store) []revisit.Pause {
	t.Helper()
	ps, err := st.VisitTypePauseList(ctx)
	require.NoError(t, err)
	return ps
}

// TestOverviewActions pauses and resumes git and refreshes the scheduler
// metrics from the overview's buttons, each confirmed in the dialog
// first.
func TestOverviewActions(t *testing.T) {
	o := openOverview(t, nil)
	ctx, st, bctx, problems := o.ctx, o.st, o.bctx, o.problems
	waitText(t, bctx, git+`[data-field="in_flight"]`, "4")

	// Cancelled, the pause changes nothing.
	click(t, bctx, git+`[data-action="pause"]`)
	answer(t, bctx, "Pause git? Its orchestrator loop runs no round", "cancel")
	require.Empty(t, pauses(t, ctx, st))

	click(t, bctx, git+`[data-action="pause"]`)
	answer(t, bctx, "Pause git?", "confirm")
	waitText(t, bctx, "#action-message", "git paused.")
	waitPrefix(t, bctx, git+`[data-field="loop"]`, "paused by anonymous at ")
	require.True(t, evaluate[bool](t, bctx, `document.querySelector('[data-visit-type="git"] [data-field="loop"]').classList.contains("state-paused")`))
	ps := pauses(t, ctx, st)
	require.Len(t, ps, 1)
	require.Equal(t, revisit.Pause{VisitType: "git", By: "anonymous", At: ps[0].At}, ps[0])
	screenshot(t, bctx, "overview-paused.png")

	// Paused, the loop sends none of the origins recorded meanwhile.
	l, err := st.ListerGetOrCreate(ctx, "github", "github")
	require.NoError(t, err)
	var more []revisit.ListedOrigin
	for i := range 2 {
		more = append(more, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://github.com/o/new%d", i),
			VisitType: "git", Enabled: true})
	}
	_, err = st.ListedOriginsRecord(ctx, more)
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond)
	require.EqualValues(t, 4, counts(t, ctx, st).Sent, "no round while paused")
	waitPrefix(t, bctx, git+`[data-field="loop"]`, "paused by anonymous at ")

	click(t, bctx, git+`[data-action="resume"]`)
	answer(t, bctx, "Resume git?", "confirm")
	waitText(t, bctx, "#action-message", "git resumed.")
	require.Eventually(t, func() bool { return counts(t, ctx, st).Sent == 6 }, 30*time.Second, 50*time.Millisecond,
		"resumed, the loop sends the new origins")
	require.Empty(t, pauses(t, ctx, st))
	waitText(t, bctx, git+`[data-field="in_flight"]`, "6")
	require.True(t, evaluate[bool](t, bctx, `document.querySelector('[data-visit-type="git"] [data-action="pause"]') !== null`),
		"the card offers to pause again")

	// The metrics were computed with four origins: refreshed, six.
	waitText(t, bctx, `#listers [data-field="origins_known"]`, "4")
	click(t, bctx, `[data-action="refresh-metrics"]`)
	answer(t, bctx, "Recompute the scheduler metrics", "confirm")
	waitText(t, bctx, `#listers [data-field="origins_known"]`, "6")
	waitPrefix(t, bctx, "#action-message", "Scheduler metrics recomputed")
	require.Empty(t, problems(), "the page logs no error")
}

// TestQuestionAskedAgainAtOnce cancels a question and asks again in the
// same instant, before the dialog's close event of the cancelled one: the
// second question takes its own answer.
func TestQuestionAskedAgainAtOnce(t *testing.T) {
	o := openOverview(t, nil)
	waitText(t, o.bctx, git+`[data-field="in_flight"]`, "4")
	click(t, o.bctx, git+`[data-action="pause"]`)
	waitPrefix(t, o.bctx, `#confirm-action[open] [data-field="question"]`, "Pause git?")
	require.True(t, evaluate[bool](t, o.bctx, `document.querySelector('#confirm-action [data-action="cancel"]').click(),
		document.querySelector('[data-visit-type="git"] [data-action="pause"]').click(),
		document.getElementById("confirm-action").open`), "asked again before the first close event")
	answer(t, o.bctx, "Pause git?", "confirm")
	waitText(t, o.bctx, "#action-message", "git paused.")
	require.Len(t, pauses(t, o.ctx, o.st), 1)
	require.Empty(t, o.problems(), "the page logs no error")
}
