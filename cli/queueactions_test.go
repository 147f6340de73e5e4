package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
)

func TestBrokerPurgeDropRequeue(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	ctx := context.Background()
	vs, err := w.st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{VisitType: "git",
		Count: 2, Policy: revisit.OldestScheduledFirst, Cooldowns: &revisit.Cooldowns{}, Now: testNow.Add(-time.Hour)}})
	require.NoError(t, err)
	require.Len(t, vs, 2)
	var msgs []celery.Message
	for _, v := range vs {
		m, err := celery.NewMessage(celery.Task{Name: gitQueue, ID: v.ID, Origin: "test@host",
			Kwargs: map[string]any{"url": v.Origin.URL}})
		require.NoError(t, err)
		msgs = append(msgs, m)
	}
	_, err = w.broker.Publish(ctx, gitQueue, msgs)
	require.NoError(t, err)
	held, err := w.broker.Lease(ctx, embedded.LeaseParams{Queue: gitQueue, Worker: "w1", Max: 2, LeaseFor: time.Hour})
	require.NoError(t, err)
	require.Len(t, held, 2)
	first, second := held[0].ID, held[1].ID

	// Requeue on the store, then drop through the server.
	require.Equal(t, "requeued "+first+" in "+gitQueue+" (it was leased to w1)\n", w.ok("broker", "requeue", first))
	require.Contains(t, w.fails(ExitError, "broker", "requeue", first), "is not leased: it is ready")
	dropped := w.jsonObject(w.remote(testWriteToken, "broker", "drop", first)...)
	require.Equal(t, map[string]any{"id": first, "queue": gitQueue, "url": vs[0].Origin.URL, "visit_lost": true}, dropped)
	require.Contains(t, w.fails(ExitError, "broker", "drop", first), "message "+first+" not found")

	// Requeue through the server, then purge on the store.
	require.Equal(t, "requeued "+second+" in "+gitQueue+" (it was leased to w1)\n",
		w.ok(w.remote(testWriteToken, "broker", "requeue", second)...))
	require.Equal(t, "purged 1 message(s) from "+gitQueue+"; 1 visit(s) declared lost, their origins are offered again\n",
		w.ok("broker", "purge", gitQueue))
	require.Equal(t, map[string]any{"queue": gitQueue, "purged": 0.0, "visits_lost": 0.0},
		w.jsonObject(w.remote(testWriteToken, "broker", "purge", gitQueue)...))
	for _, v := range vs {
		require.Equal(t, []string{"lost"}, w.visitStates(v.Origin.URL, "git"))
	}

	require.Contains(t, w.fails(ExitError, "broker", "purge", "nowhere"), `queue "nowhere" does not exist`)
	require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "broker", "purge", gitQueue)...),
		"token reader is read-only")
	require.Contains(t, w.fails(ExitUsage, "broker", "drop"), "want 1 argument(s) MESSAGE_ID, got 0")

	// Each action done is kept, by the CLI's user on the store, by the
	// token's name through the server.
	page, err := w.st.OperatorActionsList(ctx, revisit.OperatorActionFilter{})
	require.NoError(t, err)
	var done []string
	for _, a := range page.Actions {
		done = append(done, a.Action+" "+a.Target+" "+a.By)
	}
	require.Equal(t, []string{
		"purge_queue " + gitQueue + " writer", "purge_queue " + gitQueue + " cli:tester",
		"requeue_message " + second + " writer", "drop_message " + first + " writer", "requeue_message " + first + " cli:tester",
	}, done)
}

func TestBrokerDropNeedsTheEmbeddedBroker(t *testing.T) {
	t.Parallel()
	rabbit(t)
	h := newHarness(t)
	for _, action := range []string{"drop", "requeue"} {
		require.Contains(t, h.fails(ExitUsage, "--broker", testBrokerURL, "broker", action, "x"),
			"acts on the embedded broker's messages; the configured broker is RabbitMQ")
	}
}
