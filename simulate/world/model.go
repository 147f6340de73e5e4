// Package world is the simulated world of revisit simulate: origins whose
// commits come at a steady pace derived from their URL, the model of
// Software Heritage's simulator, so that both simulators can run the same
// world (Upstream). An origin with a commit every c seconds has had one at
// every multiple of c since the epoch; visiting it costs 0.5 s plus 0.1 s
// per commit since the previous attempt, and a visit that would take more
// than two hours stops there, partial, without a snapshot. A Model of
// other Params changes those figures, and adds what upstream's world
// lacks (Default): first visits whose cost says nothing of recent
// activity, origins listed without a last update, origins gone, listers
// of their own cadence, forges down for a while.
package world

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/revisit-sched/revisit/config"
)

// Upstream's figures, the defaults of Params.
var (
	// Epoch is when every origin's commits start.
	Epoch = time.Date(2015, 9, 1, 0, 0, 0, 0, time.UTC)
	// MaxInterval bounds the time between two commits: ten years of 365
	// days.
	MaxInterval = 10 * 365 * 24 * time.Hour
)

const (
	// MinRunTime is the cost of a visit that finds nothing new.
	MinRunTime = 500 * time.Millisecond
	// PerCommit is the cost of each commit a visit fetches.
	PerCommit = 100 * time.Millisecond
	// MaxRunTime is the longest visit: one that would take longer ends
	// partial after it.
	MaxRunTime = 2 * time.Hour
	// FirstLookBack is how far back the commits of an origin's first
	// visit go.
	FirstLookBack = 365 * 24 * time.Hour
)

// Model is the world of some Params, ready to make origins.
type Model struct {
	p Params
	// The figures in seconds.
	epoch                               time.Time
	minInterval, intervalSpan           float64
	minRun, perCommit, maxRun, lookBack float64
	independent                         bool
	// listerBounds are the listers' cumulative shares.
	listerBounds []float64
}

// New returns the Model of p, or the error of p.Validate.
func New(p Params) (*Model, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	secs := func(d config.Duration) float64 { return time.Duration(d).Seconds() }
	m := &Model{p: p, epoch: p.Commits.Epoch, minInterval: secs(p.Commits.MinInterval),
		intervalSpan: secs(p.Commits.MaxInterval) / secs(p.Commits.MinInterval),
		minRun:       secs(p.Visits.MinRunTime), perCommit: secs(p.Visits.PerCommit),
		maxRun: secs(p.Visits.MaxRunTime), lookBack: secs(p.Visits.FirstLookBack),
		independent: p.Visits.FirstVisitCost == Independent}
	bound := 0.0
	for _, l := range p.Listers {
		bound += l.Share
		m.listerBounds = append(m.listerBounds, bound)
	}
	return m, nil
}

// Params returns the parameters of the model.
func (m *Model) Params() Params { return m.p }

// upstream is the model of Upstream, that of the origins made without one.
var upstream = func() *Model {
	m, err := New(Upstream())
	if err != nil {
		panic(err)
	}
	return m
}()

// Origin is one origin of the world: the pace of its commits and what
// sets it apart.
type Origin struct {
	URL       string
	VisitType string
	// Interval is the time between two commits, in seconds, log-uniform
	// over origins.
	Interval float64
	// firstInterval is the pace of the commits its first visit fetches:
	// Interval, or another pace when the first visit's cost is
	// independent of recent activity.
	firstInterval float64
	// Lister is the index of the lister that lists it (Params.Listers).
	Lister int
	// NoLastUpdate: its lister gives no last update.
	NoLastUpdate bool
	// Gone: every visit finds nothing (not_found).
	Gone bool
	// forge is its forge's number (Forges).
	forge int
	m     *Model
}

// NewOrigin returns the origin of url in upstream's world (Upstream).
func NewOrigin(url, visitType string) Origin { return upstream.NewOrigin(url, visitType) }

// NewOrigin returns the origin of url: the first two bytes of the MD5 of
// the URL, read as a little-endian fraction of 65536, place its commit
// interval on a log scale between the bounds (upstream's rule); the next
// bytes, two by two, draw the same way the pace of its first visit's
// commits, its lister, whether it has a last update, whether it is gone
// and its forge.
func (m *Model) NewOrigin(url, visitType string) Origin {
	sum := md5.Sum([]byte(url))
	fraction := func(i int) float64 { return float64(binary.LittleEndian.Uint16(sum[i:])) / 65536 }
	o := Origin{URL: url, VisitType: visitType, Interval: m.interval(fraction(0)), m: m,
		NoLastUpdate: fraction(6) < m.p.Origins.WithoutLastUpdate, Gone: fraction(8) < m.p.Origins.Gone}
	o.firstInterval = o.Interval
	if m.independent {
		o.firstInterval = m.interval(fraction(2))
	}
	for o.Lister < len(m.listerBounds)-1 && fraction(4) >= m.listerBounds[o.Lister] {
		o.Lister++
	}
	if m.p.Forges.Count > 0 {
		o.forge = int(binary.LittleEndian.Uint16(sum[10:])) % m.p.Forges.Count
	}
	return o
}

