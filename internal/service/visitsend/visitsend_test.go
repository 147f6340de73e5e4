package visitsend_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

const gitTask = "swh.loader.git.tasks.UpdateGitRepository"

// world records n never-visited git origins of two listers, one with an
// instance name and one without.
func world(t *testing.T, st store.Store, n int) (withInstance, bare revisit.Lister) {
	t.Helper()
	ctx := context.Background()
	var err error
	withInstance, err = st.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	bare, err = st.ListerGetOrCreate(ctx, "cgit", "")
	require.NoError(t, err)
	var os []revisit.ListedOrigin
	for i := range n {
		l := withInstance
		if i%2 == 1 {
			l = bare
		}
		os = append(os, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://forge.example/r%d", i),
			VisitType: "git", Enabled: true,
			ExtraLoaderArguments: map[string]any{"depth": 1, "lister_name": "overridden"}})
	}
	_, err = st.ListedOriginsRecord(ctx, os)
	require.NoError(t, err)
	return withInstance, bare
}

func grab(n int) revisit.GrabParams {
	return revisit.GrabParams{VisitType: "git", Count: n, Policy: revisit.OldestScheduledFirst}
}

// kwargs decodes the keyword arguments of a Celery message.
func kwargs(t *testing.T, m celery.Message) map[string]any {
	t.Helper()
	var body []json.RawMessage
	require.NoError(t, json.Unmarshal(m.Body, &body))
	var kw map[string]any
	require.NoError(t, json.Unmarshal(body[1], &kw))
	return kw
}

// countingListers counts the listers looked up.
type countingListers struct {
	store.Store
	asked int
}

func (c *countingListers) ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	c.asked += len(ids)
	return c.Store.ListerGetByIDs(ctx, ids)
}

func TestMessagesCarryTheVisitsKwargs(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		withInstance, bare := world(t, st, 4)
		visits, err := st.VisitsDispatch(ctx, revisit.DispatchParams{Grab: grab(4), Owner: "test"})
		require.NoError(t, err)
		require.Len(t, visits, 4)

		counted := &countingListers{Store: st}
		m := visitsend.NewMessages(counted, "revisit@test")
		msgs, err := m.Build(ctx, gitTask, visits)
		require.NoError(t, err)
		require.Len(t, msgs, 4)
		for i, msg := range msgs {
			require.Equal(t, visits[i].ID, msg.Properties.CorrelationID, "the message id is the visit's")
			require.Equal(t, gitTask, msg.Headers.Task)
			require.Equal(t, "revisit@test", msg.Headers.Origin)
			kw := kwargs(t, msg)
			require.Equal(t, visits[i].Origin.URL, kw["url"])
			require.EqualValues(t, 1, kw["depth"])
			require.Equal(t, "overridden", kw["lister_name"], "extra loader arguments win")
			instance := map[uuid.UUID]any{withInstance.ID: "gitlab.com", bare.ID: nil}[visits[i].Origin.ListerID]
			require.Equal(t, instance, kw["lister_instance_name"])
		}
		require.Equal(t, 2, counted.asked, "each lister is read once")
		_, err = m.Build(ctx, gitTask, visits)
		require.NoError(t, err)
		require.Equal(t, 2, counted.asked, "and kept")

		kws, err := m.Kwargs(ctx, []revisit.ListedOrigin{{ListerID: withInstance.ID, URL: "https://a.example/x"},
			{ListerID: bare.ID, URL: "https://b.example/y"}})
		require.NoError(t, err)
		require.Equal(t, []map[string]any{
			{"url": "https://a.example/x", "lister_name": "gitlab", "lister_instance_name": "gitlab.com"},
			{"url": "https://b.example/y", "lister_name": "cgit", "lister_instance_name": nil},
		}, kws, "a lister without instance name gives null")
	})
}

// outcomes is a broker whose publications have the given outcomes, in
// order; it measures every queue empty.
type outcomes []broker.Publication

func (o outcomes) Publish(_ context.Context, _ string, msgs []celery.Message) ([]broker.Publication, error) {
	pubs := make([]broker.Publication, len(msgs))
	for i, m := range msgs {
		pubs[i] = o[i]
		pubs[i].ID = m.Properties.CorrelationID
	}
	return pubs, nil
}

func (o outcomes) Depth(context.Context, string) (int64, error) { return 0, nil }

