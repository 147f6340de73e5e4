package api

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/orchestrator"
)

// Dashboard is the summary the dashboard (package web) polls: what the
// store knows and the counters of the roles run by this process. Counters
// only grow; the dashboard derives rates from successive summaries.
type Dashboard struct {
	GeneratedAt time.Time `json:"generated_at"`
	// Orchestrator is false when no orchestrator runs in this process:
	// the counters of policies are then zero.
	Orchestrator bool                 `json:"orchestrator"`
	VisitTypes   []DashboardVisitType `json:"visit_types"`
	Listers      []DashboardLister    `json:"listers"`
	// Journal is the journal client of this process; nil when none runs
	// here.
	Journal *DashboardJournal `json:"journal,omitempty"`
}

// DashboardJournal is the state of the journal client: its topic and, by
// partition it holds, the messages not yet processed.
type DashboardJournal struct {
	Topic string           `json:"topic"`
	Lag   map[string]int64 `json:"lag"`
}

// DashboardVisitType is the state of one visit type.
type DashboardVisitType struct {
	Queue
	// Published counts the visits published; LostTotal those declared
	// lost.
	Published int64 `json:"published"`
	LostTotal int64 `json:"lost_total"`
	// Healthy is the state of the visit type's loop; nil when no loop runs
	// here.
	Healthy *bool `json:"healthy"`
	// Loop is what the visit type's loop is doing; nil when no loop runs
	// here.
	Loop *DashboardLoop `json:"loop"`
	// Paused says who paused the visit type and when, as the store says;
	// null when it is not paused.
	Paused   *Pause            `json:"paused"`
	Policies []DashboardPolicy `json:"policies"`
	// Results counts results by status (eventful, uneventful, failed,
	// not_found, ...).
	Results map[string]int64 `json:"results"`
}

// DashboardLoop is what a visit type's loop is doing (orchestrator.LoopState).
type DashboardLoop struct {
	// State is starting, filling, queue_full, no_origins, paused,
	// standing_by, waiting, unhealthy or stopped.
	State orchestrator.LoopStateName `json:"state"`
	Since time.Time                  `json:"since"`
	// NextRound is when the loop acts again at the latest: its next round
	// (queue full, no eligible origins), its next try (waiting), its next
	// ask for the lease (standing by); null while a round runs.
	NextRound *time.Time `json:"next_round"`
	// CheckEverySeconds is how often a full queue is measured, or a
	// paused loop asks whether it is resumed; null otherwise.
	CheckEverySeconds *float64 `json:"check_every_seconds"`
	// Holder is the process that drives the visit type while this one
	// stands by.
	Holder string `json:"holder,omitempty"`
	// Reason and Error say why the loop waits, or its last failure.
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// Paused says who paused the visit type and when, as the loop last
	// read it, while its state is paused.
	Paused *Pause `json:"paused,omitempty"`
}

// newDashboardLoop is the JSON form of a loop's state.
func newDashboardLoop(st orchestrator.LoopState) *DashboardLoop {
	d := &DashboardLoop{State: st.State, Since: st.Since.UTC(), Holder: st.Holder, Reason: st.Reason, Error: st.Error}
	if !st.NextRound.IsZero() {
		t := st.NextRound.UTC()
		d.NextRound = &t
	}
	if st.CheckEvery > 0 {
		secs := st.CheckEvery.Seconds()
		d.CheckEverySeconds = &secs
	}
	if st.State == orchestrator.LoopPaused {
		d.Paused = &Pause{By: st.PausedBy, At: st.PausedAt.UTC()}
	}
	return d
}

// DashboardPolicy is one policy of a visit type: its configured share of
// the free slots and the origins asked of it and returned by it.
type DashboardPolicy struct {
	Policy    string  `json:"policy"`
	Weight    int     `json:"weight"`
	Share     float64 `json:"share"`
	Requested int64   `json:"requested"`
	Fetched   int64   `json:"fetched"`
}

// DashboardLister is the scheduler metrics of one lister and visit type.
type DashboardLister struct {
	SchedulerMetrics
	Lister string `json:"lister"`
}

func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) {
	d, err := s.dashboard(r.Context())
	s.reply(w, r, d, err)
}

