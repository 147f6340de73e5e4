// Package listener hears what workers say about the tasks revisit sent
// them (semantics.md §6): the result of a dispatched visit is folded into
// the visit stats (package feedback) and closes the visit's in-flight
// record; events about generic task runs go to a run handler.
package listener

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/feedback"
)

// RunHandler applies events to generic task runs and returns those that
// matched no run.
type RunHandler func(ctx context.Context, events []celery.Event) (unmatched []celery.Event, err error)

// Config configures a Listener.
type Config struct {
	// Runs handles the events that are not about a dispatched visit; nil
	// counts them as unknown.
	Runs RunHandler
	// Rand is the random source of the revisit interval's spread; nil
	// uses math/rand.
	Rand func() float64
	// Clock dates results whose event carries no time, and is the clock
	// results may not be dated much beyond; nil is time.Now.
	Clock revisit.Clock
	// MaxFuture is how far beyond Clock a result may be dated
	// (results.max_future); a result dated later is not folded. 0 is
	// feedback.DefaultMaxFuture.
	MaxFuture time.Duration
	// Logger receives summaries and troubles; nil discards.
	Logger *slog.Logger
	// Metrics receives the Prometheus metrics; nil creates unregistered
	// ones.
	Metrics *Metrics
}

// Store is what the listener needs of a store: the in-flight visits its
// results close, the stats they fold into, and the task types that name
// the visit type of a result of no known visit.
type Store interface {
	feedback.Store
	// VisitsGet returns the visits among ids that exist, in any state.
	VisitsGet(ctx context.Context, ids []string) ([]revisit.Visit, error)
	// VisitsClose removes the records of visits whose result arrived, in
	// any state, and returns those that existed.
	VisitsClose(ctx context.Context, ids []string) ([]revisit.Visit, error)
	// TaskTypeList returns every task type, by name.
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)
}

// Listener consumes worker events from a broker.
type Listener struct {
	store  Store
	broker broker.Broker
	cfg    Config
	// visitTypes maps the backend name of load-* task types to their
	// visit type, for results of unknown visits.
	visitTypes map[string]string
}

// New returns a listener of b's events that records what they report in st.
func New(st Store, b broker.Broker, cfg Config) *Listener {
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}
	return &Listener{store: st, broker: b, cfg: cfg}
}

// Run consumes events until ctx is done; each batch is acknowledged only
// once handled, so a crash or an unavailable store redelivers it.
func (l *Listener) Run(ctx context.Context) error {
	return l.broker.Events(ctx, l.Handle)
}

// Handle processes one batch of events. For each dispatched visit it takes
// the visit's final event (task-result preferred to task-succeeded and
// task-failed), folds the statuses into the stats, then closes the visits;
// processing a batch twice is harmless (a result is ignored when not newer
// than the origin's last visit). The other events go to the run handler.
// Handle is not safe for concurrent use: brokers call it one batch at a
// time.
func (l *Listener) Handle(ctx context.Context, events []celery.Event) error {
	start := time.Now()
	finals, ids := finalEvents(events)
	visits, err := l.visitsOf(ctx, ids)
	if err != nil {
		return err
	}
	if err := l.foldVisitResults(ctx, visits, finals); err != nil {
		return err
	}
	if err := l.closeVisits(ctx, visits); err != nil {
		return err
	}
	unmatched, err := l.handleRuns(ctx, eventsOfNoVisit(events, visits))
	if err != nil {
		return err
	}
	if err := l.foldOrphans(ctx, unmatched); err != nil {
		return err
	}
	l.cfg.Metrics.batchSeconds.Observe(time.Since(start).Seconds())
	return nil
}

// finalEvents returns the final event of each task id of events
// (task-result preferred to task-succeeded and task-failed), and those ids
// in the order they first appear.
func finalEvents(events []celery.Event) (map[string]celery.Event, []string) {
	finals := map[string]celery.Event{}
	var ids []string
	for _, e := range events {
		if !feedback.Final(e) {
			continue
		}
		prev, seen := finals[e.UUID]
		if !seen {
			ids = append(ids, e.UUID)
		}
		if !seen || (e.Type == celery.TypeResult && prev.Type != celery.TypeResult) {
			finals[e.UUID] = e
		}
	}
	return finals, ids
}

