package history

import (
	"context"
	"errors"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
)

// counted are the counters sampled into series, by metric name: the
// series, and the metric's label that labels it ("" for none).
var counted = map[string]struct {
	series Series
	label  string
}{
	"revisit_visits_fetched_total": {Scheduled, "policy"},
	"revisit_visit_results_total":  {Results, "status"},
	"revisit_visits_lost_total":    {Lost, ""},
}

// grabMetric is the histogram of the grabs' latency, by visit type and
// policy.
const grabMetric = "revisit_grab_duration_seconds"

// sampleKey names one sample of a metric: its name and labels.
type sampleKey struct{ metric, visitType, label string }

// sampler reads the metrics and queues of a process into a History: each
// counter's increase since its last reading, added to the minute of the
// sample, and the measures, set as the minute's last.
type sampler struct {
	h *History
	// counters and grabs are the last reading of each counter and grab
	// histogram.
	counters map[sampleKey]float64
	grabs    map[sampleKey]histogram
	// latency is the grabs' latency of the minute being sampled, by visit
	// type.
	minute  int64
	latency map[string]histogram
}

func newSampler(h *History) *sampler {
	return &sampler{h: h, counters: map[sampleKey]float64{}, grabs: map[sampleKey]histogram{}}
}

// sample reads the metrics and the queues at time at.
func (s *sampler) sample(ctx context.Context, at time.Time) error {
	if m := minuteOf(at); m != s.minute || s.latency == nil {
		s.minute, s.latency = m, map[string]histogram{}
	}
	var errs []error
	if g := s.h.cfg.Metrics; g != nil {
		mfs, err := g.Gather()
		errs = append(errs, err)
		for _, mf := range mfs {
			if c, ok := counted[mf.GetName()]; ok {
				s.counter(mf, c.series, c.label, at)
			} else if mf.GetName() == grabMetric {
				s.grab(mf)
			}
		}
		for vt, l := range s.latency {
			if l.count > 0 {
				s.h.Set(Key{VisitType: vt, Series: GrabP95}, at, l.quantile(0.95))
				s.h.Set(Key{VisitType: vt, Series: GrabMean}, at, l.sum/l.count)
			}
		}
	}
	if measure := s.h.cfg.Queues; measure != nil {
		qs, err := measure(ctx)
		errs = append(errs, err)
		for _, q := range qs {
			if q.Depth != nil && q.FreeSlots != nil {
				s.h.Set(Key{VisitType: q.VisitType, Series: QueueDepth}, at, float64(*q.Depth))
				s.h.Set(Key{VisitType: q.VisitType, Series: FreeSlots}, at, float64(*q.FreeSlots))
			}
		}
	}
	return errors.Join(errs...)
}

// counter adds each sample's increase to its series.
func (s *sampler) counter(mf *dto.MetricFamily, series Series, label string, at time.Time) {
	for _, m := range mf.GetMetric() {
		vt, l := labelValue(m, "visit_type"), labelValue(m, label)
		k := sampleKey{metric: mf.GetName(), visitType: vt, label: l}
		cur := m.GetCounter().GetValue()
		s.h.Add(Key{VisitType: vt, Series: series, Label: outcome(series, l)}, at, increase(s.counters[k], cur))
		s.counters[k] = cur
	}
}

// increase is how much a counter read cur grew since it was read prev (0
// before its first reading: counters start at 0 with their process). A
// counter read lower than before was reset, and grew by its whole value
// since: never a negative rate.
func increase(prev, cur float64) float64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// outcome is the label of a result's series: the outcome the visit stats
// keep of its status (full and partial visits are successful), so that the
// results sampled and those recalled from the store share their series.
func outcome(series Series, status string) string {
	if series == Results && (status == feedback.StatusFull || status == feedback.StatusPartial) {
		return string(revisit.VisitSuccessful)
	}
	return status
}

// grab adds each histogram's increase to the latency of its visit type in
// the minute.
func (s *sampler) grab(mf *dto.MetricFamily) {
	for _, m := range mf.GetMetric() {
		vt := labelValue(m, "visit_type")
		k := sampleKey{metric: mf.GetName(), visitType: vt, label: labelValue(m, "policy")}
		cur := histogramOf(m.GetHistogram())
		s.latency[vt] = s.latency[vt].plus(cur.since(s.grabs[k]))
		s.grabs[k] = cur
	}
}

// labelValue returns the value of a sample's label, "" without one.
func labelValue(m *dto.Metric, name string) string {
	if name == "" {
		return ""
	}
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}
