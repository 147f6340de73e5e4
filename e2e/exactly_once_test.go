package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
	"github.com/revisit-sched/revisit/worker"
)

// embeddedQueue is the queue of load-git in the embedded broker's tests.
const embeddedQueue = "swh.loader.git.tasks.UpdateGitRepository"

// TestKillNineEmbeddedExactlyOnce kills revisit schedule-recurrent on the
// embedded broker with SIGKILL at random points of its rounds, restarts it,
// then runs revisit serve with a Go worker visiting every message. The
// queue lives in the store, so a message is queued in the transaction that
// records its visit sent: in the end every origin got exactly one message,
// every result closed its visit (no record left in flight) and none was of
// an unknown visit.
func TestKillNineEmbeddedExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			st, storeURL := embeddedStore(t, engine)
			w := newWorld(t, st, embeddedQueue, 100_000)
			origins := names("o", 6000)
			w.addNeverVisited(origins...)
			cfg := orchestratorConfig(t, storeURL, "embedded", "50ms", "300ms")

			const kills = 8
			for range kills {
				p := startRevisit(t, "--config", cfg, "schedule-recurrent", "--results=false")
				celerytest.WaitFor(t, 30*time.Second, "the orchestrator driving git", func() bool {
					return strings.Contains(p.stderr.String(), "driving visit type")
				})
				time.Sleep(time.Duration(rand.IntN(400)) * time.Millisecond)
				p.kill9(t)
			}
			t.Logf("%d kills: %+v in flight", kills, w.inFlight())

			origins = append(origins, killUnrecorded(t, w, engine, storeURL, cfg)...)
			t.Logf("killed while visits could not be recorded sent: %+v in flight", w.inFlight())

			base := startServeProc(t, cfg)
			visited := visitAll(t, base)
			celerytest.WaitFor(t, 2*time.Minute, "every origin visited, every visit closed", func() bool {
				return visited.urls() == len(origins) && w.inFlight() == revisit.VisitCounts{VisitType: "git"}
			})
			for _, n := range origins {
				require.Equal(t, 1, visited.count(url(n)), "%s: messages", n)
			}
			require.Zero(t, metricValue(t, base, "revisit_results_unknown_total"), "results of unknown visits")
			require.Equal(t, float64(len(origins)),
				metricValue(t, base, `revisit_visit_results_total{status="full",visit_type="git"}`))
		})
	}
}

// embeddedStore opens a store of engine (sqlite: a file the subprocesses
// share; postgres: a fresh schema) and returns it with its URL.
func embeddedStore(t *testing.T, engine string) (store.Store, string) {
	if engine == "postgres" {
		return teststore.Postgres(t)
	}
	path := filepath.Join(t.TempDir(), "revisit.db")
	st, err := sqlite.Open(context.Background(), path, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st, "sqlite://" + path
}

// refusedSent is the error of a store refusing to mark visits sent
// (refuseSent).
const refusedSent = "test: visits cannot be marked sent"

// refuseSent makes the store of engine at storeURL refuse to mark visits
// sent (a trigger fails the statement) until the function it returns is
// called.
func refuseSent(t *testing.T, engine, storeURL string) (undo func()) {
	t.Helper()
	ctx := context.Background()
	if engine == "postgres" {
		conn, err := pgx.Connect(ctx, storeURL)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close(ctx) })
		_, err = conn.Exec(ctx, `CREATE FUNCTION refuse_sent() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN RAISE EXCEPTION '`+refusedSent+`'; END $$;
			CREATE TRIGGER refuse_sent BEFORE UPDATE ON visit_in_flight
			FOR EACH ROW WHEN (NEW.state = 'sent') EXECUTE FUNCTION refuse_sent()`)
		require.NoError(t, err)
		return func() {
			_, err := conn.Exec(ctx, `DROP TRIGGER refuse_sent ON visit_in_flight`)
			require.NoError(t, err)
		}
	}
	db, err := sql.Open("sqlite", strings.TrimPrefix(storeURL, "sqlite://")+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	_, err = db.ExecContext(ctx, `CREATE TRIGGER refuse_sent BEFORE UPDATE ON visit_in_flight
		WHEN NEW.state = 'sent' BEGIN SELECT RAISE(ABORT, '`+refusedSent+`'); END`)
	require.NoError(t, err)
	return func() {
		_, err := db.ExecContext(ctx, `DROP TRIGGER refuse_sent`)
		require.NoError(t, err)
	}
}

var dashboardLine = regexp.MustCompile(`revisit: dashboard at (http://[^/\s]+)/`)

// startServeProc runs revisit serve with every role on a free port and
// returns its base URL.
func startServeProc(t *testing.T, cfg string) string {
	t.Helper()
	p := startRevisit(t, "--config", cfg, "serve", "--listen", "127.0.0.1:0")
	var base string
	celerytest.WaitFor(t, 30*time.Second, "revisit serve listening", func() bool {
		if m := dashboardLine.FindStringSubmatch(p.stderr.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	return base
}

// visits counts the messages a worker visited, by url.
type visits struct {
	mu    sync.Mutex
	byURL map[string]int
}

func (v *visits) add(u string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.byURL[u]++
}

func (v *visits) urls() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.byURL)
}

func (v *visits) count(u string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.byURL[u]
}

// visitAll runs a Go worker on embeddedQueue of the server at base until
// the test ends: every visit is eventful.
func visitAll(t *testing.T, base string) *visits {
	v := &visits{byURL: map[string]int{}}
	run(t, "worker", func(ctx context.Context) error {
		return worker.Run(ctx, worker.Config{Server: base, Queue: embeddedQueue, Name: "w1", Concurrency: 4,
			Wait: time.Second, Handler: func(_ context.Context, task worker.Task) (worker.Result, error) {
				var kw struct{ URL string }
				if err := json.Unmarshal(task.Kwargs, &kw); err != nil {
					return worker.Result{}, err
				}
				v.add(kw.URL)
				return worker.Result{Status: "eventful"}, nil
			}})
	})
	return v
}

// metricValue returns the value of a sample of the server's /metrics,
// named with its labels as Prometheus prints them; 0 when absent.
func metricValue(t *testing.T, base, sample string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if value, ok := strings.CutPrefix(lines.Text(), sample+" "); ok {
			f, err := strconv.ParseFloat(value, 64)
			require.NoError(t, err, fmt.Sprintf("%s: %q", sample, value))
			return f
		}
	}
	require.NoError(t, lines.Err())
	return 0
}
