// Package simulate runs revisit's scheduling on a simulated world with a
// simulated clock (revisit simulate): the real store, the orchestrator's
// rounds (orchestrator.Stepper) and the fold of results (feedback.Process)
// drive simulated workers that visit the origins of package world, and a
// lister that finds new origins. Every random choice comes from one seed,
// and the clock is simulated everywhere, the store's included, so that a
// seed gives the same Result every time.
package simulate

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/simulate/des"
	"github.com/revisit-sched/revisit/simulate/world"
	"github.com/revisit-sched/revisit/store"
	_ "github.com/revisit-sched/revisit/store/sqlite" // the default store
)

// Scenario is one configuration of the scheduler to simulate.
type Scenario struct {
	// Name names it in the report.
	Name string
	// Orchestrator configures the rounds: shares, thresholds, waits,
	// visit timeouts. Its Clock, Rand, Owner and VisitTypes are the
	// simulation's.
	Orchestrator orchestrator.Config
}

// Run simulates the scenario on the world of cfg and returns what it
// measured. It stops early, with ctx's error, when ctx is done.
func Run(ctx context.Context, cfg Config, sc Scenario) (Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	url := cfg.Store
	if url == "" {
		dir, err := os.MkdirTemp("", "revisit-simulate-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(dir)
		url = "sqlite://" + filepath.Join(dir, "simulate.db")
	}
	sim := des.New(cfg.Start)
	st, err := store.Open(ctx, url, store.Options{Clock: sim.Now})
	if err != nil {
		return Result{}, fmt.Errorf("store: %w", err)
	}
	defer st.Close()
	r, err := newRun(ctx, cfg, sc, sim, st)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	return r.run(ctx)
}

// run is one simulation under way.
type run struct {
	ctx  context.Context
	cfg  Config
	sim  *des.Sim
	st   store.Store
	rand *rand.Rand
	// lister records the world's origins.
	lister revisit.Lister
	// origins are the world's origins, by index; index is by URL.
	origins []*origin
	index   map[string]int32
	types   []*visitType
	byType  map[string]*visitType
	// inFlight are the visits published and not ended, by message id.
	inFlight map[string]flight
	// results wait to be folded; foldTimer flushes them.
	results   []feedback.VisitStatus
	foldTimer *des.Timer
	res       Result
	err       error
}

// origin is the simulation's state of one origin.
type origin struct {
	world.Origin
	typ *visitType
	// listed is when the lister first recorded it; listedUpdate, the last
	// update it recorded.
	listed       time.Time
	listedUpdate time.Time
	// attempted is when its previous visit started; zero if never.
	attempted time.Time
	// succeeded is the date of its last full visit's result; zero if none.
	succeeded time.Time
	// enabled and successful mirror the store's listed origin: whether
	// it is enabled, and the last successful visit the store folded.
	enabled    bool
	successful time.Time
	// snapshot is what its last full visit found.
	snapshot []byte
	// new marks origins listed after the start; visited, those whose
	// first visit ended.
	new, visited bool
}

// flight is a published visit: its origin and the share that chose it.
type flight struct {
	origin int32
	share  int
}

// visitType is one visit type's queue, workers and rounds.
type visitType struct {
	name    string
	queue   *des.Queue[string]
	workers int
	busy    int
	// busyTime integrates busy workers over time until busySince.
	busyTime  time.Duration
	busySince time.Time
	lastBusy  time.Duration // busyTime at the previous sample
	stepper   *orchestrator.Stepper
	shares    []orchestrator.Share
	visits    []int64 // ended visits by share
	eventful  []int64
	// next is the next round's timer; wait is the Step the loop waits on.
	next      *des.Timer
	wait      orchestrator.Step
	waitSince time.Time
	// pollAt is the poll at which a draining queue is measured next; zero
	// when none is due.
	pollAt  time.Time
	latency []time.Duration
}

func newRun(ctx context.Context, cfg Config, sc Scenario, sim *des.Sim, st store.Store) (*run, error) {
	r := &run{ctx: ctx, cfg: cfg, sim: sim, st: st, rand: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)),
		index: map[string]int32{}, byType: map[string]*visitType{}, inFlight: map[string]flight{}}
	if err := r.checkEmpty(); err != nil {
		return nil, err
	}
	var err error
	if r.lister, err = st.ListerGetOrCreate(ctx, "example", "simulator"); err != nil {
		return nil, err
	}
	b := &simBroker{queues: map[string]*des.Queue[string]{}}
	oc := sc.Orchestrator
	oc.Clock, oc.Rand = sim.Now, rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x0c4e))
	oc.Owner, oc.VisitTypes, oc.Logger = "simulator", cfg.VisitTypes, slog.New(slog.DiscardHandler)
	oc.LeaseTTL = cfg.Duration + 24*time.Hour
	if oc.VisitTimeout == 0 {
		oc.VisitTimeout = 24 * time.Hour
	}
	o, err := orchestrator.New(st, b, oc)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	for _, name := range cfg.VisitTypes {
		backend := "simulate." + name
		if err := st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-" + name, Description: "simulated visits",
			BackendName: backend, MaxQueueLength: cfg.QueueCapacity}); err != nil {
			return nil, fmt.Errorf("task type load-%s: %w", name, err)
		}
		vt := &visitType{name: name, queue: des.NewQueue[string](sim, 0), workers: cfg.workers(name),
			shares: o.Shares(name), busySince: cfg.Start}
		vt.visits, vt.eventful = make([]int64, len(vt.shares)), make([]int64, len(vt.shares))
		b.queues[backend] = vt.queue
		if vt.stepper, err = o.Stepper(ctx, name); err != nil {
			return nil, err
		}
		r.types = append(r.types, vt)
		r.byType[name] = vt
	}
	r.res = Result{Name: sc.Name, Settings: cfg.settings(o, oc), VisitTypes: cfg.VisitTypes, Start: cfg.Start,
		End: cfg.Start.Add(cfg.Duration), Runtimes: Histogram{Bounds: runtimeBounds}}
	r.res.Runtimes.Counts = make([]int64, len(runtimeBounds)+1)
	return r, nil
}

