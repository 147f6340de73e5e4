package web_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
	"github.com/revisit-sched/revisit/web"
)

// TestQueuePageActions requeues and drops leased messages and purges the
// queue from the queue page's buttons, each confirmed in the dialog first,
// over the embedded broker without an orchestrator (which would send the
// origins offered again at once).
func TestQueuePageActions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "web.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	seed(t, ctx, st)
	b := embedded.New(st, embedded.Config{})
	t.Cleanup(func() { b.Close() })
	vs, err := st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{VisitType: "git",
		Count: 4, Policy: revisit.OldestScheduledFirst}})
	require.NoError(t, err)
	var msgs []celery.Message
	urls := map[string]string{}
	for _, v := range vs {
		urls[v.ID] = v.Origin.URL
		m, err := celery.NewMessage(celery.Task{Name: queue, ID: v.ID, Origin: "test@host",
			Kwargs: map[string]any{"url": v.Origin.URL}})
		require.NoError(t, err)
		msgs = append(msgs, m)
	}
	_, err = b.Publish(ctx, queue, msgs)
	require.NoError(t, err)
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 4}, counts(t, ctx, st))
	held, err := b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "worker-7", Max: 2, LeaseFor: time.Hour})
	require.NoError(t, err)
	require.Len(t, held, 2)
	srv := httptest.NewServer(web.Handler(api.New(api.Config{Store: st, Broker: b, Queues: b}), ""))
	t.Cleanup(srv.Close)
	leased := func() []string {
		page, err := st.QueueMessagesList(ctx, revisit.QueueMessageFilter{Queue: queue, Listing: revisit.QueueListLeased,
			Now: time.Now()})
		require.NoError(t, err)
		var ids []string
		for _, m := range page.Messages {
			ids = append(ids, m.ID)
		}
		return ids
	}

	bctx := browser.New(t)
	problems := browser.Errors(t, bctx)
	visit(t, bctx, srv.URL+"/queues?queue="+queue+"&state=leased")
	first := `#message-list [data-message="` + held[0].ID + `"] `
	waitText(t, bctx, first+`[data-field="worker"]`, "worker-7")

	// Requeue, cancelled then confirmed: the message waits again.
	click(t, bctx, first+`[data-action="requeue"]`)
	answer(t, bctx, "Requeue message "+held[0].ID+", leased to worker-7?", "cancel")
	require.Equal(t, []string{held[0].ID, held[1].ID}, leased(), "cancelled, nothing changes")
	click(t, bctx, first+`[data-action="requeue"]`)
	answer(t, bctx, "Requeue message "+held[0].ID, "confirm")
	waitText(t, bctx, "#action-message", "Message "+held[0].ID+" waits again in "+queue+".")
	require.Equal(t, []string{held[1].ID}, leased())
	require.Eventually(t, func() bool {
		return evaluate[int](t, bctx, `document.querySelectorAll("#message-list [data-message]").length`) == 1
	}, 10*time.Second, 50*time.Millisecond, "the page shows it gone from the leased messages")

	// Drop the message worker-7 still holds: its visit is lost.
	second := `#message-list [data-message="` + held[1].ID + `"] `
	click(t, bctx, second+`[data-action="drop"]`)
	answer(t, bctx, "Drop message "+held[1].ID+" ("+urls[held[1].ID]+")?", "confirm")
	waitText(t, bctx, "#action-message", "Message "+held[1].ID+" dropped from "+queue+
		"; its visit declared lost, its origin offered again.")
	require.Empty(t, leased())
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 3, Lost: 1}, counts(t, ctx, st))
	waitText(t, bctx, `#message-list td.empty`, "No message leased now.")
	_, err = b.Heartbeat(ctx, held[1].ID, "worker-7", time.Hour)
	require.ErrorIs(t, err, revisit.ErrNotFound, "its worker hears that it is gone")

	// The requeued message waits first, then the two never leased.
	visit(t, bctx, srv.URL+"/queues?queue="+queue)
	waitText(t, bctx, `#message-list tbody tr:nth-child(1) [data-field="id"]`, held[0].ID)
	require.Equal(t, 3, evaluate[int](t, bctx, `document.querySelectorAll("#message-list [data-message]").length`))

	// Purge the queue from its row.
	row := `#queues [data-queue="` + queue + `"] `
	waitText(t, bctx, row+`[data-field="waiting"]`, "3")
	click(t, bctx, row+`[data-action="purge"]`)
	answer(t, bctx, "Purge "+queue+"? Every message waiting in it is deleted", "confirm")
	waitText(t, bctx, "#action-message", "3 messages purged from "+queue+
		"; 3 visits declared lost, their origins offered again.")
	waitText(t, bctx, row+`[data-field="waiting"]`, "0")
	waitText(t, bctx, `#message-list td.empty`, "No message waiting.")
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Lost: 4}, counts(t, ctx, st))
	depth, err := st.QueueDepth(ctx, queue, time.Now())
	require.NoError(t, err)
	require.Zero(t, depth)
	screenshot(t, bctx, "console-queue-purged.png")
	require.Empty(t, problems(), "the page logs no error")
}
