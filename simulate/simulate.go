// Package simulate runs revisit's scheduling on a simulated world with a
// simulated clock (revisit simulate): the real store, the orchestrator's
// rounds (orchestrator.Stepper) and the fold of results (feedback.Process)
// drive simulated workers that visit the origins of package world, and a
// lister that finds new origins. Every random choice comes from one seed,
// and the clock is simulated everywhere, the store's included, so that a
// seed gives the same Result every time.
//
// Nothing of revisit's scheduling crosses visit types: each has its
// rounds, queue, workers, queue positions and results. So each visit type
// of each scenario is a part simulated apart, on its own clock and in its
// own temporary store, as many at once as there are cores, in this process
// (RunAll) or wherever a PartRunner puts it (RunParts), and the parts add
// up to the scenario's Result.
package simulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/simulate/des"
	"github.com/revisit-sched/revisit/simulate/world"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
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

// orchestratorConfig returns the scenario's orchestrator configuration with the
// simulation's owner, logger, lease and visit timeout; Clock, Rand and
// VisitTypes are each part's.
func (sc Scenario) orchestratorConfig(cfg Config) orchestrator.Config {
	oc := sc.Orchestrator
	oc.Owner, oc.Logger = "simulator", slog.New(slog.DiscardHandler)
	oc.LeaseTTL = cfg.Duration + 24*time.Hour
	if oc.VisitTimeout == 0 {
		oc.VisitTimeout = 24 * time.Hour
	}
	return oc
}

// Run simulates the scenario on the world of cfg and returns what it
// measured. It stops early, with ctx's error, when ctx is done.
func Run(ctx context.Context, cfg Config, sc Scenario) (Result, error) {
	res, err := RunAll(ctx, cfg, []Scenario{sc})
	if err != nil {
		return Result{}, err
	}
	return res[0], nil
}

// RunAll simulates each scenario on the same world of cfg, in this
// process, and returns their Results in order (RunParts with RunPart).
func RunAll(ctx context.Context, cfg Config, scenarios []Scenario) ([]Result, error) {
	return RunParts(ctx, cfg, scenarios, func(ctx context.Context, p Part) (Result, error) {
		return RunPart(ctx, cfg, scenarios, p)
	})
}

// Part names one part of a simulation: the visit type cfg.VisitTypes[VisitType]
// under scenarios[Scenario].
type Part struct{ Scenario, VisitType int }

// A PartRunner simulates one part and returns what it measured, as
// RunPart does, wherever it likes (in this process, in a child process).
type PartRunner func(ctx context.Context, p Part) (Result, error)

