package listener

import (
	"context"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t   *testing.T
	st  store.Store
	ctx context.Context
	l   *Listener
	m   *Metrics
	// runs records what the run handler was given.
	runs [][]celery.Event
}

func newFixture(t *testing.T) *fixture {
	st := teststore.SQLite(t)
	f := &fixture{t: t, st: st, ctx: context.Background(), m: NewMetrics(nil)}
	f.l = New(st, nil, Config{Metrics: f.m, Rand: func() float64 { return 0.5 },
		Runs: func(_ context.Context, events []celery.Event) ([]celery.Event, error) {
			f.runs = append(f.runs, events)
			return events, nil
		}})
	return f
}

// dispatch records n git origins and dispatches them; it returns the
// visits, marked sent.
func (f *fixture) dispatch(urls ...string) []revisit.Visit {
	l, err := f.st.ListerGetOrCreate(f.ctx, "gitlab", "")
	require.NoError(f.t, err)
	var origins []revisit.ListedOrigin
	for _, u := range urls {
		origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, URL: u, VisitType: "git", Enabled: true})
	}
	_, err = f.st.ListedOriginsRecord(f.ctx, origins)
	require.NoError(f.t, err)
	vs, err := f.st.VisitsDispatch(f.ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{
		VisitType: "git", Count: len(urls), Policy: revisit.OldestScheduledFirst, Cooldowns: &revisit.Cooldowns{}}})
	require.NoError(f.t, err)
	require.Len(f.t, vs, len(urls))
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	_, err = f.st.VisitsSent(f.ctx, ids, t0)
	require.NoError(f.t, err)
	return vs
}

func (f *fixture) stats(url string) revisit.VisitStats {
	f.t.Helper()
	got, err := f.st.VisitStatsGet(f.ctx, []revisit.OriginKey{{URL: url, VisitType: "git"}})
	require.NoError(f.t, err)
	require.Len(f.t, got, 1)
	return got[0]
}

func (f *fixture) inFlight() int64 {
	cs, err := f.st.VisitsCount(f.ctx)
	require.NoError(f.t, err)
	var n int64
	for _, c := range cs {
		n += c.Pending + c.Sent + c.Lost
	}
	return n
}

func result(id string, at time.Time, status celery.VisitStatus, snapshot []byte) celery.Event {
	return celery.Event{Type: celery.TypeResult, UUID: id, Timestamp: at,
		VisitResult: &celery.VisitResult{Status: status, SnapshotID: snapshot}}
}

func TestResultUpdatesStatsAndClosesTheVisit(t *testing.T) {
	f := newFixture(t)
	vs := f.dispatch("https://forge.example/a")
	snap := []byte("01234567890123456789")
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{result(vs[0].ID, t0.Add(time.Hour), celery.VisitEventful, snap)}))
	s := f.stats("https://forge.example/a")
	require.Equal(t, t0.Add(time.Hour), *s.LastVisit)
	require.Equal(t, t0.Add(time.Hour), *s.LastSuccessful)
	require.Equal(t, revisit.VisitSuccessful, *s.LastVisitStatus)
	require.Equal(t, snap, s.LastSnapshot)
	require.NotNil(t, s.LastScheduled, "the dispatch's mark survives")
	require.Zero(t, f.inFlight(), "the result closed the visit")
	require.Equal(t, 1.0, testutil.ToFloat64(f.m.results.WithLabelValues("git", "full")))
	require.Empty(t, f.runs, "nothing left for the task runs")
}

// A result dated beyond the clock + MaxFuture is not folded (it would
// make every real result after it late): the visit is closed, the result
// counted as unreadable, and the next real result counts.
func TestFutureResultIsNotFolded(t *testing.T) {
	f := newFixture(t)
	f.l.cfg.Clock = func() time.Time { return t0.Add(2 * time.Hour) }
	vs := f.dispatch("https://forge.example/a")
	future := result(vs[0].ID, time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), celery.VisitEventful, nil)
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{future}))
	require.Nil(t, f.stats("https://forge.example/a").LastVisit, "the future result was not folded")
	require.Zero(t, f.inFlight(), "the visit is closed")
	require.Equal(t, 1.0, testutil.ToFloat64(f.m.results.WithLabelValues("git", "unreadable")))

	vs = f.dispatch("https://forge.example/b")
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{
		result(vs[0].ID, t0.Add(3*time.Hour), celery.VisitEventful, nil)}), "within an hour of the clock")
	require.Equal(t, t0.Add(3*time.Hour), *f.stats("https://forge.example/b").LastVisit)
	vs = f.dispatch("https://forge.example/c")
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{
		result(vs[0].ID, t0.Add(3*time.Hour+time.Second), celery.VisitEventful, nil)}))
	require.Nil(t, f.stats("https://forge.example/c").LastVisit, "beyond an hour of the clock")
	require.Equal(t, 2.0, testutil.ToFloat64(f.m.results.WithLabelValues("git", "unreadable")))
}