func (s *Server) dashboard(ctx context.Context) (Dashboard, error) {
	d := Dashboard{GeneratedAt: s.now(), Orchestrator: s.cfg.Orchestrator != nil,
		VisitTypes: []DashboardVisitType{}, Listers: []DashboardLister{}}
	if j := s.cfg.Journal; j != nil {
		d.Journal = &DashboardJournal{Topic: j.Topic(), Lag: map[string]int64{}}
		for p, lag := range j.Lag() {
			d.Journal.Lag[strconv.Itoa(int(p))] = lag
		}
	}
	qs, err := s.queues(ctx)
	if err != nil {
		return d, err
	}
	c, err := s.counters()
	if err != nil {
		return d, err
	}
	var (
		health map[string]bool
		loops  map[string]orchestrator.LoopState
	)
	if s.cfg.Orchestrator != nil {
		health = map[string]bool{}
		for vt, h := range s.cfg.Orchestrator.Health() {
			health[vt] = h.Healthy
		}
		loops = s.cfg.Orchestrator.LoopStates()
	}
	pauses, err := s.st.VisitTypePauseList(ctx)
	if err != nil {
		return d, err
	}
	paused := make(map[string]*Pause, len(pauses))
	for _, p := range pauses {
		paused[p.VisitType] = newPause(p)
	}
	for _, q := range qs {
		vt := q.VisitType
		v := DashboardVisitType{Queue: q, Published: c.get("revisit_visits_published_total", vt, ""),
			LostTotal: c.get("revisit_visits_lost_total", vt, ""), Results: c.byLabel("revisit_visit_results_total", vt),
			Policies: []DashboardPolicy{}, Paused: paused[vt]}
		if h, ok := health[vt]; ok {
			v.Healthy = &h
		}
		if st, ok := loops[vt]; ok {
			v.Loop = newDashboardLoop(st)
		}
		if s.cfg.Orchestrator != nil {
			shares := s.cfg.Orchestrator.Shares(vt)
			total := 0
			for _, sh := range shares {
				total += sh.Weight
			}
			for _, sh := range shares {
				p := string(sh.Policy)
				v.Policies = append(v.Policies, DashboardPolicy{Policy: p, Weight: sh.Weight,
					Share:     float64(sh.Weight) / float64(max(total, 1)),
					Requested: c.get("revisit_visits_requested_total", vt, p),
					Fetched:   c.get("revisit_visits_fetched_total", vt, p)})
			}
		}
		d.VisitTypes = append(d.VisitTypes, v)
	}
	ms, err := s.st.MetricsGet(ctx, nil, "")
	if err != nil {
		return d, err
	}
	ids := make([]uuid.UUID, 0, len(ms))
	for _, m := range ms {
		if !slices.Contains(ids, m.ListerID) {
			ids = append(ids, m.ListerID)
		}
	}
	ls, err := s.st.ListerGetByIDs(ctx, ids)
	if err != nil {
		return d, err
	}
	names := make(map[uuid.UUID]string, len(ls))
	for _, l := range ls {
		names[l.ID] = listerLabel(l)
	}
	for _, m := range ms {
		d.Listers = append(d.Listers, DashboardLister{SchedulerMetrics: NewSchedulerMetrics(m), Lister: names[m.ListerID]})
	}
	return d, nil
}

// listerLabel writes a lister as NAME or NAME/INSTANCE.
func listerLabel(l revisit.Lister) string {
	if l.InstanceName == "" {
		return l.Name
	}
	return l.Name + "/" + l.InstanceName
}

// labelKey holds the visit_type label of a sample and its second label
// (policy or status), if any.
type labelKey struct{ visitType, second string }

// counterSet holds the samples of the revisit_* metrics by name and
// labels.
type counterSet struct {
	values map[string]map[labelKey]int64
}

// counters reads the revisit_* counters and gauges of the registry.
func (s *Server) counters() (counterSet, error) {
	c := counterSet{values: map[string]map[labelKey]int64{}}
	if s.cfg.Metrics == nil {
		return c, nil
	}
	mfs, err := s.cfg.Metrics.Gather()
	if err != nil {
		return c, err
	}
	for _, mf := range mfs {
		vals := map[labelKey]int64{}
		for _, m := range mf.GetMetric() {
			var k labelKey
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "visit_type":
					k.visitType = lp.GetValue()
				case "policy", "status":
					k.second = lp.GetValue()
				}
			}
			vals[k] = int64(sampleValue(m))
		}
		c.values[mf.GetName()] = vals
	}
	return c, nil
}

// sampleValue is the value of a counter or gauge sample.
func sampleValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// get returns one sample, 0 if absent.
func (c counterSet) get(name, visitType, second string) int64 {
	return c.values[name][labelKey{visitType, second}]
}

// byLabel returns the samples of a visit type by their second label.
func (c counterSet) byLabel(name, visitType string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range c.values[name] {
		if k.visitType == visitType {
			out[k.second] = v
		}
	}
	return out
}