// interval returns the commit interval at fraction f of the log scale.
func (m *Model) interval(f float64) float64 { return m.minInterval * math.Pow(m.intervalSpan, f) }

// model returns the origin's model: upstream's for an origin made by hand.
func (o Origin) model() *Model {
	if o.m == nil {
		return upstream
	}
	return o.m
}

// MeanFirstVisit returns the mean cost of the first visit of the
// model's origins: over every interval NewOrigin draws, the gone origins'
// visits costing the least.
func (m *Model) MeanFirstVisit() time.Duration {
	const steps = 1 << 16
	var sum float64
	for b := range steps {
		sum += math.Min(m.maxRun, m.minRun+m.perCommit*math.Floor(m.lookBack/m.interval(float64(b)/steps)))
	}
	gone := m.p.Origins.Gone
	return seconds((1-gone)*sum/steps + gone*m.minRun)
}

// since returns the seconds from the origin's epoch to t.
func (o Origin) since(t time.Time) float64 { return t.Sub(o.model().epoch).Seconds() }

// LastUpdate returns the time of the origin's last commit at or before
// now.
func (o Origin) LastUpdate(now time.Time) time.Time {
	s := o.since(now)
	return now.Add(-seconds(mod(s, o.Interval)))
}

// mod returns s modulo c, for s ≥ 0 and c > 0, exactly as math.Mod does
// but in a few operations where math.Mod takes one a bit of the quotient
// (samples ask for it some 10⁷ times a simulated month): the remainder of
// the right whole quotient n is a float64, so one fused multiply-add,
// s − n·c rounded once, is that remainder exactly; a quotient off by one
// from s/c's rounding shows as a remainder out of [0, c).
func mod(s, c float64) float64 {
	n := math.Floor(s / c)
	r := math.FMA(-n, c, s)
	switch {
	case r < 0:
		r = math.FMA(-(n - 1), c, s)
	case r >= c:
		r = math.FMA(-(n + 1), c, s)
	}
	return r
}

// Updates returns the time of the origin's last commit at or before now
// and of the one after it.
func (o Origin) Updates(now time.Time) (last, next time.Time) {
	last = o.LastUpdate(now)
	return last, last.Add(seconds(o.Interval))
}

// Commits returns the number of the origin's last commit at or before now
// (its version).
func (o Origin) Commits(now time.Time) int64 { return int64(math.Floor(o.since(now) / o.Interval)) }

// Snapshot returns the id of the snapshot a visit at now finds: the SHA-1
// of "<visit type> <url> <commits>.0", as upstream's model writes it.
func (o Origin) Snapshot(now time.Time) []byte {
	s := sha1.Sum(fmt.Appendf(nil, "%s %s %d.0", o.VisitType, o.URL, o.Commits(now)))
	return s[:]
}

// Outcome is how a visit ends.
type Outcome int8

const (
	// Full: the visit fetched everything; it has a snapshot.
	Full Outcome = iota
	// Partial: the visit was cut at the longest run time.
	Partial
	// Failed: the origin's forge was down.
	Failed
	// NotFound: the origin is gone.
	NotFound
)

// Visit is the outcome of one visit.
type Visit struct {
	// Duration is how long the visit runs.
	Duration time.Duration
	Outcome  Outcome
	// Snapshot is what a full visit found.
	Snapshot []byte
}

// Visit returns the outcome of a visit starting at now whose previous
// attempt that reached the forge started at previous (zero: never, the
// visit fetches the first look-back of commits).
func (o Origin) Visit(now, previous time.Time) Visit {
	m := o.model()
	switch {
	case o.Gone:
		return Visit{Duration: seconds(m.minRun), Outcome: NotFound}
	case m.down(o.forge, now):
		return Visit{Duration: seconds(m.minRun), Outcome: Failed}
	}
	commits := math.Floor(now.Sub(previous).Seconds() / o.Interval)
	if previous.IsZero() {
		commits = math.Floor(m.lookBack / o.firstInterval)
	}
	run := m.minRun + m.perCommit*commits
	if run > m.maxRun {
		return Visit{Duration: seconds(m.maxRun), Outcome: Partial}
	}
	return Visit{Duration: seconds(run), Outcome: Full, Snapshot: o.Snapshot(now)}
}

// down tells whether forge is down at t: once every outage period, for
// the outage's length, from a time of the period drawn from the forge and
// the period's numbers.
func (m *Model) down(forge int, t time.Time) bool {
	f := m.p.Forges
	if f.Count == 0 {
		return false
	}
	every, length := time.Duration(f.OutageEvery), time.Duration(f.OutageLength)
	since := t.Sub(m.epoch)
	period := since / every
	start := time.Duration(mix(uint64(forge)<<32^uint64(period)) % uint64(every-length))
	at := since - period*every
	return at >= start && at < start+length
}

// mix is SplitMix64's finaliser: a well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// seconds converts seconds to a Duration, to the microsecond (the stores'
// precision).
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}