// visitsOf returns the in-flight visits among ids.
func (l *Listener) visitsOf(ctx context.Context, ids []string) ([]revisit.Visit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	visits, err := l.store.VisitsGet(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("find the visits of %d results: %w", len(ids), err)
	}
	return visits, nil
}

// foldVisitResults folds the readable results of visits (their final
// events) into the stats.
func (l *Listener) foldVisitResults(ctx context.Context, visits []revisit.Visit, finals map[string]celery.Event) error {
	statuses := l.visitStatuses(visits, finals)
	if len(statuses) == 0 {
		return nil
	}
	res, err := feedback.Process(ctx, l.store, statuses, l.cfg.Rand, l.horizon())
	if err != nil {
		return fmt.Errorf("process %d visit results: %w", len(statuses), err)
	}
	if len(res.Disable) > 0 {
		l.cfg.Logger.Info("origins disabled after repeated failures", "origins", len(res.Disable))
	}
	return nil
}

// visitStatuses returns the visit statuses the final events of visits
// report, counts each result by outcome, and logs those it cannot read.
func (l *Listener) visitStatuses(visits []revisit.Visit, finals map[string]celery.Event) []feedback.VisitStatus {
	statuses := make([]feedback.VisitStatus, 0, len(visits))
	for _, v := range visits {
		e := finals[v.ID]
		st, ok := feedback.FromEvent(v, e)
		if ok && st.Date.IsZero() {
			st.Date = l.cfg.Clock.Now().UTC()
		}
		var invalid error
		if ok {
			invalid = st.Validate(l.horizon())
		}
		outcome := "unreadable"
		if ok && invalid == nil {
			statuses = append(statuses, st)
			outcome = st.Status
		} else {
			l.cfg.Logger.Warn("visit result without a readable outcome; the visit is closed, its stats unchanged",
				"id", v.ID, "origin", v.Origin.URL, "event", e.Type, "result", e.Result, "invalid", invalid)
		}
		l.cfg.Metrics.results.WithLabelValues(v.Origin.VisitType, outcome).Inc()
	}
	return statuses
}

// closeVisits removes the in-flight records of visits.
func (l *Listener) closeVisits(ctx context.Context, visits []revisit.Visit) error {
	if len(visits) == 0 {
		return nil
	}
	ids := make([]string, 0, len(visits))
	for _, v := range visits {
		ids = append(ids, v.ID)
	}
	if _, err := l.store.VisitsClose(ctx, ids); err != nil {
		return fmt.Errorf("close %d visits: %w", len(ids), err)
	}
	return nil
}

// eventsOfNoVisit returns the events that are not about one of visits.
func eventsOfNoVisit(events []celery.Event, visits []revisit.Visit) []celery.Event {
	matched := make(map[string]bool, len(visits))
	for _, v := range visits {
		matched[v.ID] = true
	}
	rest := make([]celery.Event, 0, len(events)-len(visits))
	for _, e := range events {
		if !matched[e.UUID] {
			rest = append(rest, e)
		}
	}
	return rest
}

// handleRuns gives events to the run handler and returns those that
// matched no task run (all of them without a run handler).
func (l *Listener) handleRuns(ctx context.Context, events []celery.Event) ([]celery.Event, error) {
	if l.cfg.Runs == nil || len(events) == 0 {
		return events, nil
	}
	unmatched, err := l.cfg.Runs(ctx, events)
	if err != nil {
		return nil, fmt.Errorf("task runs: %w", err)
	}
	return unmatched, nil
}

