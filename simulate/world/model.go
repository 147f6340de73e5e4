// Package world is the simulated world of revisit simulate: origins whose
// commits come at a steady pace derived from their URL, the same model as
// Software Heritage's simulator, so that both simulators can run the same
// world. An origin with a commit every c seconds has had one at every
// multiple of c since Epoch; visiting it costs 0.5 s plus 0.1 s per commit
// since the previous attempt, and a visit that would take more than two
// hours stops there, partial, without a snapshot.
package world

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// The model's constants.
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

// Origin is one origin of the world and the pace of its commits.
type Origin struct {
	URL       string
	VisitType string
	// Interval is the time between two commits, in seconds: from 1 s to
	// just under ten years, log-uniform over origins.
	Interval float64
}

// NewOrigin returns the origin of url: the first two bytes of the MD5 of
// the URL, read as a little-endian fraction of 65536, place its commit
// interval on a log scale between one second and ten years.
func NewOrigin(url, visitType string) Origin {
	sum := md5.Sum([]byte(url))
	b := binary.LittleEndian.Uint16(sum[:2])
	return Origin{URL: url, VisitType: visitType,
		Interval: math.Pow(MaxInterval.Seconds(), float64(b)/65536)}
}

// since returns the seconds from Epoch to t.
func since(t time.Time) float64 { return t.Sub(Epoch).Seconds() }

// LastUpdate returns the time of the origin's last commit at or before
// now.
func (o Origin) LastUpdate(now time.Time) time.Time {
	s := since(now)
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
func (o Origin) Commits(now time.Time) int64 { return int64(math.Floor(since(now) / o.Interval)) }

// Snapshot returns the id of the snapshot a visit at now finds: the SHA-1
// of "<visit type> <url> <commits>.0", as upstream's model writes it.
func (o Origin) Snapshot(now time.Time) []byte {
	s := sha1.Sum(fmt.Appendf(nil, "%s %s %d.0", o.VisitType, o.URL, o.Commits(now)))
	return s[:]
}

// Visit is the outcome of one visit.
type Visit struct {
	// Duration is how long the visit runs.
	Duration time.Duration
	// Full is true when the visit fetched everything; a visit cut at
	// MaxRunTime is partial and has no snapshot.
	Full     bool
	Snapshot []byte
}

// Visit returns the outcome of a visit starting at now whose previous
// attempt started at previous (zero: never attempted, the visit fetches
// FirstLookBack of commits).
func (o Origin) Visit(now, previous time.Time) Visit {
	if previous.IsZero() {
		previous = now.Add(-FirstLookBack)
	}
	commits := math.Floor(now.Sub(previous).Seconds() / o.Interval)
	run := MinRunTime.Seconds() + PerCommit.Seconds()*commits
	if run > MaxRunTime.Seconds() {
		return Visit{Duration: MaxRunTime}
	}
	return Visit{Duration: seconds(run), Full: true, Snapshot: o.Snapshot(now)}
}

// seconds converts seconds to a Duration, to the microsecond (the stores'
// precision).
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}