// RunParts simulates each scenario on the same world of cfg, running
// every part with run, and returns the scenarios' Results in order. Parts
// run as many at once as there are cores (each part is one goroutine's
// work; more at once only take turns on the cores and evict each other's
// data from their caches); with cfg.Store, one after another in that store.
func RunParts(ctx context.Context, cfg Config, scenarios []Scenario, run PartRunner) ([]Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	parts := make([][]Result, len(scenarios))
	g, gctx := errgroup.WithContext(ctx)
	limit := runtime.GOMAXPROCS(0)
	if cfg.Store != "" {
		limit = 1
	}
	g.SetLimit(limit)
	for i := range scenarios {
		parts[i] = make([]Result, len(cfg.VisitTypes))
		for k := range cfg.VisitTypes {
			g.Go(func() error {
				res, err := run(gctx, Part{Scenario: i, VisitType: k})
				if err != nil {
					return fmt.Errorf("%s: %w", cfg.VisitTypes[k], err)
				}
				parts[i][k] = res
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	results := make([]Result, len(scenarios))
	for i, sc := range scenarios {
		results[i] = merge(cfg, sc.orchestratorConfig(cfg).VisitTimeout, parts[i])
	}
	return results, nil
}

// RunPart simulates part p of the scenarios on the world of cfg, in this
// process, in the store of cfg or a temporary one.
func RunPart(ctx context.Context, cfg Config, scenarios []Scenario, p Part) (Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if p.Scenario < 0 || p.Scenario >= len(scenarios) || p.VisitType < 0 || p.VisitType >= len(cfg.VisitTypes) {
		return Result{}, fmt.Errorf("part %d/%d: no such part of %d scenarios of %d visit types",
			p.Scenario, p.VisitType, len(scenarios), len(cfg.VisitTypes))
	}
	return runPart(ctx, cfg, scenarios[p.Scenario], p.VisitType)
}

// runPart simulates the k-th visit type of cfg under the scenario, in the
// store of cfg or a temporary one.
func runPart(ctx context.Context, cfg Config, sc Scenario, k int) (Result, error) {
	sim := des.New(cfg.Start)
	st, err := openStore(ctx, cfg, k, sim.Now)
	if err != nil {
		return Result{}, fmt.Errorf("store: %w", err)
	}
	defer st.Close()
	r, err := newRun(ctx, cfg, sc, k, sim, st)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	return r.run(ctx)
}

// memoryOrigins bounds the origins of a visit type simulated in a store
// held in memory, which holds at most 1 GiB (some 1.5 million origins).
const memoryOrigins = 1_000_000

// temporaryStores numbers the temporary stores held in memory, whose names
// must differ within the process.
var temporaryStores atomic.Int64

// openStore opens the store of the k-th visit type: cfg.Store, or else a
// temporary one, in memory when its origins fit, in a file otherwise; the
// temporary store is gone once closed.
func openStore(ctx context.Context, cfg Config, k int, clock revisit.Clock) (store.Store, error) {
	opts := store.Options{Clock: clock}
	if cfg.Store != "" {
		return store.Open(ctx, cfg.Store, opts)
	}
	origins := float64(cfg.Origins)/float64(len(cfg.VisitTypes)) +
		cfg.ListerRate*cfg.Duration.Hours()/float64(len(cfg.VisitTypes))
	if origins <= memoryOrigins {
		return sqlite.OpenMemory(ctx, fmt.Sprintf("revisit-simulate-%d", temporaryStores.Add(1)), opts)
	}
	dir, err := os.MkdirTemp("", "revisit-simulate-")
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "simulate.db"), opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return removedOnClose{st, dir}, nil
}

// removedOnClose is a store in a temporary directory, removed once the
// store is closed.
type removedOnClose struct {
	*sqlite.Store
	dir string
}

func (s removedOnClose) Close() error {
	return errors.Join(s.Store.Close(), os.RemoveAll(s.dir))
}

// run is the simulation of one visit type of a scenario under way.
type run struct {
	ctx  context.Context
	cfg  Config
	sim  *des.Sim
	st   store.Store
	rand *rand.Rand
	// part is the visit type's place in cfg.VisitTypes; its origins are
	// the world's origins of that place modulo the number of visit types.
	part int
	vt   *visitType
	// model is the world's; listers record its origins, one a lister of
	// the world; listerRuns counts the runs of upstream's lister.
	model      *world.Model
	listers    []revisit.Lister
	listerRuns int
	// origins are the visit type's origins, in the order listed; index is
	// by URL.
	origins []*origin
	index   map[string]int32
	// inFlight are the visits published and not ended, by message id.
	inFlight map[string]flight
	// results wait to be folded; foldTimer flushes them.
	results   []feedback.VisitStatus
	foldTimer *des.Timer
	// lags holds the freshness lags of the latest sample, its room reused.
	lags []time.Duration
	res  Result
	err  error
}

// origin is the simulation's state of one origin.
type origin struct {
	world.Origin
	// listed is when the lister first recorded it; listedUpdate, the last
	// update it recorded.
	listed       time.Time
	listedUpdate time.Time
	// update and nextUpdate are its last commit and the next one, as
	// lastUpdate last found them.
	update, nextUpdate time.Time
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

// lastUpdate returns the time of the origin's last commit at or before
// now, which moves forward: it asks the world again only once now
// reaches the next commit (samples ask for every origin's every hour).
func (o *origin) lastUpdate(now time.Time) time.Time {
	if !now.Before(o.nextUpdate) {
		o.update, o.nextUpdate = o.Updates(now)
	}
	return o.update
}

// listerUpdate returns the last update its lister gives of the origin at
// now: zero when it gives none.
func (o *origin) listerUpdate(now time.Time) time.Time {
	if o.NoLastUpdate {
		return time.Time{}
	}
	return o.lastUpdate(now)
}

// flight is a published visit: its origin and the share that chose it.
type flight struct {
	origin int32
	share  int
}

// visitType is the queue, workers and rounds of the simulated visit type.
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

// seeded returns a random source of the part drawn from the seed and
// stream: the first visit type's is the same whatever the others.
func seeded(cfg Config, part int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^stream^uint64(part)<<32))
}

func newRun(ctx context.Context, cfg Config, sc Scenario, part int, sim *des.Sim, st store.Store) (*run, error) {
	name := cfg.VisitTypes[part]
	r := &run{ctx: ctx, cfg: cfg, sim: sim, st: st, rand: seeded(cfg, part, 0x5eed), part: part,
		index: map[string]int32{}, inFlight: map[string]flight{}}
	if err := r.checkEmpty(name); err != nil {
		return nil, err
	}
	var err error
	if r.model, err = world.New(*cfg.World); err != nil {
		return nil, err
	}
	for _, l := range cfg.World.Listers {
		lister, err := r.lister(l.Name)
		if err != nil {
			return nil, fmt.Errorf("lister %s: %w", l.Name, err)
		}
		r.listers = append(r.listers, lister)
	}
	backend := "simulate." + name
	if err := st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-" + name, Description: "simulated visits",
		BackendName: backend, MaxQueueLength: cfg.QueueCapacity}); err != nil {
		return nil, fmt.Errorf("task type load-%s: %w", name, err)
	}
	vt := &visitType{name: name, queue: des.NewQueue[string](sim, 0), workers: cfg.workers(name), busySince: cfg.Start}
	oc := sc.orchestratorConfig(cfg)
	oc.Clock, oc.Rand, oc.VisitTypes = sim.Now, seeded(cfg, part, 0x0c4e), []string{name}
	o, err := orchestrator.New(st, &simBroker{queues: map[string]*des.Queue[string]{backend: vt.queue}}, oc)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	vt.shares = o.Shares(name)
	vt.visits, vt.eventful = make([]int64, len(vt.shares)), make([]int64, len(vt.shares))
	if vt.stepper, err = o.Stepper(ctx, name); err != nil {
		return nil, err
	}
	r.vt = vt
	r.res = Result{Name: sc.Name, VisitTypes: []string{name}, Start: cfg.Start, End: cfg.Start.Add(cfg.Duration),
		Runtimes: Histogram{Bounds: runtimeBounds}}
	r.res.Runtimes.Counts = make([]int64, len(runtimeBounds)+1)
	return r, nil
}

