package bench_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/bench"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
)

func TestDatasetIsDeterministicAndShaped(t *testing.T) {
	ds := bench.NewDataset(20_000)
	if a, b := ds.Row(1234), ds.Row(1234); a.Origin.URL != b.Origin.URL || a.ListerA != b.ListerA ||
		(a.Stats == nil) != (b.Stats == nil) {
		t.Fatal("Row is not deterministic")
	}
	var git, withStats, listerA, disabled int
	for i := range ds.Origins {
		r := ds.Row(i)
		if r.Origin.VisitType == "git" {
			git++
		}
		if r.Stats != nil {
			withStats++
			if r.Stats.LastVisit.After(ds.Now) || (r.Stats.LastSuccessful != nil && r.Stats.LastSuccessful.After(*r.Stats.LastVisit)) {
				t.Fatalf("row %d: stats out of order: %+v", i, r.Stats)
			}
		}
		if r.ListerA {
			listerA++
		}
		if !r.Origin.Enabled {
			disabled++
		}
	}
	share := func(n int) float64 { return float64(n) / float64(ds.Origins) }
	for name, c := range map[string]struct{ got, want float64 }{
		"git": {share(git), 0.8}, "stats": {share(withStats), 0.6}, "lister A": {share(listerA), 0.8}, "disabled": {share(disabled), 0.02},
	} {
		if c.got < c.want*0.9 || c.got > c.want*1.1 {
			t.Errorf("%s share %.3f, want about %.2f", name, c.got, c.want)
		}
	}
}

func TestRunStoreOnSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bench.db")
	cfg := bench.StoreConfig{URL: "sqlite://" + path, Origins: 3000, Grabs: 2, Count: 50, RecordBatches: 2}
	rep, err := bench.RunStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Loaded || len(rep.Grabs) != 54 || rep.RecordPS <= 0 {
		t.Fatalf("report: %+v", rep)
	}
	modes := []bench.GrabMode{bench.SelectOnly, bench.Visited, bench.BackToBack}
	for i, l := range rep.Grabs[:3] { // git oldest_scheduled_first in each mode
		if l.Returned != 50 || l.P50 <= 0 || l.Mode != modes[i] {
			t.Fatalf("git oldest_scheduled_first, mode %s: %+v", modes[i], l)
		}
	}
	// The back-to-back picks got their results: no case leaves origins in
	// flight for the next one to step over.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var marked int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM listed_origin_mark").Scan(&marked); err != nil {
		t.Fatal(err)
	}
	if marked != 0 {
		t.Fatalf("%d listed rows still marked after the run", marked)
	}
	listed := func() (n int) {
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM listed_origin").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := listed()
	cfg.RecordWriters = 3
	again, err := bench.RunStore(ctx, cfg)
	if err != nil || again.Loaded {
		t.Fatalf("second run on the same store must reuse the data set: loaded=%v, %v", again.Loaded, err)
	}
	if got := listed() - before; got != cfg.RecordBatches*500 || again.RecordPS <= 0 {
		t.Fatalf("three writers recorded %d new origins at %.0f/s, want %d", got, again.RecordPS, cfg.RecordBatches*500)
	}
	cfg.Origins = 4000
	if _, err := bench.RunStore(ctx, cfg); err == nil {
		t.Fatal("a run with another size on the same store must fail")
	}
	cfg.Grabs = 0
	if _, err := bench.RunStore(ctx, cfg); err == nil || !strings.Contains(err.Error(), "grabs") {
		t.Fatalf("a run of no grabs: %v, want an error naming grabs", err)
	}
}

func TestRunBroker(t *testing.T) {
	url := "amqp://guest:guest@127.0.0.1:5672/"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	b, err := amqp.Open(ctx, amqp.Config{URL: url})
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("RabbitMQ at %s: %v", url, err)
		}
		t.Fatal(err)
	}
	defer b.Close()
	for _, queues := range []int{1, 3} {
		rep := runBroker(t, b, queues)
		// This RabbitMQ runs on this host: its processor time is counted.
		if rep.CPU.RabbitMQMicros <= 0 {
			t.Errorf("CPU per message %+v: want RabbitMQ's time counted", rep.CPU)
		}
	}
}

func TestRunBrokerEmbedded(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := embedded.New(st, embedded.Config{})
	defer b.Close()
	runBroker(t, b, 2)
}

