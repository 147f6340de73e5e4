package swhimport

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/netproxy"
	"github.com/revisit-sched/revisit/internal/testkit/swhcall"
	"github.com/revisit-sched/revisit/internal/testkit/swhdb"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhrpc"
	"github.com/revisit-sched/revisit/swhwire"
)

// generated is how many more listed origins the tests' source holds.
const generated = 2500

func TestImportBringsEverythingOver(t *testing.T) {
	from := swhdb.New(t)
	swhdb.Fill(t, from, generated)
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		state, err := Run(ctx, Config{From: from, Target: st, Batch: 400})
		require.NoError(t, err)
		for _, table := range Tables {
			require.True(t, state.Tables[table].Done, table)
		}
		requireSame(t, from, st)

		again, err := Run(ctx, Config{From: from, Target: st})
		require.NoError(t, err, "a complete import run again")
		require.Equal(t, state.Tables[TableListedOrigins].Rows, again.Tables[TableListedOrigins].Rows)
		requireSame(t, from, st)
		requireRPCAnswersAsSource(t, st)
	})
}

func TestImportContinuesWhereItStopped(t *testing.T) {
	from := swhdb.New(t)
	swhdb.Fill(t, from, generated)
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		stateFile := filepath.Join(t.TempDir(), "import.json")
		stops := 0
		for run := 0; ; run++ {
			require.Less(t, run, 50, "the import never finishes")
			ctx, cancel := context.WithCancel(context.Background())
			batches := 0
			_, err := Run(ctx, Config{From: from, Target: st, Batch: 300, StateFile: stateFile,
				Progress: func(TableProgress) {
					// Each run stops after a few batches, some mid-table.
					if batches++; batches == 1+run%4 {
						cancel()
					}
				}})
			cancel()
			if err == nil {
				break
			}
			var stopped *Stopped
			require.ErrorAs(t, err, &stopped)
			require.ErrorIs(t, err, context.Canceled)
			require.Contains(t, err.Error(), "stopped in "+stopped.Table)
			stops++
		}
		require.Greater(t, stops, 5)
		state, err := LoadState(stateFile)
		require.NoError(t, err)
		require.EqualValues(t, generated+6, state.Tables[TableListedOrigins].Rows, "each origin copied once")
		requireSame(t, from, st)
	})
}

func TestImportContinuesAfterLosingTheSource(t *testing.T) {
	from := swhdb.New(t)
	swhdb.Fill(t, from, generated)
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		u, err := url.Parse(from)
		require.NoError(t, err)
		proxy := netproxy.Start(t, u.Host)
		u.Host = proxy.Addr()
		through := u.String()
		stateFile := filepath.Join(t.TempDir(), "import.json")
		// Cut at the first batch of origins written: the reader fetches a
		// few batches ahead of the writers, and 26 batches of 100 leave
		// many to fetch.
		batches := 0
		_, err = Run(context.Background(), Config{From: through, Target: st, Batch: 100, StateFile: stateFile,
			Progress: func(p TableProgress) {
				if p.Table != TableListedOrigins {
					return
				}
				if batches++; batches == 1 {
					proxy.Down()
				}
			}})
		var stopped *Stopped
		require.ErrorAs(t, err, &stopped)
		require.Equal(t, TableListedOrigins, stopped.Table)
		require.NotEmpty(t, stopped.After, "it says after which row")
		proxy.Up()
		_, err = Run(context.Background(), Config{From: through, Target: st, Batch: 300, StateFile: stateFile})
		require.NoError(t, err)
		requireSame(t, from, st)
	})
}

