package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/history"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

// TestClientMatchesStore checks that the client returns what the store
// behind the server holds, and the store's error codes.
func TestClientMatchesStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	srv := httptest.NewServer(api.New(api.Config{Store: st,
		Tokens: []config.Token{{Name: "w", Token: "write-token-0123456789", Scope: "write"}}}))
	defer srv.Close()

	_, err = client.New("ftp://x", "", nil)
	require.Error(t, err)
	anon, err := client.New(srv.URL, "", nil)
	require.NoError(t, err)
	_, err = anon.TaskTypeList(ctx)
	require.Equal(t, revisit.ErrorCode("unauthorized"), revisit.Code(err))

	c, err := client.New(srv.URL+"/", "write-token-0123456789", srv.Client())
	require.NoError(t, err)
	tt := revisit.TaskType{Type: "load-git", BackendName: "b", DefaultInterval: 64 * 24 * time.Hour, MaxQueueLength: 7}
	require.NoError(t, c.TaskTypeCreate(ctx, tt))
	require.ErrorIs(t, c.TaskTypeCreate(ctx, tt), revisit.ErrConflict)
	got, err := c.TaskTypeGet(ctx, "load-git")
	require.NoError(t, err)
	require.Equal(t, tt, got)
	_, err = c.TaskTypeGet(ctx, "load-hg")
	require.ErrorIs(t, err, revisit.ErrNotFound)

	l, err := c.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	byName, err := c.ListerGet(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	require.Equal(t, l.ID, byName.ID)
	_, err = c.ListerGet(ctx, "gitlab", "other")
	require.ErrorIs(t, err, revisit.ErrNotFound)
	ls, err := c.ListerGetByIDs(ctx, []uuid.UUID{l.ID, uuid.New()})
	require.NoError(t, err)
	require.Len(t, ls, 1)

	lu := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := c.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: l.ID, URL: "https://gitlab.com/a",
		VisitType: "git", Enabled: true, LastUpdate: &lu, ExtraLoaderArguments: map[string]any{"k": "v"}}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Inserted)
	page, err := c.ListedOriginsGet(ctx, revisit.ListedOriginFilter{ListerID: &l.ID})
	require.NoError(t, err)
	want, err := st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{ListerID: &l.ID})
	require.NoError(t, err)
	require.Equal(t, want, page)

	peek, err := c.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 5,
		Policy: revisit.NeverVisitedOldestUpdateFirst, DryRun: true})
	require.NoError(t, err)
	require.Len(t, peek, 1)
	_, err = c.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 5, Policy: "nope"})
	require.ErrorIs(t, err, revisit.ErrUnknownPolicy)

	ms, err := c.MetricsUpdate(ctx, nil, time.Time{})
	require.NoError(t, err)
	require.Len(t, ms, 1)
	stored, err := c.MetricsGet(ctx, &l.ID, "git")
	require.NoError(t, err)
	require.Equal(t, ms, stored)
	pos, err := c.QueuePositionGet(ctx, "git")
	require.NoError(t, err)
	require.Zero(t, pos)
	grabbed, err := c.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 5,
		Policy: revisit.NeverVisitedOldestUpdateFirst})
	require.NoError(t, err)
	require.Len(t, grabbed, 1)
	stats, err := c.VisitStatsGet(ctx, []revisit.OriginKey{{URL: "https://gitlab.com/a", VisitType: "git"}})
	require.NoError(t, err)
	require.Len(t, stats, 1)
	require.NotNil(t, stats[0].LastScheduled)
	qs, err := c.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	require.Nil(t, qs[0].Depth, "no broker: the depth is unknown")
}

// The console's tokens: a reader's and a writer's.
const (
	readToken  = "read-token-0123456789"
	writeToken = "write-token-0123456789"
)

// consoleServer is an API server over st with the embedded broker and a
// history, and its reader's and writer's clients.
type consoleServer struct {
	st             store.Store
	broker         *embedded.Broker
	history        *history.History
	reader, writer *client.Client
}

