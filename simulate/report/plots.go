package report

import (
	"fmt"
	"image/color"
	"slices"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/revisit-sched/revisit/simulate"
)

// figures builds the charts of a set of runs. Time series overlay the
// runs, one colour each; visit types get a chart each; bar charts put the
// bars of each run side by side in every category.
type figures struct {
	runs       []simulate.Result
	start, end time.Time
	// types are the runs' visit types in order of appearance, slugs their
	// names in file names.
	types, slugs []string
}

func newFigures(runs []simulate.Result) *figures {
	f := &figures{runs: runs, start: runs[0].Start, end: runs[0].End}
	for _, r := range runs {
		f.start, f.end = earliest(f.start, r.Start), latest(f.end, r.End)
		for _, vt := range r.VisitTypes {
			if !slices.Contains(f.types, vt) {
				f.types = append(f.types, vt)
			}
		}
	}
	f.slugs = slugs(f.types, "type")
	return f
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// several is whether the figures compare runs.
func (f *figures) several() bool { return len(f.runs) > 1 }

// label names run r's series of kind what in a legend: the kind alone
// with one run, else prefixed by the run's name; the run's name alone
// where the run has one kind of series.
func (f *figures) label(r simulate.Result, what string) string {
	switch {
	case what == "":
		return r.Name
	case !f.several():
		return what
	}
	return r.Name + ": " + what
}

// colour is the colour of the series of kind k of run i: the run's when
// several runs share the chart, else the kind's.
func (f *figures) colour(i, k int) color.Color {
	if f.several() {
		return colour(i)
	}
	return colour(k)
}

// runsCaption ends a caption when several runs share a chart.
func (f *figures) runsCaption() string {
	if f.several() {
		return " One colour per run."
	}
	return ""
}

// charts are all the figures, in the page's order.
func (f *figures) charts() ([]*chart, error) {
	var all []*chart
	add := func(c *chart, err error) error {
		if c != nil {
			all = append(all, c)
		}
		return err
	}
	if err := add(f.origins()); err != nil {
		return nil, err
	}
	for i := range f.types {
		for _, build := range []func(int) (*chart, error){f.freshness, f.queueDepth, f.utilization, f.policies} {
			if err := add(build(i)); err != nil {
				return nil, err
			}
		}
	}
	if err := add(f.latency()); err != nil {
		return nil, err
	}
	runtimes, err := f.runtimes()
	return append(all, runtimes...), err
}

// sampleValue is kind k of a quantity at a sample of a run, and whether
// the sample has it.
type sampleValue func(s simulate.Sample, k int) (float64, bool)

// lines adds to ch a line for each run and kind (a quantile, a count);
// value gives the run's values, or nil where the run lacks the quantity.
func (f *figures) lines(ch *chart, kinds []string, value func(r simulate.Result) sampleValue) error {
	ch.timeAxis(f.start, f.end)
	for i, r := range f.runs {
		v := value(r)
		if v == nil {
			continue
		}
		for k, kind := range kinds {
			xys := make(plotter.XYs, 0, len(r.Samples))
			for _, s := range r.Samples {
				if y, ok := v(s, k); ok {
					xys = append(xys, plotter.XY{X: unix(s.Time), Y: y})
				}
			}
			if err := ch.line(f.label(r, kind), xys, f.colour(i, k), dashes[k%len(dashes)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ofType gives the values of the visit type vt in the samples of a run,
// or nil where the run has no vt.
func ofType(vt string, value func(ts simulate.TypeSample, k int) (float64, bool)) func(r simulate.Result) sampleValue {
	return func(r simulate.Result) sampleValue {
		i := slices.Index(r.VisitTypes, vt)
		if i < 0 {
			return nil
		}
		return func(s simulate.Sample, k int) (float64, bool) { return value(s.ByType[i], k) }
	}
}

func (f *figures) origins() (*chart, error) {
	ch := newChart("origins", "origins over time", "simulated time (UTC)", "origins",
		"Origins the scheduler knows of, those of them never visited, and those whose last change is newer "+
			"than their last successful visit, summed over listers and visit types, every sample."+f.runsCaption())
	ch.grid(true, true)
	err := f.lines(ch, []string{"known", "never visited", "pending changes"},
		func(simulate.Result) sampleValue {
			return func(s simulate.Sample, k int) (float64, bool) {
				return float64([]int64{s.Known, s.NeverVisited, s.PendingChanges}[k]), true
			}
		})
	return ch, err
}

func (f *figures) freshness(t int) (*chart, error) {
	vt := f.types[t]
	var worst time.Duration
	for _, r := range f.runs {
		if i := slices.Index(r.VisitTypes, vt); i >= 0 {
			for _, s := range r.Samples {
				worst = max(worst, s.ByType[i].Freshness.P99)
			}
		}
	}
	u := unitFor(worst)
	ch := newChart("freshness-"+f.slugs[t], vt+" freshness", "simulated time (UTC)",
		"lag behind the last change ("+u.name+")",
		"How far the last successful visit of each visited "+vt+" origin lags behind the origin's last change: "+
			"the median (p50), p90 and p99 over the visited origins, every sample once one is visited. "+
			"0 means the visits saw the last change."+
			f.runsCaption())
	ch.grid(true, true)
	err := f.lines(ch, []string{"p50", "p90", "p99"}, ofType(vt, func(ts simulate.TypeSample, k int) (float64, bool) {
		q := ts.Freshness
		return u.of([]time.Duration{q.P50, q.P90, q.P99}[k]), ts.Visited > 0
	}))
	ch.plot.Y.Min = 0
	return ch, err
}

func (f *figures) queueDepth(t int) (*chart, error) {
	vt := f.types[t]
	ch := newChart("queue-depth-"+f.slugs[t], vt+" queue depth", "simulated time (UTC)", "messages waiting",
		"Visits of "+vt+" origins waiting in the visit type's queue for a worker, every sample."+f.runsCaption())
	ch.grid(true, true)
	err := f.lines(ch, []string{""}, ofType(vt, func(ts simulate.TypeSample, _ int) (float64, bool) {
		return float64(ts.QueueDepth), true
	}))
	ch.plot.Y.Min = 0
	return ch, err
}

func (f *figures) utilization(t int) (*chart, error) {
	vt := f.types[t]
	ch := newChart("utilization-"+f.slugs[t], vt+" worker utilization", "simulated time (UTC)", "workers busy (%)",
		"Share of the "+vt+" workers' time spent visiting since the previous sample."+f.runsCaption())
	ch.grid(true, true)
	err := f.lines(ch, []string{""}, ofType(vt, func(ts simulate.TypeSample, _ int) (float64, bool) {
		return 100 * ts.Utilization, true
	}))
	ch.plot.Y.Min, ch.plot.Y.Max = 0, 100
	return ch, err
}

// policies is a chart of the visit type's policies: horizontal bars of the
// share of the visits each policy chose, beside its configured share.
func (f *figures) policies(t int) (*chart, error) {
	vt := f.types[t]
	var names []string
	for _, r := range f.runs {
		for _, p := range r.Policies {
			if p.VisitType == vt && !slices.Contains(names, string(p.Policy)) {
				names = append(names, string(p.Policy))
			}
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	caption := "Share of the " + vt + " visits each policy chose (full bars) beside the share its weight " +
		"configures (light bars)."
	if f.several() {
		caption += " One colour per run, the runs' bars side by side."
	}
	ch := newChart("policies-"+f.slugs[t], vt+" visits per policy", "share of the visit type's visits (%)", "",
		caption)
	ch.grid(true, false)
	ch.horizontal = true
	// The first policy on top: categories count from the bottom.
	slices.Reverse(names)
	ch.categories(names)
	n := 2 * len(f.runs)
	const bar = 9
	ch.height = vg.Inch + vg.Length(len(names)*(n*bar+12))
	for i, r := range f.runs {
		configured, actual := make([]float64, len(names)), make([]float64, len(names))
		for _, p := range r.Policies {
			if p.VisitType == vt {
				c := slices.Index(names, string(p.Policy))
				configured[c], actual[c] = 100*p.Configured, 100*p.Share
			}
		}
		// The first run on top: bars count from the bottom too.
		slot := n - 2*i - 1
		if err := ch.bars(f.label(r, "configured"), configured, tint(colour(i), 0.6), slot, n, bar); err != nil {
			return nil, err
		}
		if err := ch.bars(f.label(r, "actual"), actual, colour(i), slot-1, n, bar); err != nil {
			return nil, err
		}
	}
	ch.plot.X.Min = 0
	return ch, nil
}

// groupBar is the width of a bar among n in each of k categories of a
// vertical bar chart: the group takes most of its category's room.
func groupBar(k, n int) vg.Length {
	room := (chartWidth - 3*vg.Inch) / vg.Length(k)
	return min(vg.Points(16), 0.8*room/vg.Length(n))
}

// latency is a chart of the first-visit latencies: a bar per quantile and
// run for each visit type.
func (f *figures) latency() (*chart, error) {
	var types []string
	var worst time.Duration
	visited := make(map[string]bool)
	for _, r := range f.runs {
		for _, l := range r.FirstVisits {
			if !slices.Contains(types, l.VisitType) {
				types = append(types, l.VisitType)
			}
			worst = max(worst, l.P99)
			visited[l.VisitType] = visited[l.VisitType] || l.Visited > 0
		}
	}
	if len(types) == 0 {
		return nil, nil
	}
	// A visit type without bars says why.
	labels := slices.Clone(types)
	for i, vt := range types {
		if !visited[vt] {
			labels[i] += " (none visited)"
		}
	}
	u := unitFor(worst)
	caption := "How long origins listed after the start waited for the end of their first visit, by visit type: " +
		"the median (p50), p90 and p99 over those visited before the end of the simulation."
	if f.several() {
		caption += " One colour per run, lighter for the lower quantiles."
	}
	ch := newChart("first-visit-latency", "first-visit latency", "visit type",
		"wait for the first visit ("+u.name+")", caption)
	ch.grid(false, true)
	ch.categories(labels)
	quantiles := []string{"p50", "p90", "p99"}
	n := len(quantiles) * len(f.runs)
	width := groupBar(len(types), n)
	for i, r := range f.runs {
		for k, q := range quantiles {
			values := make([]float64, len(types))
			for _, l := range r.FirstVisits {
				values[slices.Index(types, l.VisitType)] = u.of([]time.Duration{l.P50, l.P90, l.P99}[k])
			}
			c := f.colour(i, k)
			if f.several() {
				c = tint(c, []float64{0.6, 0.3, 0}[k])
			}
			if err := ch.bars(f.label(r, q), values, c, i*len(quantiles)+k, n, width); err != nil {
				return nil, err
			}
		}
	}
	ch.plot.Y.Min = 0
	return ch, nil
}

// runtimes are the histograms of the eventful visits' durations: one
// chart for the runs whose buckets match, a bar per run in each bucket.
func (f *figures) runtimes() ([]*chart, error) {
	type group struct {
		bounds []time.Duration
		runs   []int
	}
	var groups []group
	for i, r := range f.runs {
		if len(r.Runtimes.Counts) == 0 {
			continue
		}
		g := slices.IndexFunc(groups, func(g group) bool { return slices.Equal(g.bounds, r.Runtimes.Bounds) })
		if g < 0 {
			g = len(groups)
			groups = append(groups, group{bounds: r.Runtimes.Bounds})
		}
		groups[g].runs = append(groups[g].runs, i)
	}
	var charts []*chart
	for gi, g := range groups {
		name := "runtimes"
		if len(groups) > 1 {
			name = fmt.Sprintf("runtimes-%d", gi+1)
		}
		caption := "Eventful visits by duration, in buckets of the simulation's histogram."
		if len(g.runs) > 1 {
			caption += " One colour per run."
		}
		ch := newChart(name, "eventful visit durations", "visit duration", "eventful visits", caption)
		ch.grid(false, true)
		labels := bucketLabels(g.bounds)
		ch.categories(labels)
		width := groupBar(len(labels), len(g.runs))
		for j, i := range g.runs {
			r := f.runs[i]
			counts := make([]float64, len(r.Runtimes.Counts))
			for b, c := range r.Runtimes.Counts {
				counts[b] = float64(c)
			}
			if err := ch.bars(f.label(r, ""), counts, colour(i), j, len(g.runs), width); err != nil {
				return nil, err
			}
		}
		ch.plot.Y.Min = 0
		charts = append(charts, ch)
	}
	return charts, nil
}

// bucketLabels name a histogram's buckets by their bounds: "≤ 5m" up to
// the last bound, then "> 1h".
func bucketLabels(bounds []time.Duration) []string {
	if len(bounds) == 0 {
		return []string{"all"}
	}
	labels := make([]string, 0, len(bounds)+1)
	for _, b := range bounds {
		labels = append(labels, "≤ "+shortDuration(b))
	}
	return append(labels, "> "+shortDuration(bounds[len(bounds)-1]))
}