func TestImportRefuses(t *testing.T) {
	ctx := context.Background()
	st := teststore.SQLite(t)
	_, err := Run(ctx, Config{From: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", Target: st})
	require.ErrorContains(t, err, "the source database")

	from := swhdb.New(t)
	conn, err := pgx.Connect(ctx, from)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "INSERT INTO dbversion VALUES (39, now(), 'newer')")
	require.NoError(t, err)
	_, err = Run(ctx, Config{From: from, Target: st})
	require.ErrorContains(t, err, "version 39; this import reads version 38")
	_, err = conn.Exec(ctx, "DELETE FROM dbversion WHERE version = 39")
	require.NoError(t, err)
	conn.Close(ctx)

	swhdb.Fill(t, from, 0)
	_, err = st.ListerGetOrCreate(ctx, "github", "github")
	require.NoError(t, err)
	_, err = Run(ctx, Config{From: from, Target: st})
	require.ErrorContains(t, err, "the target has lister github/github with id")
	types, err := st.TaskTypeList(ctx)
	require.NoError(t, err)
	require.Empty(t, types, "nothing written")
}

// requireSame checks that the store holds what the source holds, table by
// table, every column.
func requireSame(t *testing.T, from string, st store.Store) {
	t.Helper()
	ctx := context.Background()
	src, err := connect(ctx, from)
	require.NoError(t, err)
	defer src.close()

	wantTypes, err := src.taskTypes(ctx)
	require.NoError(t, err)
	gotTypes, err := st.TaskTypeList(ctx)
	require.NoError(t, err)
	require.Equal(t, wantTypes, gotTypes)

	wantListers, err := src.listers(ctx)
	require.NoError(t, err)
	gotListers, err := st.ListerList(ctx)
	require.NoError(t, err)
	require.Len(t, gotListers, len(wantListers))
	byID := map[uuid.UUID]revisit.Lister{}
	for _, l := range gotListers {
		byID[l.ID] = l
	}
	for _, w := range wantListers {
		g := byID[w.ID]
		require.Equal(t, w.Name, g.Name)
		require.Equal(t, w.InstanceName, g.InstanceName)
		require.True(t, w.Created.Equal(g.Created) && w.Updated.Equal(g.Updated), "lister %s: times", w.Name)
		require.JSONEq(t, string(w.CurrentState), string(g.CurrentState))
		require.Equal(t, w.FirstVisitsQueuePrefix, g.FirstVisitsQueuePrefix)
		requireTimes(t, w.LastListingFinishedAt, g.LastListingFinishedAt)
		requireTimes(t, w.FirstVisitsScheduledAt, g.FirstVisitsScheduledAt)
	}

	wantOrigins, err := src.listedOrigins(ctx, nil, time.Time{}).all()
	require.NoError(t, err)
	var gotOrigins []revisit.ListedOrigin
	f := revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled, Limit: revisit.PageSize.Max}
	for {
		page, err := st.ListedOriginsGet(ctx, f)
		require.NoError(t, err)
		gotOrigins = append(gotOrigins, page.Origins...)
		if page.NextPageToken == "" {
			break
		}
		f.PageToken = page.NextPageToken
	}
	require.Len(t, gotOrigins, len(wantOrigins))
	got := map[originKey]revisit.ListedOrigin{}
	for _, o := range gotOrigins {
		got[originKey{o.ListerID, o.URL, o.VisitType}] = o
	}
	for _, w := range wantOrigins {
		g, ok := got[originKey{w.ListerID, w.URL, w.VisitType}]
		require.True(t, ok, "origin %s of %s", w.URL, w.ListerID)
		require.True(t, w.FirstSeen.Equal(g.FirstSeen) && w.LastSeen.Equal(g.LastSeen), "%s: seen", w.URL)
		requireTimes(t, w.LastUpdate, g.LastUpdate)
		w.FirstSeen, w.LastSeen, w.LastUpdate = g.FirstSeen, g.LastSeen, g.LastUpdate
		if len(w.ExtraLoaderArguments) == 0 && len(g.ExtraLoaderArguments) == 0 {
			w.ExtraLoaderArguments = g.ExtraLoaderArguments
		}
		require.Equal(t, w, g)
	}

	wantStats, err := src.visitStats(ctx, nil, time.Time{}).all()
	require.NoError(t, err)
	keys := make([]revisit.OriginKey, len(wantStats))
	for i, s := range wantStats {
		keys[i] = s.Key()
	}
	gotStats, err := st.VisitStatsGet(ctx, keys)
	require.NoError(t, err)
	require.Len(t, gotStats, len(wantStats))
	byKey := map[revisit.OriginKey]revisit.VisitStats{}
	for _, s := range gotStats {
		byKey[s.Key()] = s
	}
	for _, w := range wantStats {
		g := byKey[w.Key()]
		requireTimes(t, w.LastSuccessful, g.LastSuccessful)
		requireTimes(t, w.LastVisit, g.LastVisit)
		requireTimes(t, w.LastScheduled, g.LastScheduled)
		require.Equal(t, w.LastVisitStatus, g.LastVisitStatus)
		require.Equal(t, w.LastSnapshot, g.LastSnapshot)
		require.Equal(t, w.NextVisitQueuePosition, g.NextVisitQueuePosition)
		require.Equal(t, w.NextPositionOffset, g.NextPositionOffset)
		require.Equal(t, w.SuccessiveVisits, g.SuccessiveVisits)
	}

	wantPositions, err := src.queuePositions(ctx)
	require.NoError(t, err)
	gotPositions, err := st.QueuePositions(ctx)
	require.NoError(t, err)
	require.Equal(t, wantPositions, gotPositions)

	wantTasks, err := src.tasks(ctx, 0, time.Time{}, 0).all()
	require.NoError(t, err)
	page, err := st.TasksGet(ctx, revisit.TaskFilter{})
	require.NoError(t, err)
	require.Len(t, page.Tasks, len(wantTasks))
	for i, w := range wantTasks {
		g := page.Tasks[i]
		require.True(t, w.NextRun.Equal(g.NextRun))
		w.NextRun = g.NextRun
		require.Equal(t, w, g)
	}
	ids := make([]int64, len(wantTasks))
	for i, tk := range wantTasks {
		ids[i] = tk.ID
	}
	wantRuns, err := src.taskRuns(ctx, 0, time.Time{}, time.Time{}).all()
	require.NoError(t, err)
	gotRuns, err := st.TaskRunsGet(ctx, ids)
	require.NoError(t, err)
	require.Len(t, gotRuns, len(wantRuns))
	runs := map[int64]revisit.TaskRun{}
	for _, r := range gotRuns {
		runs[r.ID] = r
	}
	for _, w := range wantRuns {
		g := runs[w.ID]
		requireTimes(t, w.Scheduled, g.Scheduled)
		requireTimes(t, w.Started, g.Started)
		requireTimes(t, w.Ended, g.Ended)
		require.Equal(t, w.TaskID, g.TaskID)
		require.Equal(t, w.BackendID, g.BackendID)
		require.Equal(t, w.Status, g.Status)
		require.Equal(t, w.Metadata, g.Metadata)
	}
}