// runBroker runs a small broker benchmark publishing to queues queues at
// once, checks its report and returns it.
func runBroker(t *testing.T, b bench.ScratchBroker, queues int) bench.BrokerReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := bench.RunBroker(ctx, bench.BrokerConfig{Broker: b, Messages: 2500, Batch: 1000, Queues: queues})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queues != queues || rep.Confirmed != 2500 || rep.Failed+rep.Returned != 0 || rep.Depth != 2500 || rep.PerSecond <= 0 {
		t.Fatalf("report %+v: want 2500 confirmed and queued", rep)
	}
	if rep.CPU.RevisitMicros <= 0 {
		t.Errorf("CPU per message %+v: want this process's time counted", rep.CPU)
	}
	return rep
}

func TestRunFeedbackOnSQLite(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "bench.db")
	for _, workers := range []int{1, 3} {
		rep, err := bench.RunFeedback(context.Background(), bench.FeedbackConfig{URL: url, Origins: 2000, Statuses: 1500,
			Batch: 500, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Statuses != 1500 || rep.Workers != workers || rep.Changed == 0 || rep.Changed > 1500 || rep.PerSecond <= 0 {
			t.Fatalf("report %+v", rep)
		}
	}
}

func TestRunOrchestratorEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "bench.db")
	url := "sqlite://" + path
	if _, _, err := store.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := embedded.New(st, embedded.Config{})
	defer b.Close()
	rep, err := bench.RunOrchestrator(ctx, bench.OrchestratorConfig{URL: url, Origins: 3000, Broker: b,
		Visits: 500, MaxPerRound: 100})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Visits < 500 || rep.Depth != rep.Visits || rep.PerSecond <= 0 || rep.RSSMaxMiB <= 0 || rep.CPU.RevisitMicros <= 0 {
		t.Fatalf("report %+v: want at least 500 visits, all in the queue", rep)
	}
}

// TestGrabTargetFor checks that a store's capabilities choose its target:
// P6 for the embedded single-process store, P1 for a database server.
func TestGrabTargetFor(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := bench.GrabTargetFor(st.Capabilities()); got.Name != "P6" || got.P99 != 0 {
		t.Fatalf("SQLite: target %+v, want P6 on p50 only", got)
	}
	if got := bench.GrabTargetFor(store.Capabilities{}); got.Name != "P1" {
		t.Fatalf("a server's store: target %+v, want P1", got)
	}
}

func TestGrabTargetNeedsFullGrabs(t *testing.T) {
	target := bench.GrabTarget{Name: "P6", P50: 20 * time.Millisecond}
	full := bench.Latency{Count: 1000, Returned: 1000, P50: 12 * time.Millisecond}
	if !target.Met(full) {
		t.Fatalf("%+v: full grabs within the target must meet it", full)
	}
	short := full
	short.Returned = 35
	if target.Met(short) {
		t.Fatalf("%+v: grabs that ran short of origins must not meet the target", short)
	}
	slow := full
	slow.P50 = 21 * time.Millisecond
	if target.Met(slow) {
		t.Fatalf("%+v: a slower p50 must not meet the target", slow)
	}
}

func TestRunListener(t *testing.T) {
	brokerURL := "amqp://guest:guest@127.0.0.1:5672/"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if b, err := amqp.Open(ctx, amqp.Config{URL: brokerURL}); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("RabbitMQ at %s: %v", brokerURL, err)
		}
		t.Fatal(err)
	} else {
		b.Close()
	}
	path := filepath.Join(t.TempDir(), "bench.db")
	cfg := bench.ListenerConfig{URL: "sqlite://" + path, Origins: 3000, BrokerURL: brokerURL, Visits: 400}
	rep, err := bench.RunListener(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Visits != 400 || rep.Events != 3*400 || rep.PerSecond <= 0 {
		t.Fatalf("report: %+v", rep)
	}
	// The run waited for every visit to be closed by its result.
	st, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counts, err := st.VisitsCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if c.Pending+c.Sent != 0 {
			t.Fatalf("visits left in flight: %+v", c)
		}
	}
	cfg.Visits = 3000 // more than the eligible git origins left
	if _, err := bench.RunListener(ctx, cfg); err == nil || !strings.Contains(err.Error(), "eligible") {
		t.Fatalf("a run of more visits than eligible origins: %v", err)
	}
}

func TestRunRPCOnSQLite(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "bench.db")
	rep, err := bench.RunRPC(context.Background(), bench.RPCConfig{URL: url, Origins: 5000, RecordBatches: 2, Grabs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RecordRPC <= 0 || rep.RecordDirect <= 0 || len(rep.GrabsRPC) != 6 || len(rep.GrabsDirect) != 6 {
		t.Fatalf("report: %+v", rep)
	}
	// Both paths grab from the same data set, the RPC second: with a few
	// thousand git origins the first policy still fills every grab.
	if g := rep.GrabsRPC[0]; g.Returned != 1000 || g.P50 <= 0 {
		t.Fatalf("grab through the RPC: %+v", g)
	}
}
