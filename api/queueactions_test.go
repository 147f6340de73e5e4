package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/celery"
)

// waitingIDs lists the ids of the queue's waiting messages, in the order
// of the queue page.
func (h *actionHarness) waitingIDs() []string {
	h.t.Helper()
	var out []string
	for _, m := range h.json("GET", "/api/v1/queues/"+queue+"/messages", "", 200)["messages"].([]any) {
		out = append(out, m.(map[string]any)["id"].(string))
	}
	return out
}

// leaseOne leases one message of the queue for worker and returns its id.
func (h *actionHarness) leaseOne(worker string) string {
	h.t.Helper()
	got := h.json("POST", "/api/v1/queues/"+queue+"/lease", `{"worker": "`+worker+`"}`, 200)["messages"].([]any)
	require.Len(h.t, got, 1)
	return got[0].(map[string]any)["id"].(string)
}

func TestVisitNowJumpsTheEmbeddedQueue(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	ctx := context.Background()
	var ids []string
	for range 20 {
		m, err := celery.NewMessage(celery.Task{Name: queue, ID: uuid.NewString(), Origin: "test@host",
			Kwargs: map[string]any{"url": "https://github.com/o/other"}})
		require.NoError(t, err)
		ids = append(ids, m.Properties.CorrelationID)
		_, err = h.st.QueueMessagesEnqueue(ctx, queue, []revisit.QueueMessage{{ID: m.Properties.CorrelationID,
			Task: queue, Headers: []byte(`{}`), Body: m.Body}}, time.Now())
		require.NoError(t, err)
	}
	v := h.json("POST", "/api/v1/visits", `{"url": "https://github.com/o/r0", "visit_type": "git"}`, 200)
	page := h.json("GET", "/api/v1/queues/"+queue+"/messages", "", 200)["messages"].([]any)
	first := page[0].(map[string]any)
	require.Equal(t, v["id"], first["id"], "the waiting list shows it first")
	require.EqualValues(t, 9, first["priority"])
	require.EqualValues(t, 0, page[1].(map[string]any)["priority"])
	require.Equal(t, v["id"], h.leaseOne("w1"), "a worker leases it before the 20 queued before it")
	require.Equal(t, ids, h.waitingIDs())
}

func TestPurgeDropAndRequeue(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	for _, url := range []string{"https://github.com/o/r0", "https://github.com/o/r1"} {
		h.json("POST", "/api/v1/visits", `{"url": "`+url+`", "visit_type": "git"}`, 200)
	}
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 2}, h.counts())
	first := h.leaseOne("w1")

	// Requeue: the message waits again, in its place.
	out := h.json("POST", "/api/v1/messages/"+first+"/requeue", "", 200)
	m := out["message"].(map[string]any)
	require.Equal(t, first, m["id"])
	require.Equal(t, queue, m["queue"])
	require.Equal(t, "w1", m["worker"])
	require.Equal(t, "git", m["visit_type"])
	require.Len(t, h.waitingIDs(), 2)
	require.Equal(t, first, h.waitingIDs()[0])
	h.audited("requeue_message", first, "writer")
	h.fails("POST", "/api/v1/messages/"+first+"/heartbeat", `{"worker": "w1"}`, 409, "conflict", "",
		"not leased to worker")
	h.fails("POST", "/api/v1/messages/"+first+"/requeue", "", 409, "conflict", "", "is not leased: it is ready")
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 2}, h.counts(), "its visit stays in flight")

	// Drop the message a worker holds: its visit is lost, its worker told.
	require.Equal(t, first, h.leaseOne("w2"))
	out = h.json("POST", "/api/v1/messages/"+first+"/drop", "", 200)
	require.Equal(t, true, out["visit_lost"])
	require.Equal(t, "w2", out["message"].(map[string]any)["worker"])
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1, Lost: 1}, h.counts())
	h.audited("drop_message", first, "writer")
	h.fails("POST", "/api/v1/messages/"+first+"/heartbeat", `{"worker": "w2"}`, 404, "not_found", "", "not found")
	h.fails("POST", "/api/v1/messages/"+first+"/result", `{"worker": "w2", "status": "eventful"}`, 404, "not_found", "",
		"not found")
	h.fails("POST", "/api/v1/messages/"+first+"/drop", "", 404, "not_found", "", "message "+first+" not found")

	// Purge the queue: the waiting message goes, its visit is lost.
	out = h.json("POST", "/api/v1/queues/"+queue+"/purge", "", 200)
	require.EqualValues(t, 1, out["purged"])
	require.EqualValues(t, 1, out["visits_lost"])
	require.Equal(t, "embedded", out["broker"])
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Lost: 2}, h.counts())
	require.Empty(t, h.waitingIDs())
	h.audited("purge_queue", queue, "writer")
	again, err := h.st.GrabNextVisits(context.Background(), revisit.GrabParams{VisitType: "git", Count: 10,
		Policy: revisit.OldestScheduledFirst, DryRun: true})
	require.NoError(t, err)
	require.Len(t, again, 2, "both origins are offered again")
	out = h.json("POST", "/api/v1/queues/"+queue+"/purge", "", 200)
	require.EqualValues(t, 0, out["purged"], "nothing left")

	h.fails("POST", "/api/v1/queues/nowhere/purge", "", 404, "not_found", "", `queue "nowhere" does not exist`)
	h.fails("POST", "/api/v1/messages/nope/requeue", "", 404, "not_found", "", "message nope not found")
}