func requireTimes(t *testing.T, want, got *time.Time) {
	t.Helper()
	require.Equal(t, want == nil, got == nil, "want %v, got %v", want, got)
	if want != nil {
		require.True(t, want.Equal(*got), "want %v, got %v", want, got)
	}
}

// requireRPCAnswersAsSource checks, through the Software Heritage RPC over
// the store, what a lister sees after the switch: its state and update
// token as upstream held them, the origins of two listers, any URL text.
func requireRPCAnswersAsSource(t *testing.T, st store.Store) {
	t.Helper()
	srv := httptest.NewServer(swhrpc.New(swhrpc.Config{Store: st}))
	defer srv.Close()
	call := func(path string, params swhwire.Map) any { return swhcall.Call(t, srv.URL, path, params) }
	field := func(v any, name string) any {
		f, _ := v.(swhwire.Model).Fields.Get(name)
		return f
	}
	gh := call("lister/get", swhwire.Map{{Key: "name", Value: "github"}, {Key: "instance_name", Value: "github"}})
	require.Equal(t, time.Date(2026, 11, 1, 10, 0, 0, 1000, time.UTC), field(gh, "updated"), "the update token, to the µs")
	state, err := json.Marshal(toJSON(field(gh, "current_state")))
	require.NoError(t, err)
	require.JSONEq(t, `{"last_seen_id": 123456789, "nested": {"ünïcode": "✓ 日本", "list": [1, 2.5, null, true]}}`, string(state))

	updated := call("lister/update", swhwire.Map{{Key: "lister", Value: gh}})
	require.True(t, field(updated, "updated").(time.Time).After(field(gh, "updated").(time.Time)),
		"the lister updates with the token it had")

	rows := call("origins/grab_next", swhwire.Map{{Key: "visit_type", Value: "git"}, {Key: "count", Value: int64(10000)},
		{Key: "policy", Value: "oldest_scheduled_first"}, {Key: "dry_run", Value: true}}).([]any)
	shared := 0
	for _, r := range rows {
		if field(r, "url") == "https://github.com/o/shared" {
			shared++
		}
	}
	require.Equal(t, 2, shared, "both listers' rows of the shared origin")
	stats := call("visit_stats/get", swhwire.Map{{Key: "ids", Value: []any{[]any{"foo", "git"}}}}).([]any)
	require.Len(t, stats, 1)
	require.Equal(t, swhwire.VisitNotFound, field(stats[0], "last_visit_status"))
}

// toJSON is a decoded msgpack value as encoding/json would hold it.
func toJSON(v any) any {
	switch v := v.(type) {
	case swhwire.Map:
		out := map[string]any{}
		for _, p := range v {
			out[p.Key.(string)] = toJSON(p.Value)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toJSON(e)
		}
		return out
	}
	return v
}