func TestSendRecordsEachOutcome(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		world(t, st, 3)
		b := outcomes{{Outcome: broker.Confirmed},
			{Outcome: broker.Failed, Err: fmt.Errorf("%w: refused", broker.ErrNotSent)},
			{Outcome: broker.Failed, Err: broker.ErrUnconfirmed}}
		s := visitsend.NewSender(st, b, visitsend.Config{Owner: "test", Origin: "revisit@test"})
		res, err := s.Send(ctx, visitsend.Request{Grab: grab(3), Task: gitTask, Queue: "q"})
		require.NoError(t, err)
		require.Len(t, res.Visits, 3)
		require.Equal(t, 1, res.Sent)
		require.Equal(t, 1, res.Failed)
		require.Equal(t, 1, res.Unsure)
		require.Equal(t, 2, res.NotSent())
		require.ErrorIs(t, res.Err, broker.ErrNotSent, "the first error")

		got, err := st.VisitsGet(ctx, []string{res.Visits[0].ID, res.Visits[1].ID, res.Visits[2].ID})
		require.NoError(t, err)
		states := map[string]revisit.VisitState{}
		for _, v := range got {
			states[v.ID] = v.State
		}
		require.Equal(t, map[string]revisit.VisitState{res.Visits[0].ID: revisit.VisitSent,
			res.Visits[2].ID: revisit.VisitLost}, states,
			"confirmed: sent; not delivered: forgotten; maybe delivered: kept lost")

		// The origin of the message not delivered, and that of the one maybe
		// delivered, are offered again; the sent one is not.
		again, err := st.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 3,
			Policy: revisit.OldestScheduledFirst, DryRun: true})
		require.NoError(t, err)
		var urls []string
		for _, o := range again {
			urls = append(urls, o.URL)
		}
		require.ElementsMatch(t, []string{res.Visits[1].Origin.URL, res.Visits[2].Origin.URL}, urls)
	})
}

// failingListers fails every lister lookup.
type failingListers struct{ store.Store }

func (failingListers) ListerGetByIDs(context.Context, []uuid.UUID) ([]revisit.Lister, error) {
	return nil, errors.New("database gone")
}

func TestSendReleasesWhatItCouldNotBuild(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		world(t, st, 2)
		s := visitsend.NewSender(failingListers{st}, outcomes{}, visitsend.Config{Owner: "test"})
		_, err := s.Send(ctx, visitsend.Request{Grab: grab(2), Task: gitTask, Queue: "q"})
		require.ErrorContains(t, err, "database gone")
		counts, err := st.VisitsCount(ctx)
		require.NoError(t, err)
		require.Empty(t, counts, "no visit left in flight")
		again, err := st.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 2,
			Policy: revisit.OldestScheduledFirst, DryRun: true})
		require.NoError(t, err)
		require.Len(t, again, 2, "their origins are offered again")
	})
}

func TestSendToTheEmbeddedBroker(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		world(t, st, 4)
		b := embedded.New(st, embedded.Config{})
		defer b.Close()
		s := visitsend.NewSender(st, b, visitsend.Config{Owner: "test", Origin: "revisit@test",
			Clock: func() time.Time { return time.Now().UTC() }})

		r := visitsend.Request{Grab: grab(0), Task: gitTask, Queue: "prefix:" + gitTask}
		slots, res, err := s.Fill(ctx, r, 5, 1)
		require.NoError(t, err)
		require.Equal(t, 5, slots)
		require.Equal(t, 1, res.Sent, "the limit caps the slots")
		slots, more, err := s.Fill(ctx, r, 3, 0)
		require.NoError(t, err)
		require.Equal(t, 2, slots, "the message sent takes a slot")
		require.Equal(t, 2, more.Sent)
		res.Visits = append(res.Visits, more.Visits...)
		slots, _, err = s.Fill(ctx, r, 3, 0)
		require.NoError(t, err)
		require.Zero(t, slots, "a full queue has no free slot")
		slots, _, err = s.Fill(ctx, r, 1, 0)
		require.NoError(t, err)
		require.Zero(t, slots, "nor one beyond its length")

		tasks, err := b.Lease(ctx, embedded.LeaseParams{Queue: "prefix:" + gitTask, Worker: "w", Max: 10,
			LeaseFor: time.Minute})
		require.NoError(t, err)
		require.Len(t, tasks, 3)
		for i, task := range tasks {
			require.Equal(t, res.Visits[i].ID, task.ID)
			require.Equal(t, gitTask, task.Task)
		}
		counts, err := st.VisitsCount(ctx)
		require.NoError(t, err)
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 3}}, counts, "in flight, as the orchestrator's")
	})
}