func newConsoleServer(t *testing.T, st store.Store) *consoleServer {
	t.Helper()
	b := embedded.New(st, embedded.Config{})
	hist := history.New(history.Config{Clock: time.Now})
	srv := httptest.NewServer(api.New(api.Config{Store: st, Broker: b, Queues: b, History: hist,
		Tokens: []config.Token{{Name: "reader", Token: readToken, Scope: "read"},
			{Name: "writer", Token: writeToken, Scope: "write"}}}))
	t.Cleanup(func() {
		srv.Close()
		b.Close()
	})
	cs := &consoleServer{st: st, broker: b, history: hist}
	var err error
	cs.reader, err = client.New(srv.URL, readToken, nil)
	require.NoError(t, err)
	cs.writer, err = client.New(srv.URL, writeToken, nil)
	require.NoError(t, err)
	return cs
}

// gitQueue is the queue of load-git's visits.
const gitQueue = "swh.loader.git.tasks.UpdateGitRepository"

// seedConsole records load-git, the lister github and three of its
// origins, r0 and r1 enabled and r2 disabled, and returns the lister.
func seedConsole(t *testing.T, st store.Store) revisit.Lister {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: gitQueue,
		DefaultInterval: 24 * time.Hour, MaxQueueLength: 10, NumRetries: 1}))
	l, err := st.ListerGetOrCreate(ctx, "github", "")
	require.NoError(t, err)
	var os []revisit.ListedOrigin
	for i := range 3 {
		os = append(os, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://github.com/o/r%d", i),
			VisitType: "git", Enabled: i < 2})
	}
	_, err = st.ListedOriginsRecord(ctx, os)
	require.NoError(t, err)
	return l
}

// requireSameJSON requires that got and want encode to the same JSON.
func requireSameJSON(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g))
}