func TestTaskResultWinsOverTaskSucceeded(t *testing.T) {
	f := newFixture(t)
	vs := f.dispatch("https://forge.example/a")
	at := t0.Add(time.Hour)
	succeeded := celery.Event{Type: celery.TypeSucceeded, UUID: vs[0].ID, Timestamp: at.Add(time.Second),
		Result: "{'status': 'eventful'}"}
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{succeeded, result(vs[0].ID, at, celery.VisitNotFound, nil)}))
	s := f.stats("https://forge.example/a")
	require.Equal(t, revisit.VisitNotFound, *s.LastVisitStatus)
	require.Equal(t, at, *s.LastVisit)
}

func TestTaskSucceededAndFailedAreUnderstood(t *testing.T) {
	f := newFixture(t)
	vs := f.dispatch("https://forge.example/a", "https://forge.example/b")
	at := t0.Add(time.Hour)
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{
		{Type: celery.TypeSucceeded, UUID: vs[0].ID, Timestamp: at, Result: "{'status': 'uneventful'}"},
		{Type: celery.TypeFailed, UUID: vs[1].ID, Timestamp: at, Exception: "RuntimeError('boom')"},
	}))
	require.Equal(t, revisit.VisitSuccessful, *f.stats(vs[0].Origin.URL).LastVisitStatus)
	require.Equal(t, revisit.VisitFailed, *f.stats(vs[1].Origin.URL).LastVisitStatus)
	require.Zero(t, f.inFlight())
}

func TestRedeliveredBatchChangesNothing(t *testing.T) {
	f := newFixture(t)
	vs := f.dispatch("https://forge.example/a")
	batch := []celery.Event{result(vs[0].ID, t0.Add(time.Hour), celery.VisitEventful, nil)}
	require.NoError(t, f.l.Handle(f.ctx, batch))
	before := f.stats(vs[0].Origin.URL)
	require.NoError(t, f.l.Handle(f.ctx, batch))
	require.Equal(t, before, f.stats(vs[0].Origin.URL))
	require.Equal(t, 1.0, testutil.ToFloat64(f.m.unknown), "the second time its visit is closed: an unknown result")
}

func TestThreeFailuresDisableTheOrigin(t *testing.T) {
	f := newFixture(t)
	url := "https://forge.example/gone"
	for i := range 3 {
		vs := f.dispatch(url)
		require.NoError(t, f.l.Handle(f.ctx, []celery.Event{
			result(vs[0].ID, t0.Add(time.Duration(i+1)*time.Hour), celery.VisitNotFound, nil)}))
	}
	page, err := f.st.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{URLs: []string{url}, Enabled: revisit.AnyEnabled})
	require.NoError(t, err)
	require.Len(t, page.Origins, 1)
	require.False(t, page.Origins[0].Enabled)
	require.Equal(t, 3, f.stats(url).SuccessiveVisits)
}

func TestOtherEventsGoToTheRunHandler(t *testing.T) {
	f := newFixture(t)
	vs := f.dispatch("https://forge.example/a")
	started := celery.Event{Type: celery.TypeStarted, UUID: vs[0].ID, Timestamp: t0}
	run := celery.Event{Type: celery.TypeSucceeded, UUID: "7d5a3d2e-8c8e-4f43-9a3b-2d1a0c0f0b11", Timestamp: t0, Result: "True"}
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{started, run, result(vs[0].ID, t0.Add(time.Hour), celery.VisitFailed, nil)}))
	require.Len(t, f.runs, 1)
	require.Equal(t, []celery.Event{run}, f.runs[0], "the visit's own events stay with the visit")
	require.Equal(t, 1.0, testutil.ToFloat64(f.m.unknown))
}