// checkEmpty refuses a store that holds origins already: their visits
// would mix with the simulated ones.
func (r *run) checkEmpty() error {
	ms, err := r.st.MetricsUpdate(r.ctx, nil, r.sim.Now())
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	var known int64
	for _, m := range ms {
		known += m.OriginsKnown
	}
	if known > 0 {
		return fmt.Errorf("the store holds %d listed origins: a simulation needs an empty store", known)
	}
	return nil
}

func (r *run) close() {
	for _, vt := range r.types {
		if vt.stepper != nil {
			_ = vt.stepper.Close(context.Background())
		}
	}
}

// fail records the first error; events do nothing once one is recorded.
func (r *run) fail(err error) {
	if r.err == nil && err != nil {
		r.err = err
	}
}

func (r *run) run(ctx context.Context) (Result, error) {
	cfg := r.cfg
	if err := r.listNew(cfg.Origins, false); err != nil {
		return Result{}, err
	}
	for _, vt := range r.types {
		for range vt.workers {
			r.work(vt)
		}
		r.sim.At(cfg.Start, func() { r.round(vt) })
	}
	r.sim.After(cfg.ListerEvery, r.list)
	r.sim.After(cfg.Relist, r.relist)
	end := r.res.End
	if err := r.sample(); err != nil {
		return Result{}, err
	}
	for t := cfg.Start; t.Before(end); {
		t = t.Add(cfg.SampleEvery)
		if t.After(end) {
			t = end
		}
		r.sim.Run(t)
		r.fold()
		if r.err == nil {
			r.fail(r.sample())
		}
		if r.err != nil {
			return Result{}, r.err
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
	}
	r.finish()
	return r.res, nil
}

// listNew adds n origins to the world and records them; isNew marks
// those the lister found after the start.
func (r *run) listNew(n int, isNew bool) error {
	now := r.sim.Now()
	var batch []revisit.ListedOrigin
	for range n {
		i := len(r.origins)
		vt := r.types[i%len(r.types)]
		url := originURL(i+1, vt.name)
		o := &origin{Origin: world.NewOrigin(url, vt.name), typ: vt, listed: now, new: isNew, enabled: true}
		o.listedUpdate = o.LastUpdate(now)
		r.index[url] = int32(i)
		r.origins = append(r.origins, o)
		batch = append(batch, r.listed(o))
	}
	return r.record(batch)
}

// originURL names the i-th origin (from 1): git origins are named as in
// upstream's simulator, so that both run the same world.
func originURL(i int, visitType string) string {
	if visitType == "git" {
		return fmt.Sprintf("https://example.com/%06d.git", i)
	}
	return fmt.Sprintf("https://example.com/%06d.%s", i, visitType)
}

// listed is o as the lister records it.
func (r *run) listed(o *origin) revisit.ListedOrigin {
	update := o.listedUpdate
	return revisit.ListedOrigin{ListerID: r.lister.ID, URL: o.URL, VisitType: o.VisitType, Enabled: true,
		LastUpdate: &update}
}

// recordChunk bounds the origins of one record call.
const recordChunk = 10_000

// record records listed origins, then wakes the rounds that wait for
// origins.
func (r *run) record(batch []revisit.ListedOrigin) error {
	for chunk := range slices.Chunk(batch, recordChunk) {
		if _, err := r.st.ListedOriginsRecord(r.ctx, chunk); err != nil {
			return fmt.Errorf("recording %d origins: %w", len(chunk), err)
		}
	}
	r.poke()
	return nil
}

// list runs the lister: it records the origins found since its
// previous run.
func (r *run) list() {
	if r.err != nil {
		return
	}
	mean := r.cfg.ListerRate * r.cfg.ListerEvery.Hours()
	n := int(math.Round(mean))
	if !r.cfg.SteadyListing {
		n = poisson(r.rand, mean)
	}
	r.fail(r.listNew(n, true))
	r.sim.After(r.cfg.ListerEvery, r.list)
}

// relist lists the known origins again: those whose last update changed
// since they were last listed.
func (r *run) relist() {
	if r.err != nil {
		return
	}
	now := r.sim.Now()
	var batch []revisit.ListedOrigin
	for _, o := range r.origins {
		if u := o.LastUpdate(now); !u.Equal(o.listedUpdate) {
			o.listedUpdate, o.enabled = u, true
			batch = append(batch, r.listed(o))
		}
	}
	r.fail(r.record(batch))
	r.sim.After(r.cfg.Relist, r.relist)
}

// poisson draws from a Poisson distribution of the given mean: by
// counting exponential gaps for small means, by its normal approximation
// for large ones.
func poisson(rnd *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 50 {
		return max(0, int(math.Round(mean+math.Sqrt(mean)*rnd.NormFloat64())))
	}
	limit, p, n := math.Exp(-mean), rnd.Float64(), 0
	for p > limit {
		p *= rnd.Float64()
		n++
	}
	return n
}

// round runs a round of vt and schedules the next.
func (r *run) round(vt *visitType) {
	if r.err != nil {
		return
	}
	vt.next, vt.pollAt = nil, time.Time{}
	step, err := vt.stepper.Round(r.ctx)
	if err != nil {
		r.fail(fmt.Errorf("round of %s: %w", vt.name, err))
		return
	}
	for _, v := range step.Visits {
		r.inFlight[v.ID] = flight{origin: r.index[v.Origin.URL], share: shareOf(vt.shares, v.Policy)}
	}
	vt.wait, vt.waitSince = step, r.sim.Now()
	vt.next = r.sim.After(step.Wait, func() { r.round(vt) })
	r.drained(vt)
	r.pokeType(vt)
}

// shareOf returns the index of the first share of the policy.
func shareOf(shares []orchestrator.Share, p revisit.Policy) int {
	return slices.IndexFunc(shares, func(s orchestrator.Share) bool { return s.Policy == p })
}

// drained ends the wait of vt for its queue to drain at the loop's next
// measure of the queue, if the queue has room now.
func (r *run) drained(vt *visitType) {
	w := vt.wait
	if !w.Drain || vt.next == nil || !vt.pollAt.IsZero() || !vt.stepper.HasRoom(r.ctx) {
		return
	}
	polls := max(1, int64(math.Ceil(float64(r.sim.Now().Sub(vt.waitSince))/float64(w.Poll))))
	at := vt.waitSince.Add(time.Duration(polls) * w.Poll)
	if !at.Before(vt.waitSince.Add(w.Wait)) {
		return
	}
	vt.next.Stop()
	vt.pollAt = at
	vt.next = r.sim.At(at, func() { r.round(vt) })
}

// poke ends the waits for origins that the store's news end.
func (r *run) poke() {
	for _, vt := range r.types {
		r.pokeType(vt)
	}
}

// pokeType ends the wait of vt for eligible origins, not sooner than
// orchestrator.WakeSpacing after it began, if the store told of some.
func (r *run) pokeType(vt *visitType) {
	if vt.wait.Woken == nil || vt.next == nil {
		return
	}
	select {
	case <-vt.wait.Woken:
	default:
		return
	}
	vt.wait.Woken = nil
	vt.next.Stop()
	at := vt.waitSince.Add(orchestrator.WakeSpacing)
	vt.next = r.sim.At(at, func() { r.round(vt) })
}

// work has a worker of vt take the next message.
func (r *run) work(vt *visitType) {
	vt.queue.Get(func(id string) { r.visit(vt, id) })
}

// visit runs the visit of message id.
func (r *run) visit(vt *visitType, id string) {
	if r.err != nil {
		return
	}
	f, ok := r.inFlight[id]
	if !ok {
		r.fail(fmt.Errorf("a worker of %s took message %s, which no round published", vt.name, id))
		return
	}
	o := r.origins[f.origin]
	now := r.sim.Now()
	v := o.Visit(now, o.attempted)
	o.attempted = now
	lost := r.cfg.LossRate > 0 && r.rand.Float64() < r.cfg.LossRate
	r.busy(vt, 1)
	r.drained(vt)
	r.sim.After(v.Duration, func() { r.ended(vt, id, f, v, lost) })
}

// ended ends a visit: the worker reports its result, unless it is lost,
// and takes the next message.
func (r *run) ended(vt *visitType, id string, f flight, v world.Visit, lost bool) {
	delete(r.inFlight, id)
	r.busy(vt, -1)
	r.work(vt)
	if r.err != nil {
		return
	}
	o, now := r.origins[f.origin], r.sim.Now()
	r.res.Counters.Total++
	if f.share >= 0 {
		vt.visits[f.share]++
	}
	if lost {
		return
	}
	status := feedback.VisitStatus{Origin: o.URL, VisitType: o.VisitType, Status: feedback.StatusPartial, Date: now}
	if v.Full {
		status.Status, status.Snapshot = feedback.StatusFull, v.Snapshot
		eventful := !slices.Equal(v.Snapshot, o.snapshot)
		if eventful {
			r.res.Counters.Eventful++
			r.res.Runtimes.add(v.Duration)
			if v.Duration > time.Hour {
				r.res.Counters.VeryLong++
			}
			if f.share >= 0 {
				vt.eventful[f.share]++
			}
		} else {
			r.res.Counters.Uneventful++
		}
		o.snapshot, o.succeeded = v.Snapshot, now
	}
	if o.new && !o.visited {
		o.visited = true
		vt.latency = append(vt.latency, now.Sub(o.listed))
	}
	r.results = append(r.results, status)
	switch {
	case len(r.results) >= r.cfg.FoldBatch:
		r.fold()
	case r.foldTimer == nil:
		r.foldTimer = r.sim.After(r.cfg.FoldWait, r.fold)
	}
}

// busy counts d more busy workers of vt from now.
func (r *run) busy(vt *visitType, d int) {
	now := r.sim.Now()
	vt.busyTime += time.Duration(vt.busy) * now.Sub(vt.busySince)
	vt.busySince = now
	vt.busy += d
}

// fold folds the results waiting.
func (r *run) fold() {
	if r.foldTimer != nil {
		r.foldTimer.Stop()
		r.foldTimer = nil
	}
	if r.err != nil || len(r.results) == 0 {
		return
	}
	res, err := feedback.Process(r.ctx, r.st, r.results, r.rand.Float64, feedback.Horizon{Clock: r.sim.Now})
	if err != nil {
		r.fail(fmt.Errorf("folding %d results: %w", len(r.results), err))
		return
	}
	for _, st := range res.Stats {
		if st.LastSuccessful != nil {
			r.origins[r.index[st.URL]].successful = *st.LastSuccessful
		}
	}
	for _, k := range res.Disable {
		r.origins[r.index[k.URL]].enabled = false
	}
	r.results = r.results[:0]
	r.poke()
}