// listerNamespace draws the ids of the simulation's listers.
var listerNamespace = uuid.MustParse("6f1c2d7e-3b0a-4e8f-9a51-7c2e4b9d0f13")

// lister returns the world's lister of that name from the store, created
// with an id drawn from its name if missing: the ids order the listers'
// origins where a grab's order ties, so that they must be the same from
// one run to the next.
func (r *run) lister(name string) (revisit.Lister, error) {
	l, err := r.st.ListerGet(r.ctx, name, "simulator")
	if revisit.Code(err) != revisit.CodeNotFound {
		return l, err
	}
	now := r.sim.Now()
	l = revisit.Lister{ID: uuid.NewSHA1(listerNamespace, []byte(name)), Name: name, InstanceName: "simulator",
		Created: now, Updated: now, CurrentState: json.RawMessage("{}")}
	return l, r.st.ListersImport(r.ctx, []revisit.Lister{l})
}

// checkEmpty refuses a store that holds origins of the visit type
// already: their visits would mix with the simulated ones.
func (r *run) checkEmpty(visitType string) error {
	ms, err := r.st.MetricsUpdate(r.ctx, nil, r.sim.Now())
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	var known int64
	for _, m := range ms {
		if m.VisitType == visitType {
			known += m.OriginsKnown
		}
	}
	if known > 0 {
		return fmt.Errorf("the store lists %s origins already (%d): a simulation needs a store without origins "+
			"of the visit types it simulates", visitType, known)
	}
	return nil
}

