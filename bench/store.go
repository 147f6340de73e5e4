package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/internal/service/urlindex"
	"github.com/revisit-sched/revisit/recording"
	"github.com/revisit-sched/revisit/store"
)

// StoreConfig configures RunStore.
type StoreConfig struct {
	URL     string
	Origins int
	// Grabs is how many grabs of Count origins each case measures.
	Grabs int
	Count int
	// RecordBatches is how many batches of 1000 (half new, half updates) P3
	// measures.
	RecordBatches int
	// RecordWriters is how many of those batches are recorded at once, as
	// origin record --writers does (below 1: one).
	RecordWriters int
	// Progress receives progress lines (nil: none).
	Progress io.Writer
}

// GrabMode is how a run of timed grabs follows one another.
type GrabMode string

// The grab modes, in the order RunStore measures them.
const (
	// SelectOnly grabs are dry runs: the selection alone, nothing marked.
	SelectOnly GrabMode = "select_only"
	// Visited grabs select and mark, and the visits of each grab's origins
	// (successful) are processed before the next grab, untimed: the steady
	// state of the orchestrator, where results keep arriving, and what P1
	// targets.
	Visited GrabMode = "visited"
	// BackToBack grabs select and mark with no result between them: each
	// steps over every origin the earlier grabs picked (still in their
	// cooldown), the worst case. Once timed, the visits of all their
	// origins are processed, untimed, so that the next case does not step
	// over this one's picks: each case's figures are its own, whatever
	// case ran before.
	BackToBack GrabMode = "back_to_back"
)