// foldOrphans counts the final events among unmatched as results of
// unknown tasks, and folds into the stats those that name their origin
// (see orphanStatus).
func (l *Listener) foldOrphans(ctx context.Context, unmatched []celery.Event) error {
	unknown := 0
	var orphans []feedback.VisitStatus
	for _, e := range unmatched {
		if !feedback.Final(e) {
			continue
		}
		unknown++
		st, ok, err := l.orphanStatus(ctx, e)
		if err != nil {
			return err
		}
		if ok {
			orphans = append(orphans, st)
		}
	}
	if unknown > 0 {
		l.cfg.Metrics.unknown.Add(float64(unknown))
		l.cfg.Logger.Debug("results for unknown task ids (closed already, or not sent by revisit)",
			"results", unknown, "kept_by_origin", len(orphans))
	}
	if len(orphans) > 0 {
		if _, err := feedback.Process(ctx, l.store, orphans, l.cfg.Rand, l.horizon()); err != nil {
			return fmt.Errorf("process %d results of unknown visits: %w", len(orphans), err)
		}
	}
	return nil
}

// orphanStatus returns the visit status a final event of no known visit
// reports, when the event names its origin ("origin", in the event or its
// result) and the origin's visit type ("visit_type", or the task name of a
// load-* task type): such results are kept in the stats too.
func (l *Listener) orphanStatus(ctx context.Context, e celery.Event) (feedback.VisitStatus, bool, error) {
	url := field(e, "origin")
	if url == "" {
		return feedback.VisitStatus{}, false, nil
	}
	vt := field(e, "visit_type")
	if vt == "" {
		var err error
		if vt, err = l.visitTypeOfTask(ctx, e.Name); err != nil || vt == "" {
			return feedback.VisitStatus{}, false, err
		}
	}
	v := revisit.Visit{Origin: revisit.ListedOrigin{URL: url, VisitType: vt}}
	st, ok := feedback.FromEvent(v, e)
	if ok && st.Date.IsZero() {
		st.Date = l.cfg.Clock.Now().UTC()
	}
	return st, ok && st.Validate(l.horizon()) == nil, nil
}

// horizon bounds the dates of the results the listener folds.
func (l *Listener) horizon() feedback.Horizon {
	return feedback.Horizon{Clock: l.cfg.Clock, MaxFuture: l.cfg.MaxFuture}
}

// field returns a string field of an event, or of its result object.
func field(e celery.Event, name string) string {
	if v, ok := e.Fields[name].(string); ok {
		return v
	}
	if e.VisitResult != nil {
		if v, ok := e.VisitResult.Raw[name].(string); ok {
			return v
		}
	}
	return ""
}

// visitTypeOfTask returns the visit type of the load-* task type whose
// backend (task) name is name, "" if none; the task types are read again
// when the name is not among those known.
func (l *Listener) visitTypeOfTask(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if vt, ok := l.visitTypes[name]; ok {
		return vt, nil
	}
	tts, err := l.store.TaskTypeList(ctx)
	if err != nil {
		return "", fmt.Errorf("task types: %w", err)
	}
	l.visitTypes = map[string]string{}
	for _, tt := range tts {
		if vt, ok := tt.VisitType(); ok {
			l.visitTypes[tt.BackendName] = vt
		}
	}
	return l.visitTypes[name], nil
}

// Metrics are the listener's Prometheus metrics.
type Metrics struct {
	results      *prometheus.CounterVec
	unknown      prometheus.Counter
	batchSeconds prometheus.Histogram
}

// NewMetrics creates the listener's metrics and registers them with reg
// (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visit_results_total",
			Help: "Results of dispatched visits, by visit type and status."}, []string{"visit_type", "status"}),
		unknown: prometheus.NewCounter(prometheus.CounterOpts{Name: "revisit_results_unknown_total",
			Help: "Final worker events matching no in-flight visit nor task run."}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "revisit_listener_batch_duration_seconds",
			Help: "Time to handle one batch of worker events.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
	}
	if reg != nil {
		reg.MustRegister(m.results, m.unknown, m.batchSeconds)
	}
	return m
}