func TestUnknownResultWithItsOriginIsKept(t *testing.T) {
	f := newFixture(t)
	url := "https://forge.example/elsewhere"
	f.dispatch("https://forge.example/known") // a listed origin and a lister exist
	ev := celery.Event{Type: celery.TypeResult, UUID: "9c1b7b6e-2a55-4a47-8a63-1f4c2f7b0d11", Timestamp: t0,
		VisitResult: &celery.VisitResult{Status: celery.VisitNotFound,
			Raw: map[string]any{"status": "not_found", "origin": url, "visit_type": "git"}}}
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{ev}))
	require.Equal(t, revisit.VisitNotFound, *f.stats(url).LastVisitStatus, "kept in the stats")
	require.Equal(t, 1.0, testutil.ToFloat64(f.m.unknown), "and counted")
}

// Results of the embedded broker name their origin: a visit published by
// another scheduler (no in-flight record) still updates the stats.
func TestEmbeddedResultOfAnUnknownVisitIsKept(t *testing.T) {
	f := newFixture(t)
	const task = "swh.loader.git.tasks.UpdateGitRepository"
	require.NoError(t, f.st.TaskTypeCreate(f.ctx, revisit.TaskType{Type: "load-git", BackendName: task}))
	b := embedded.New(f.st, embedded.Config{})
	t.Cleanup(func() { b.Close() })
	url := "https://forge.example/sent-by-hand"
	msg, err := celery.NewMessage(celery.Task{Name: task, ID: "3f0e6a3c-5f0e-4b1a-9f2e-6d8c1b2a4e77",
		Kwargs: map[string]any{"url": url}, Origin: "test@host"})
	require.NoError(t, err)
	pubs, err := b.Publish(f.ctx, "git", []celery.Message{msg})
	require.NoError(t, err)
	require.Equal(t, broker.Confirmed, pubs[0].Outcome)
	leased, err := b.Lease(f.ctx, embedded.LeaseParams{Queue: "git", Worker: "w", Max: 1, LeaseFor: time.Minute})
	require.NoError(t, err)
	require.Len(t, leased, 1)
	_, err = b.Complete(f.ctx, embedded.Result{ID: leased[0].ID, Worker: "w", Status: celery.VisitEventful,
		Snapshot: "0123456789abcdef0123456789abcdef01234567"})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- b.Events(ctx, f.l.Handle) }()
	require.Eventually(t, func() bool {
		got, err := f.st.VisitStatsGet(f.ctx, []revisit.OriginKey{{URL: url, VisitType: "git"}})
		return err == nil && len(got) == 1 && got[0].LastVisitStatus != nil
	}, 10*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, revisit.VisitSuccessful, *f.stats(url).LastVisitStatus)
}

// A result that names its visit closes that visit only: not the later
// visit of its origin still in flight, which a result without id, dated
// after it was scheduled, would close. Neither does a result of an unknown
// visit that names its origin.
func TestAResultClosesItsOwnVisitOnly(t *testing.T) {
	f := newFixture(t)
	url := "https://forge.example/a"
	first := f.dispatch(url)
	second := f.dispatch(url) // the origin dispatched again, as once the first visit is lost
	now := time.Now().UTC()
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{result(first[0].ID, now, celery.VisitEventful, nil)}))
	require.Equal(t, now.Truncate(time.Microsecond), *f.stats(url).LastVisit)
	got, err := f.st.VisitsGet(f.ctx, []string{first[0].ID, second[0].ID})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, second[0].ID, got[0].ID, "the origin's other visit is still in flight")

	orphan := celery.Event{Type: celery.TypeResult, UUID: "9c1b7b6e-2a55-4a47-8a63-1f4c2f7b0d11", Timestamp: now.Add(time.Second),
		VisitResult: &celery.VisitResult{Status: celery.VisitUneventful,
			Raw: map[string]any{"status": "uneventful", "origin": url, "visit_type": "git"}}}
	require.NoError(t, f.l.Handle(f.ctx, []celery.Event{orphan}))
	require.Equal(t, now.Add(time.Second).Truncate(time.Microsecond), *f.stats(url).LastVisit, "the unknown visit's result is folded")
	require.Equal(t, int64(1), f.inFlight(), "and closes no visit of its origin")
}