// TestClientReadsWhatTheServerHolds checks the console's read routes: each
// method returns what the store, the broker or the history holds.
func TestClientReadsWhatTheServerHolds(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		cs := newConsoleServer(t, st)
		l := seedConsole(t, st)
		c := cs.reader

		for _, s := range []revisit.OriginSearch{
			{Query: "https://github.com/o/", Enabled: revisit.AnyEnabled},
			{Query: "o/r", Match: revisit.MatchSubstring, Enabled: revisit.OnlyDisabled},
			{Query: "https://github.com/", ListerID: &l.ID, VisitType: "git", Enabled: revisit.OnlyEnabled, Limit: 1},
		} {
			got, err := c.OriginsSearch(ctx, s)
			require.NoError(t, err)
			want, err := st.OriginsSearch(ctx, s)
			require.NoError(t, err)
			require.Equal(t, want, got, "%+v", s)
			require.NotEmpty(t, got.Origins)
		}
		other := uuid.New()
		_, err := c.OriginsSearch(ctx, revisit.OriginSearch{ListerID: &other})
		require.ErrorIs(t, err, revisit.ErrNotFound)
		_, err = c.OriginsSearch(ctx, revisit.OriginSearch{Query: "ab", Match: revisit.MatchSubstring})
		require.Equal(t, &revisit.Error{Code: revisit.CodeInvalid, Field: "q",
			Message: `a substring search needs at least 3 characters, got "ab"`}, err)

		key := revisit.OriginKey{URL: "https://github.com/o/r0", VisitType: "git"}
		detail, err := c.OriginDetail(ctx, key)
		require.NoError(t, err)
		want, err := api.LoadOriginDetail(ctx, st, key, detail.Now, api.DefaultCooldowns())
		require.NoError(t, err)
		requireSameJSON(t, want, detail)
		require.Len(t, detail.Listed, 1)
		require.Equal(t, "github", detail.Listed[0].Lister)
		_, err = c.OriginDetail(ctx, revisit.OriginKey{URL: "https://github.com/o/none", VisitType: "git"})
		require.ErrorIs(t, err, revisit.ErrNotFound)

		now := time.Now()
		cs.history.Add(history.Key{VisitType: "git", Series: history.Lost}, now.Add(-time.Minute), 4)
		hist, err := c.History(ctx, 3)
		require.NoError(t, err)
		requireSameJSON(t, cs.history.Window(3), hist)
		require.Len(t, hist.VisitTypes, 1)
		_, err = c.History(ctx, 1441)
		require.Equal(t, revisit.CodeInvalid, revisit.Code(err))

		// A visit sent, leased by a worker elsewhere, and another waiting.
		_, err = cs.writer.VisitNow(ctx, api.VisitNowRequest{URL: key.URL, VisitType: "git"})
		require.NoError(t, err)
		_, err = cs.writer.VisitNow(ctx, api.VisitNowRequest{URL: "https://github.com/o/r1", VisitType: "git"})
		require.NoError(t, err)
		_, err = cs.broker.Lease(ctx, embedded.LeaseParams{Queue: gitQueue, Worker: "w1", Max: 1, LeaseFor: time.Minute})
		require.NoError(t, err)
		leased, err := c.QueueMessages(ctx, revisit.QueueMessageFilter{Queue: gitQueue, Listing: revisit.QueueListLeased})
		require.NoError(t, err)
		require.Len(t, leased.Messages, 1)
		require.Equal(t, key.URL, leased.Messages[0].URL)
		require.Equal(t, "git", leased.Messages[0].VisitType)
		require.Equal(t, "w1", *leased.Messages[0].Worker)
		waiting, err := c.QueueMessages(ctx, revisit.QueueMessageFilter{Queue: gitQueue, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, "waiting", waiting.State)
		require.Len(t, waiting.Messages, 1)
		require.Equal(t, "https://github.com/o/r1", waiting.Messages[0].URL)
		_, err = c.QueueMessages(ctx, revisit.QueueMessageFilter{Queue: gitQueue, Listing: "done"})
		require.Equal(t, revisit.CodeInvalid, revisit.Code(err))

		ws, err := c.Workers(ctx)
		require.NoError(t, err)
		require.Len(t, ws.Workers, 1)
		require.Equal(t, "w1", ws.Workers[0].Name)
		require.False(t, ws.Workers[0].Seen, "it leased through the broker, not this server")
		require.Equal(t, map[string]int64{gitQueue: 1}, ws.Workers[0].LeasesHeld)

		bq, err := c.BrokerQueues(ctx)
		require.NoError(t, err)
		require.Equal(t, "embedded", bq.Broker)
		require.Len(t, bq.Queues, 1)
		require.Equal(t, gitQueue, bq.Queues[0].Queue)
		require.Equal(t, int64(1), *bq.Queues[0].Waiting)
		require.Equal(t, int64(1), *bq.Queues[0].Leased)

		tasks, err := st.TasksCreate(ctx, []revisit.NewTask{
			{Type: "load-git", NextRun: now, Policy: revisit.TaskOneshot, Priority: revisit.PriorityHigh,
				Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://a"}}},
			{Type: "load-git", NextRun: now, Policy: revisit.TaskRecurring,
				Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://b"}}}})
		require.NoError(t, err)
		_, err = st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{{TaskID: tasks[0].ID, BackendID: "m1"}})
		require.NoError(t, err)
		none := revisit.PriorityNone
		page, err := c.Tasks(ctx, revisit.TaskFilter{Priority: &none})
		require.NoError(t, err)
		require.Len(t, page.Tasks, 1)
		require.Equal(t, tasks[1].ID, page.Tasks[0].ID)
		page, err = c.Tasks(ctx, revisit.TaskFilter{Type: "load-git", Limit: 1})
		require.NoError(t, err)
		require.Len(t, page.Tasks, 1)
		require.NotEmpty(t, page.NextPageToken)
		_, err = c.Tasks(ctx, revisit.TaskFilter{IDs: []int64{1}})
		require.Equal(t, "ids", err.(*revisit.Error).Field)
		task, err := c.Task(ctx, tasks[0].ID)
		require.NoError(t, err)
		requireSameJSON(t, api.NewTask(tasks[0]), task.Task)
		require.Len(t, task.Runs, 1)
		require.Equal(t, "m1", task.Runs[0].BackendID)
		_, err = c.Task(ctx, 999)
		require.ErrorIs(t, err, revisit.ErrNotFound)
	})
}

// TestClientActionsChangeTheStore checks the console's actions: each
// changes the store, and a read token is refused with the server's error.
func TestClientActionsChangeTheStore(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		cs := newConsoleServer(t, st)
		l := seedConsole(t, st)
		c := cs.writer
		key := revisit.OriginKey{URL: "https://github.com/o/r0", VisitType: "git"}
		tasks, err := st.TasksCreate(ctx, []revisit.NewTask{
			{Type: "load-git", NextRun: time.Now(), Policy: revisit.TaskOneshot, Arguments: revisit.TaskArguments{Args: []any{1}}},
			{Type: "load-git", NextRun: time.Now(), Policy: revisit.TaskOneshot, Arguments: revisit.TaskArguments{Args: []any{2}}}})
		require.NoError(t, err)
		ids := []int64{tasks[0].ID, tasks[1].ID}

		refused := func(err error) {
			t.Helper()
			require.Equal(t, &revisit.Error{Code: "forbidden",
				Message: "token reader is read-only; this route needs a write token"}, err)
		}
		_, err = cs.reader.VisitNow(ctx, api.VisitNowRequest{URL: key.URL, VisitType: "git"})
		refused(err)
		_, err = cs.reader.ListedOriginsSetEnabled(ctx, key, nil, false)
		refused(err)
		_, err = cs.reader.ListedOriginsSetEnabled(ctx, key, nil, true)
		refused(err)
		_, err = cs.reader.VisitTypePauseSet(ctx, revisit.Pause{VisitType: "git"})
		refused(err)
		_, err = cs.reader.VisitTypePauseClear(ctx, "git")
		refused(err)
		_, err = cs.reader.VisitsExpire(ctx, "git", time.Time{})
		refused(err)
		refused(cs.reader.TasksSetStatus(ctx, ids, revisit.TaskDisabled))
		refused(cs.reader.TasksRespawn(ctx, ids, nil))
		_, err = cs.reader.MetricsUpdate(ctx, nil, time.Time{})
		refused(err)
		inFlight, err := st.VisitsOfOrigin(ctx, key)
		require.NoError(t, err)
		require.Empty(t, inFlight, "nothing changed")

		sent, err := c.VisitNow(ctx, api.VisitNowRequest{URL: key.URL, VisitType: "git"})
		require.NoError(t, err)
		require.Equal(t, gitQueue, sent.Queue)
		require.Equal(t, l.ID, sent.ListerID)
		inFlight, err = st.VisitsOfOrigin(ctx, key)
		require.NoError(t, err)
		require.Len(t, inFlight, 1)
		require.Equal(t, sent.ID, inFlight[0].ID)
		require.Equal(t, revisit.VisitSent, inFlight[0].State)
		_, err = c.VisitNow(ctx, api.VisitNowRequest{URL: key.URL, VisitType: "git"})
		require.ErrorIs(t, err, revisit.ErrConflict)
		require.Contains(t, err.Error(), api.VisitInFlightHint)
		_, err = c.VisitNow(ctx, api.VisitNowRequest{URL: key.URL, VisitType: "git", Force: true})
		require.NoError(t, err)
		lost, err := c.VisitsExpire(ctx, "git", time.Time{})
		require.NoError(t, err)
		require.Equal(t, 2, lost)
		inFlight, err = st.VisitsOfOrigin(ctx, key)
		require.NoError(t, err)
		require.Len(t, inFlight, 2)
		for _, v := range inFlight {
			require.Equal(t, revisit.VisitLost, v.State)
		}
		_, err = c.VisitsExpire(ctx, "hg", time.Time{})
		require.ErrorIs(t, err, revisit.ErrNotFound)

		enabled := func() []bool {
			t.Helper()
			page, err := st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{URLs: []string{key.URL}, Enabled: revisit.AnyEnabled})
			require.NoError(t, err)
			out := make([]bool, len(page.Origins))
			for i, o := range page.Origins {
				out[i] = o.Enabled
			}
			return out
		}
		n, err := c.ListedOriginsSetEnabled(ctx, key, &l.ID, false)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, []bool{false}, enabled())
		n, err = c.ListedOriginsSetEnabled(ctx, key, nil, false)
		require.NoError(t, err)
		require.Zero(t, n, "disabled already")
		n, err = c.ListedOriginsSetEnabled(ctx, key, nil, true)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, []bool{true}, enabled())
		_, err = c.ListedOriginsSetEnabled(ctx, revisit.OriginKey{URL: "https://github.com/o/none", VisitType: "git"}, nil, true)
		require.ErrorIs(t, err, revisit.ErrNotFound)

		p, err := c.VisitTypePauseSet(ctx, revisit.Pause{VisitType: "git", By: "ignored"})
		require.NoError(t, err)
		require.Equal(t, "writer", p.By)
		require.WithinDuration(t, time.Now(), p.At, time.Minute)
		pauses, err := st.VisitTypePauseList(ctx)
		require.NoError(t, err)
		require.Len(t, pauses, 1)
		require.Equal(t, p.By, pauses[0].By)
		require.True(t, p.At.Equal(pauses[0].At))
		was, err := c.VisitTypePauseClear(ctx, "git")
		require.NoError(t, err)
		require.True(t, was)
		pauses, err = st.VisitTypePauseList(ctx)
		require.NoError(t, err)
		require.Empty(t, pauses)
		was, err = c.VisitTypePauseClear(ctx, "git")
		require.NoError(t, err)
		require.False(t, was)

		status := func() []revisit.TaskStatus {
			t.Helper()
			page, err := st.TasksGet(ctx, revisit.TaskFilter{IDs: ids})
			require.NoError(t, err)
			out := make([]revisit.TaskStatus, len(page.Tasks))
			for i, task := range page.Tasks {
				out[i] = task.Status
			}
			return out
		}
		require.NoError(t, c.TasksSetStatus(ctx, ids, revisit.TaskDisabled))
		require.Equal(t, []revisit.TaskStatus{revisit.TaskDisabled, revisit.TaskDisabled}, status())
		require.NoError(t, c.TasksRespawn(ctx, ids[:1], nil))
		require.Equal(t, []revisit.TaskStatus{revisit.TaskNextRunNotScheduled, revisit.TaskDisabled}, status())
		err = c.TasksRespawn(ctx, []int64{ids[1], ids[0]}, nil)
		require.Equal(t, &revisit.Error{Code: revisit.CodeConflict, Message: fmt.Sprintf("task %d is "+
			"next_run_not_scheduled: only a disabled or completed task is respawned (the 1 task(s) before it were changed)",
			ids[0])}, err)
		require.Equal(t, []revisit.TaskStatus{revisit.TaskNextRunNotScheduled, revisit.TaskNextRunNotScheduled}, status())
		next := time.Now()
		err = c.TasksRespawn(ctx, ids, &next)
		require.ErrorIs(t, err, revisit.ErrInvalid)
		require.Equal(t, "next_run", err.(*revisit.Error).Field)
		err = c.TasksSetStatus(ctx, ids, revisit.TaskCompleted)
		require.ErrorIs(t, err, revisit.ErrInvalid)
		require.Equal(t, "status", err.(*revisit.Error).Field)
		require.Equal(t, []revisit.TaskStatus{revisit.TaskNextRunNotScheduled, revisit.TaskNextRunNotScheduled}, status(),
			"nothing changed")

		// The actions done were recorded, newest first; a reader lists them.
		var listed []revisit.OperatorAction
		f := revisit.OperatorActionFilter{By: "writer", Limit: 5}
		for {
			page, err := cs.reader.OperatorActionsList(ctx, f)
			require.NoError(t, err)
			want, err := st.OperatorActionsList(ctx, f)
			require.NoError(t, err)
			require.Equal(t, want, page)
			listed = append(listed, page.Actions...)
			if f.PageToken = page.NextPageToken; f.PageToken == "" {
				break
			}
		}
		names := make([]string, len(listed))
		for i, a := range listed {
			names[i] = a.Action + " " + a.Target
		}
		origin, task := revisit.OriginTarget(key), revisit.TaskTarget
		require.Equal(t, []string{"respawn_task " + task(ids[1]), "respawn_task " + task(ids[0]),
			"disable_task " + task(ids[1]), "disable_task " + task(ids[0]), "resume git", "resume git", "pause git",
			"enable_origin " + origin, "disable_origin " + origin, "disable_origin " + origin, "requeue_lost git",
			"visit_now " + origin, "visit_now " + origin}, names, "the refused ones not recorded")
		none, err := cs.reader.OperatorActionsList(ctx, revisit.OperatorActionFilter{By: "reader"})
		require.NoError(t, err)
		require.Empty(t, none.Actions)
		_, err = cs.reader.OperatorActionsList(ctx, revisit.OperatorActionFilter{PageToken: "nope"})
		require.ErrorIs(t, err, revisit.ErrInvalid)
		require.Equal(t, "page_token", err.(*revisit.Error).Field)
	})
}