func (r *run) close() {
	if r.vt != nil {
		_ = r.vt.stepper.Close(context.Background())
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
	if err := r.listNew(r.initialOrigins(), false); err != nil {
		return Result{}, err
	}
	for range r.vt.workers {
		r.work()
	}
	r.sim.At(cfg.Start, r.round)
	if cfg.UpstreamLister {
		r.sim.At(cfg.Start, r.listAgain)
	} else {
		r.sim.After(cfg.ListerEvery, r.list)
		for i := range r.listers {
			r.relistEvery(i)
		}
	}
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

// initialOrigins returns how many of the world's origins at the start are
// of the part's visit type: the world's i-th origin is of the visit type
// at i modulo the number of visit types.
func (r *run) initialOrigins() int {
	types := len(r.cfg.VisitTypes)
	return (r.cfg.Origins - r.part + types - 1) / types
}

// listNew adds n origins of the visit type to the world and records them;
// isNew marks those the lister found after the start.
func (r *run) listNew(n int, isNew bool) error {
	now := r.sim.Now()
	var batch []revisit.ListedOrigin
	for range n {
		i := len(r.origins)
		url := originURL(i*len(r.cfg.VisitTypes)+r.part+1, r.vt.name)
		o := &origin{Origin: r.model.NewOrigin(url, r.vt.name), listed: now, new: isNew, enabled: true}
		o.listedUpdate = o.listerUpdate(now)
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

// listed is o as its lister records it.
func (r *run) listed(o *origin) revisit.ListedOrigin {
	l := revisit.ListedOrigin{ListerID: r.listers[o.Lister].ID, URL: o.URL, VisitType: o.VisitType, Enabled: true}
	if !o.NoLastUpdate {
		update := o.listedUpdate
		l.LastUpdate = &update
	}
	return l
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
	r.pokeRound()
	return nil
}

// list runs the lister: it records the origins of the visit type found
// since its previous run, its part of the lister's rate.
func (r *run) list() {
	if r.err != nil {
		return
	}
	types := len(r.cfg.VisitTypes)
	mean := r.cfg.ListerRate * r.cfg.ListerEvery.Hours()
	n := poisson(r.rand, mean/float64(types))
	if r.cfg.SteadyListing {
		all := int(math.Round(mean))
		n = all / types
		if r.part < all%types {
			n++
		}
	}
	r.fail(r.listNew(n, true))
	r.sim.After(r.cfg.ListerEvery, r.list)
}

// listAgain runs the lister of Software Heritage's simulator, whose count
// of origins restarted at the start: its k-th run lists the world's first
// k·ListerRate·ListerEvery origins (the visit type's part of them) with
// their current last update, those the world does not have yet being new.
func (r *run) listAgain() {
	if r.err != nil {
		return
	}
	r.listerRuns++
	now, types := r.sim.Now(), len(r.cfg.VisitTypes)
	all := int(math.Round(float64(r.listerRuns) * r.cfg.ListerRate * r.cfg.ListerEvery.Hours()))
	n := (all - r.part + types - 1) / types
	known := min(n, len(r.origins))
	batch := make([]revisit.ListedOrigin, 0, known)
	for _, o := range r.origins[:known] {
		o.listedUpdate, o.enabled = o.listerUpdate(now), true
		batch = append(batch, r.listed(o))
	}
	r.fail(r.record(batch))
	if n > known {
		r.fail(r.listNew(n-known, true))
	}
	r.sim.After(r.cfg.ListerEvery, r.listAgain)
}

// relistEvery has the i-th lister of the world list its origins again
// after its cadence, or Config.Relist when set, and so on.
func (r *run) relistEvery(i int) {
	every := time.Duration(r.cfg.World.Listers[i].RelistEvery)
	if r.cfg.Relist > 0 {
		every = r.cfg.Relist
	}
	r.sim.After(every, func() {
		r.relist(i)
		r.relistEvery(i)
	})
}

// relist has the i-th lister of the world list its origins again, with
// their last update: an incremental lister those whose last update
// changed since it last listed them, another every origin not gone.
func (r *run) relist(i int) {
	if r.err != nil {
		return
	}
	now, incremental := r.sim.Now(), r.cfg.World.Listers[i].Incremental
	var batch []revisit.ListedOrigin
	for _, o := range r.origins {
		if o.Lister != i || o.Gone {
			continue
		}
		if u := o.listerUpdate(now); !incremental || !u.Equal(o.listedUpdate) {
			o.listedUpdate, o.enabled = u, true
			batch = append(batch, r.listed(o))
		}
	}
	r.fail(r.record(batch))
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

// round runs a round and schedules the next.
func (r *run) round() {
	if r.err != nil {
		return
	}
	vt := r.vt
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
	vt.next = r.sim.After(step.Wait, r.round)
	r.drained()
	r.pokeRound()
}

// shareOf returns the index of the first share of the policy.
func shareOf(shares []orchestrator.Share, p revisit.Policy) int {
	return slices.IndexFunc(shares, func(s orchestrator.Share) bool { return s.Policy == p })
}

// drained ends the round's wait for the queue to drain at the loop's next
// measure of the queue, if the queue has room now.
func (r *run) drained() {
	vt := r.vt
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
	vt.next = r.sim.At(at, r.round)
}

// pokeRound ends the round's wait for eligible origins, not sooner than
// orchestrator.WakeSpacing after it began, if the store told of some.
func (r *run) pokeRound() {
	vt := r.vt
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
	vt.next = r.sim.At(at, r.round)
}

// work has a worker take the next message.
func (r *run) work() {
	r.vt.queue.Get(r.visit)
}

// visit runs the visit of message id.
func (r *run) visit(id string) {
	if r.err != nil {
		return
	}
	f, ok := r.inFlight[id]
	if !ok {
		r.fail(fmt.Errorf("a worker of %s took message %s, which no round published", r.vt.name, id))
		return
	}
	o := r.origins[f.origin]
	now := r.sim.Now()
	v := o.Visit(now, o.attempted)
	if v.Outcome != world.Failed {
		o.attempted = now // the forge was reached
	}
	lost := r.cfg.LossRate > 0 && r.rand.Float64() < r.cfg.LossRate
	r.busy(1)
	r.drained()
	r.sim.After(v.Duration, func() { r.ended(id, f, v, lost) })
}

// ended ends a visit: the worker reports its result, unless it is lost,
// and takes the next message.
func (r *run) ended(id string, f flight, v world.Visit, lost bool) {
	vt := r.vt
	delete(r.inFlight, id)
	r.busy(-1)
	r.work()
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
	status := feedback.VisitStatus{Origin: o.URL, VisitType: o.VisitType, Status: statuses[v.Outcome], Date: now}
	if v.Outcome == world.Full {
		status.Snapshot = v.Snapshot
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

// statuses are the visit statuses of the world's outcomes.
var statuses = map[world.Outcome]string{world.Full: feedback.StatusFull, world.Partial: feedback.StatusPartial,
	world.Failed: feedback.StatusFailed, world.NotFound: feedback.StatusNotFound}

// busy counts d more busy workers from now.
func (r *run) busy(d int) {
	vt, now := r.vt, r.sim.Now()
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
	r.pokeRound()
}