// Latency summarizes timed calls.
type Latency struct {
	Case  string   `json:"case"`
	Mode  GrabMode `json:"mode"`
	Calls int      `json:"calls"`
	// Count is how many origins each call asked for, Returned how many it
	// returned on average.
	Count    int           `json:"count"`
	Returned int           `json:"returned_per_call"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Max      time.Duration `json:"max_ns"`
	// Resumed is how many of the calls resumed the walk of the call
	// before them, on a store that does (store.GrabWalker).
	Resumed int `json:"resumed,omitempty"`
	// CPU is the processor time a call cost, and BusyCores how many of
	// the machine's processors were busy on average meanwhile: over the
	// timed calls, or, back to back, over the whole run of them, which
	// then also holds what the store does beside the calls (PostgreSQL:
	// moving each grab's picks set aside).
	CPU       CPU     `json:"cpu"`
	BusyCores float64 `json:"busy_cores"`
}

// StoreReport is what RunStore measured.
type StoreReport struct {
	URL     string    `json:"store"`
	Origins int       `json:"origins"`
	Loaded  bool      `json:"loaded_now"`
	LoadPS  float64   `json:"load_origins_per_s,omitempty"`
	Grabs   []Latency `json:"grab_next_visits"`
	// RecordPS is P3: origins/s recorded in batches of 1000, half new.
	RecordPS float64 `json:"record_origins_per_s"`
	// On stores that index the URLs a recording lists for the first time
	// after it (store.URLIndexer), IndexPS is how fast they were then
	// indexed for search (URLs/s), and RecordIndexedPS is RecordPS with
	// that indexing counted in the recording's time.
	IndexPS         float64 `json:"index_urls_per_s,omitempty"`
	RecordIndexedPS float64 `json:"record_and_index_origins_per_s,omitempty"`
	// LoadCost and RecordCost are what loading the data set and recording
	// cost the database per origin; RecordIndexedCost is RecordCost with
	// the indexing of the new URLs counted in.
	LoadCost          DBCost `json:"load_cost"`
	RecordCost        DBCost `json:"record_cost"`
	RecordIndexedCost DBCost `json:"record_and_index_cost"`
	// Footprint is the disk space of the store's tables and indexes once
	// the data set is loaded, before the run adds to it.
	Footprint []RelationFootprint `json:"footprint,omitempty"`
}

// benchState is kept in lister A's current_state, so that a later run on
// the same store reuses the data set instead of loading it again.
type benchState struct {
	Origins int    `json:"bench_origins"`
	Seed    uint64 `json:"bench_seed"`
	Runs    int    `json:"bench_runs"`
}

// clock is the store's clock during a bench run.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// session is an open store holding the reference data set, at the present
// of one bench run.
type session struct {
	store.Store
	ds       Dataset
	clk      *clock
	a, b     revisit.Lister
	now      time.Time // this run's present: 10 days after the previous run's
	loaded   bool
	loadPS   float64
	loadCost DBCost
}

// openSession migrates and opens the store at url, loads the data set of n
// origins unless a previous run left it there, maintains the store (on
// PostgreSQL: VACUUM (ANALYZE), as autovacuum would), and starts a run 10
// days after the previous one (past every cooldown of the origins the
// previous run marked).
func openSession(ctx context.Context, url string, n int, w io.Writer) (*session, error) {
	se := &session{ds: NewDataset(n)}
	if _, _, err := store.Migrate(ctx, url); err != nil {
		return nil, err
	}
	se.clk = &clock{t: se.ds.Now}
	s, err := store.Open(ctx, url, store.Options{Clock: se.clk.Now})
	if err != nil {
		return nil, err
	}
	se.Store = s
	if err := se.start(ctx, w); err != nil {
		s.Close()
		return nil, err
	}
	return se, nil
}

func (se *session) start(ctx context.Context, w io.Writer) error {
	var err error
	if se.a, err = se.ListerGetOrCreate(ctx, ListerName, ListerInstanceA); err != nil {
		return err
	}
	if se.b, err = se.ListerGetOrCreate(ctx, ListerName, ListerInstanceB); err != nil {
		return err
	}
	var state benchState
	_ = json.Unmarshal(se.a.CurrentState, &state)
	switch {
	case state.Origins == 0:
		start, db := time.Now(), dbSample{}
		if db, err = sampleDB(ctx, se.Store); err != nil {
			return err
		}
		if err := load(ctx, se.Store, se.ds, se.clk, se.a.ID, se.b.ID, w); err != nil {
			return err
		}
		progress(w, "index the URLs for search")
		if _, _, err := indexURLs(ctx, se.Store); err != nil {
			return err
		}
		se.loaded, se.loadPS = true, float64(se.ds.Origins)/time.Since(start).Seconds()
		if se.loadCost, err = costSince(ctx, se.Store, db, int64(se.ds.Origins)); err != nil {
			return err
		}
		state = benchState{Origins: se.ds.Origins, Seed: se.ds.Seed}
	case state.Origins != se.ds.Origins || state.Seed != se.ds.Seed:
		return fmt.Errorf("the store holds another bench data set (%d origins, seed %d): use an empty store", state.Origins, state.Seed)
	}
	if err := se.maintain(ctx); err != nil {
		return err
	}
	se.now = se.ds.Now.Add(time.Duration(state.Runs) * 10 * day)
	state.Runs++
	se.a.CurrentState, _ = json.Marshal(state)
	se.a, err = se.ListerUpdate(ctx, se.a)
	se.clk.Set(se.now)
	return err
}

// RunStore loads the reference data set into the store at cfg.URL (unless a
// previous run left it there), then measures grab_next_visits for every
// policy (P1, P6) and batch recording (P3).
func RunStore(ctx context.Context, cfg StoreConfig) (StoreReport, error) {
	rep := StoreReport{URL: store.Redact(cfg.URL), Origins: cfg.Origins}
	if cfg.Grabs < 1 {
		return rep, revisit.Invalidf("grabs", "must be at least 1, not %d", cfg.Grabs)
	}
	if cfg.RecordBatches < 0 {
		return rep, revisit.Invalidf("record-batches", "must not be negative, not %d", cfg.RecordBatches)
	}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	rep.Loaded, rep.LoadPS, rep.LoadCost = se.loaded, se.loadPS, se.loadCost
	if rep.Footprint, err = footprint(ctx, se.Store, se.ds.Origins); err != nil {
		return rep, err
	}
	for _, c := range grabCases(se.a) {
		progress(cfg.Progress, "grab %s", c.name)
		for _, mode := range []GrabMode{SelectOnly, Visited, BackToBack} {
			lat, err := timeGrabs(ctx, se.Store, c, se.now, cfg.Grabs, cfg.Count, mode)
			if err != nil {
				return rep, err
			}
			rep.Grabs = append(rep.Grabs, lat)
		}
	}
	progress(cfg.Progress, "record %d batches of 1000 (half new, half updates)", cfg.RecordBatches)
	db, err := sampleDB(ctx, se.Store)
	if err != nil {
		return rep, err
	}
	took, err := timeRecord(ctx, se, se.ds, se.a.ID, se.b.ID, cfg.RecordBatches, cfg.RecordWriters)
	if err != nil || took == 0 {
		return rep, err
	}
	recorded := float64(cfg.RecordBatches * 1000)
	rep.RecordPS = recorded / took.Seconds()
	if rep.RecordCost, err = costSince(ctx, se.Store, db, int64(recorded)); err != nil {
		return rep, err
	}
	urls, indexing, err := indexURLs(ctx, se.Store)
	if err != nil || urls == 0 {
		return rep, err
	}
	rep.IndexPS = float64(urls) / indexing.Seconds()
	rep.RecordIndexedPS = recorded / (took + indexing).Seconds()
	rep.RecordIndexedCost, err = costSince(ctx, se.Store, db, int64(recorded))
	return rep, err
}

// indexURLs indexes for search every URL waiting in the store's backlog,
// if it keeps one (store.URLIndexer), and returns how many and how long
// it took.
func indexURLs(ctx context.Context, s store.Store) (int, time.Duration, error) {
	ix, ok := s.(store.URLIndexer)
	if !ok {
		return 0, 0, nil
	}
	start := time.Now()
	total, err := urlindex.Drain(ctx, ix, urlindex.DefaultBatch)
	return total, time.Since(start), err
}

// load records the data set in batches of 1000 from two writers, each
// origin's stats before it, with first_seen spread over the 1000 days
// before the data set's present.
func load(ctx context.Context, s store.Store, ds Dataset, clk *clock, a, b uuid.UUID, w io.Writer) error {
	const batchSize, writers = 1000, 2
	step := max(ds.Origins/batchSize/20, 1) * batchSize
	done := 0
	rec := recording.NewWriter(ctx, s, recording.Config{Writers: writers, BatchSize: batchSize,
		Written: func(n int) {
			if (done+n)/step > done/step {
				progress(w, "load %d/%d origins", (done+n)/step*step, ds.Origins)
			}
			done += n
			// first_seen moves forward with the load, over 1000 days.
			clk.Set(ds.Now.Add(-time.Duration(float64(1000*day) * (1 - float64(done)/float64(ds.Origins)))))
		}})
	err := func() error {
		origins := make([]revisit.ListedOrigin, 0, batchSize)
		stats := make([]revisit.VisitStats, 0, batchSize)
		for first := 0; first < ds.Origins; first += batchSize {
			origins, stats = origins[:0], stats[:0]
			for i := first; i < min(first+batchSize, ds.Origins); i++ {
				r := ds.Row(i)
				origins = append(origins, r.Listed(a, b))
				if r.Stats != nil {
					stats = append(stats, *r.Stats)
				}
			}
			// Recording a new origin copies its stats: they go first.
			if err := s.VisitStatsUpsert(ctx, stats); err != nil {
				return err
			}
			for _, o := range origins {
				if err := rec.Add(o); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	if _, closeErr := rec.Close(); err == nil {
		err = closeErr
	}
	clk.Set(ds.Now)
	return err
}

type grabCase struct {
	name      string
	visitType string
	policy    revisit.Policy
	lister    *revisit.Lister
}

func grabCases(a revisit.Lister) []grabCase {
	var cs []grabCase
	for _, vt := range []string{"git", "hg", "pypi"} {
		for _, p := range revisit.Policies {
			c := grabCase{name: vt + " " + string(p), visitType: vt, policy: p}
			if p == revisit.FirstVisitsAfterListing {
				c.lister = &a
				c.name += " (lister a)"
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// timeGrabs times n grabs of count origins in the given mode. Each mode
// starts a day after the one before, so that the earlier modes' picks are
// out of their absolute cooldown again.
func timeGrabs(ctx context.Context, s store.Store, c grabCase, now time.Time, n, count int, mode GrabMode) (Latency, error) {
	direct := func(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, time.Duration, error) {
		got, err := s.GrabNextVisits(ctx, p)
		return got, 0, err
	}
	return timeGrabsWith(ctx, s, direct, c, now, n, count, mode)
}

// grabber is a way to grab next visits: the store's own, or a client's.
// It returns the origins grabbed and how much of its time is not the
// grab's (a client's decoding of the answer), left out of the figures.
type grabber func(context.Context, revisit.GrabParams) ([]revisit.ListedOrigin, time.Duration, error)

// timeGrabsWith is timeGrabs with the grabs made by grab; s processes the
// visits between them.
func timeGrabsWith(ctx context.Context, s store.Store, grab grabber, c grabCase, now time.Time, n, count int, mode GrabMode) (Latency, error) {
	switch mode {
	case Visited:
		now = now.Add(day)
	case BackToBack:
		now = now.Add(2 * day)
	}
	times := make([]time.Duration, 0, n)
	returned := 0
	resumed := func() int64 { return 0 }
	if w, ok := s.(store.GrabWalker); ok {
		resumed = w.GrabsResumed
	}
	resumedBefore := resumed()
	// The calls do not pay for the garbage of what ran before them (the
	// previous mode's results, above all).
	runtime.GC()
	// Back to back, the usage is read around the whole run: reading it
	// between the calls would leave the store time to catch up.
	var used, runStart usage
	if mode == BackToBack {
		runStart = beginSpan()
	}
	var pending []revisit.ListedOrigin
	for i := range n {
		p := revisit.GrabParams{VisitType: c.visitType, Count: count, Policy: c.policy,
			Now: now.Add(time.Duration(i) * time.Second), DryRun: mode == SelectOnly}
		if c.lister != nil {
			p.ListerID = &c.lister.ID
		}
		var callStart usage
		if mode != BackToBack {
			callStart = beginSpan()
		}
		start := time.Now()
		got, untimed, err := grab(ctx, p)
		if err != nil {
			return Latency{}, fmt.Errorf("%s: %w", c.name, err)
		}
		times = append(times, time.Since(start)-untimed)
		if mode != BackToBack {
			used = used.plus(callStart, endSpan())
		}
		returned += len(got)
		switch mode {
		case Visited:
			if err := visit(ctx, s, got, p.Now); err != nil {
				return Latency{}, fmt.Errorf("%s: %w", c.name, err)
			}
		case BackToBack:
			pending = append(pending, got...)
		}
	}
	if mode == BackToBack {
		used = used.plus(runStart, endSpan())
	}
	for batch := range slices.Chunk(pending, max(count, 1)) {
		if err := visit(ctx, s, batch, now.Add(time.Duration(n)*time.Second)); err != nil {
			return Latency{}, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	slices.Sort(times)
	return Latency{Case: c.name, Mode: mode, Calls: n, Count: count, Returned: returned / max(n, 1),
		P50: times[len(times)/2], P99: times[min(len(times)-1, len(times)*99/100)], Max: times[len(times)-1],
		Resumed: int(resumed() - resumedBefore), CPU: cpuSample{}.per(used.cpu, int64(n)), BusyCores: used.busyCores()}, nil
}

// visit processes a successful visit of each origin, a millisecond after
// they were grabbed at now, as result processing would.
func visit(ctx context.Context, s store.Store, origins []revisit.ListedOrigin, now time.Time) error {
	batch := make([]feedback.VisitStatus, len(origins))
	for i, o := range origins {
		batch[i] = feedback.VisitStatus{Origin: o.URL, VisitType: o.VisitType, Status: feedback.StatusFull,
			Date: now.Add(time.Millisecond), Snapshot: []byte(o.URL)[:min(20, len(o.URL))]}
	}
	_, err := feedback.Process(ctx, s, batch, func() float64 { return 0.5 },
		feedback.Horizon{Clock: func() time.Time { return now }})
	return err
}

// timeRecord returns how long recording batches of 1000 origins took, half
// of them new and half already listed, into the loaded data set, writers
// batches at once, as origin record records them (recording.Writer). The
// origins are drawn before the clock starts.
func timeRecord(ctx context.Context, s store.Store, ds Dataset, a, b uuid.UUID, batches, writers int) (time.Duration, error) {
	if batches == 0 {
		return 0, nil
	}
	all := recordBatches(ds, a, b, batches)
	start := time.Now()
	rec := recording.NewWriter(ctx, s, recording.Config{Writers: writers, BatchSize: 1000})
	var err error
	for _, o := range all {
		if err = rec.Add(o); err != nil {
			break
		}
	}
	if _, closeErr := rec.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// recordBatches draws batches of 1000 origins to record into the loaded
// data set: 500 of them listed already (random rows), 500 new (listed by a).
func recordBatches(ds Dataset, a, b uuid.UUID, batches int) []revisit.ListedOrigin {
	run := rand.Uint64()
	rng := rand.New(rand.NewPCG(run, 1))
	all := make([]revisit.ListedOrigin, 0, batches*1000)
	for k := range batches {
		for j := range 500 {
			all = append(all, ds.Row(rng.IntN(ds.Origins)).Listed(a, b))
			fresh := ds.Row(j)
			fresh.Origin.URL = fmt.Sprintf("https://%s.example.org/new-%x-%d-%d", fresh.Origin.VisitType, run, k, j)
			fresh.Origin.ListerID = a
			all = append(all, fresh.Origin)
		}
	}
	return all
}

// maintain gives the session's store the upkeep that autovacuum gives it
// in production (store.Maintainer), so that a run does not pay for the
// dead rows of the previous one. It asks the store itself: the session
// embeds only the store.Store interface, which Maintain is not part of.
func (se *session) maintain(ctx context.Context) error {
	if m, ok := se.Store.(store.Maintainer); ok {
		return m.Maintain(ctx)
	}
	return nil
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "bench: "+format+"\n", args...)
	}
}

// GrabTarget is the latency target of grab_next_visits on a store's engine:
// P1 on PostgreSQL (p50 and p99), P6 on SQLite (p50 only; P99 zero).
type GrabTarget struct {
	Name     string
	P50, P99 time.Duration
}

// GrabTargetFor returns the target that applies to a store of those
// capabilities: P6 to the embedded single-process store (SQLite), P1 to a
// database server's.
func GrabTargetFor(c store.Capabilities) GrabTarget {
	if c.SingleProcess {
		return GrabTarget{Name: "P6", P50: 20 * time.Millisecond}
	}
	return GrabTarget{Name: "P1", P50: 10 * time.Millisecond, P99: 50 * time.Millisecond}
}

// Met reports whether a latency meets the target.
func (t GrabTarget) Met(l Latency) bool {
	// A case whose grabs ran short of eligible origins (a small visit type
	// used up by the cases before) proves nothing: the target is for grabs
	// of the full count.
	return l.Returned >= l.Count && l.P50 <= t.P50 && (t.P99 == 0 || l.P99 <= t.P99)
}

// RecordTarget is P3, in origins/s.
const RecordTarget = 100_000

// GrowthTarget is P1g: the most a grab's p50 may grow from the 1M set to
// the 10M set (10M p50 / 1M p50).
const GrowthTarget = 1.5