// recording is a broker that confirms every message and keeps them.
type recording struct{ msgs []celery.Message }

func (r *recording) Publish(_ context.Context, _ string, msgs []celery.Message) ([]broker.Publication, error) {
	r.msgs = append(r.msgs, msgs...)
	pubs := make([]broker.Publication, len(msgs))
	for i, m := range msgs {
		pubs[i] = broker.Publication{ID: m.Properties.CorrelationID, Outcome: broker.Confirmed}
	}
	return pubs, nil
}

func (r *recording) Depth(context.Context, string) (int64, error) { return 0, nil }

func TestSendVisitsOfAnOperatorWithAPriority(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		world(t, st, 2)
		v, err := st.VisitsDispatchOrigin(ctx, revisit.OriginDispatchParams{
			Key: revisit.OriginKey{URL: "https://forge.example/r1", VisitType: "git"}, Owner: "operator"})
		require.NoError(t, err)
		b := &recording{}
		s := visitsend.NewSender(st, b, visitsend.Config{Owner: "test", Origin: "revisit@test"})
		priority := visitsend.HighPriority
		out, err := s.SendVisits(ctx, gitTask, "q", &priority, []revisit.Visit{v})
		require.NoError(t, err)
		require.Equal(t, 1, out.Sent)
		require.Len(t, b.msgs, 1)
		require.Equal(t, visitsend.HighPriority, b.msgs[0].Properties.Priority)
		require.Equal(t, v.ID, b.msgs[0].Properties.CorrelationID)
		require.Equal(t, "https://forge.example/r1", kwargs(t, b.msgs[0])["url"])
		got, err := st.VisitsGet(ctx, []string{v.ID})
		require.NoError(t, err)
		require.Equal(t, revisit.VisitSent, got[0].State)
	})
}

// TestSendOrigin: an operator's visit is sent at once with a high
// priority under the sender's owner; a second is the store's conflict
// unless forced; a message not sent leaves nothing in flight and says why.
func TestSendOrigin(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		world(t, st, 2)
		tt := revisit.TaskType{Type: "load-git", BackendName: gitTask}
		cfg := visitsend.Config{Owner: "operator-process", Origin: "revisit@test"}
		p := revisit.OriginDispatchParams{Key: revisit.OriginKey{URL: "https://forge.example/r1", VisitType: "git"}}
		b := &recording{}
		v, err := visitsend.SendOrigin(ctx, st, b, cfg, tt, p)
		require.NoError(t, err)
		require.Equal(t, "operator-process", v.Owner)
		require.Len(t, b.msgs, 1)
		require.Equal(t, visitsend.HighPriority, b.msgs[0].Properties.Priority)
		require.Equal(t, v.ID, b.msgs[0].Properties.CorrelationID)
		got, err := st.VisitsGet(ctx, []string{v.ID})
		require.NoError(t, err)
		require.Equal(t, revisit.VisitSent, got[0].State)
		require.Equal(t, revisit.OperatorChoice, got[0].Policy)

		_, err = visitsend.SendOrigin(ctx, st, b, cfg, tt, p)
		require.ErrorIs(t, err, revisit.ErrConflict)
		require.Len(t, b.msgs, 1, "nothing sent")
		p.Force = true
		_, err = visitsend.SendOrigin(ctx, st, b, cfg, tt, p)
		require.NoError(t, err)
		require.Len(t, b.msgs, 2)

		p = revisit.OriginDispatchParams{Key: revisit.OriginKey{URL: "https://forge.example/r0", VisitType: "git"}}
		_, err = visitsend.SendOrigin(ctx, st, outcomes{{Err: broker.ErrQueueMissing}}, cfg, tt, p)
		require.Equal(t, &revisit.Error{Code: revisit.CodeUnavailable, Message: "the message was not sent to queue " +
			gitTask + " (the queue does not exist: no worker declared it yet); nothing is in flight"}, err)
		inFlight, err := st.VisitsOfOrigin(ctx, p.Key)
		require.NoError(t, err)
		require.Empty(t, inFlight)
	})
}