func TestVerify(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		from := swhdb.New(t) // a source of its own: this test writes to it
		swhdb.Fill(t, from, generated)
		ctx := context.Background()
		_, err := Run(ctx, Config{From: from, Target: st})
		require.NoError(t, err)
		checked, err := Verify(ctx, from, st, time.Time{})
		require.NoError(t, err)
		require.Len(t, checked, len(Tables))
		for i, c := range checked {
			require.Equal(t, Tables[i], c.Table)
			require.Zero(t, c.Differing, "%s: %v", c.Table, c.First)
			require.Equal(t, c.Source, c.Target, c.Table)
			require.NotZero(t, c.Source, c.Table)
		}
		require.EqualValues(t, generated+6, checked[slices.Index(Tables, TableListedOrigins)].Source)

		// Change the store: a lister's state, an origin disabled, a task
		// respawned; and the source: a new origin.
		gh, err := st.ListerGet(ctx, "github", "github")
		require.NoError(t, err)
		gh.CurrentState = json.RawMessage(`{"moved": true}`)
		_, err = st.ListerUpdate(ctx, gh)
		require.NoError(t, err)
		_, err = st.ListedOriginsSetEnabled(ctx, revisit.OriginKey{URL: "foo", VisitType: "git"}, nil, false)
		require.NoError(t, err)
		require.NoError(t, st.TasksRespawn(ctx, []int64{12}, nil))
		conn, err := pgx.Connect(ctx, from)
		require.NoError(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `INSERT INTO listed_origins VALUES ($1, 'https://new.example/r', 'git', '{}', true, now(), now())`,
			swhdb.Mirror)
		require.NoError(t, err)

		checked, err = Verify(ctx, from, st, time.Time{})
		require.NoError(t, err)
		differing := map[string][]string{}
		for _, c := range checked {
			if c.Differing > 0 {
				differing[c.Table] = c.First
			}
		}
		require.Equal(t, map[string][]string{
			TableListers:       {swhdb.GitHub},
			TableListedOrigins: {swhdb.GitLab + " foo", swhdb.Mirror + " https://new.example/r"},
			TableTasks:         {"12"},
		}, differing)
	})
}

func TestCatchUpCopiesWhatChanged(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		from := swhdb.New(t) // a source of its own: this test writes to it
		swhdb.Fill(t, from, generated)
		ctx := context.Background()
		stateFile := filepath.Join(t.TempDir(), "import.json")
		_, err := Run(ctx, Config{From: from, Target: st, StateFile: stateFile, CatchUp: true})
		require.ErrorContains(t, err, "a catch-up follows a complete import")
		// Upstream goes on during the copy: a listing, a lister's new
		// state, a result, a task run.
		conn, err := pgx.Connect(ctx, from)
		require.NoError(t, err)
		defer conn.Close(ctx)
		writes := []string{
			`INSERT INTO listed_origins VALUES ('` + swhdb.Mirror + `', 'https://new.example/r', 'git', '{}', true, now(), now())`,
			`UPDATE listed_origins SET last_seen = now(), enabled = false WHERE url = 'https://github.com/gen/r0000007'`,
			`UPDATE listers SET current_state = '{"page": 8}', updated = now() WHERE name = 'mirror'`,
			`UPDATE origin_visit_stats SET last_visit = now(), last_visit_status = 'failed' WHERE url = 'foo'`,
			`UPDATE task SET status = 'next_run_scheduled' WHERE id = 11`,
			`INSERT INTO task_run (task, backend_id, scheduled, status) VALUES (11, 'celery-new', now(), 'scheduled')`,
			`UPDATE task_run SET started = now(), status = 'started' WHERE id = 105`,
		}
		wrote := false
		first, err := Run(ctx, Config{From: from, Target: st, StateFile: stateFile, Batch: 500,
			Progress: func(p TableProgress) {
				// The writers' batches end in any order: the progress
				// counts rows by the batches written in order, so that
				// the first count need not be one batch's.
				if p.Table == TableListedOrigins && p.Rows > 0 && !p.Done && !wrote {
					wrote = true
					for _, sql := range writes {
						_, err := conn.Exec(ctx, sql)
						require.NoError(t, err, sql)
					}
				}
			}})
		require.NoError(t, err)
		checked, err := Verify(ctx, from, st, time.Time{})
		require.NoError(t, err)
		differing := 0
		for _, c := range checked {
			differing += int(c.Differing)
		}
		require.Positive(t, differing, "the copy missed what changed behind it")

		caught, err := Run(ctx, Config{From: from, Target: st, StateFile: stateFile, CatchUp: true})
		require.NoError(t, err)
		require.True(t, caught.Since.Before(caught.Started))
		require.Equal(t, first.Started.Add(-CatchUpMargin), caught.Since)
		require.EqualValues(t, 2, caught.Tables[TableListedOrigins].Rows, "only the origins listed since")
		require.EqualValues(t, 1, caught.Tables[TableVisitStats].Rows)
		require.EqualValues(t, 2, caught.Tables[TableTaskRuns].Rows)
		checked, err = Verify(ctx, from, st, time.Time{})
		require.NoError(t, err)
		for _, c := range checked {
			require.Zero(t, c.Differing, "%s: %v", c.Table, c.First)
		}
	})
}
