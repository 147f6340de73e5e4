// Package bench generates the reference data set of docs/performance.md and
// measures revisit against the targets there (revisit bench …).
package bench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// Dataset describes the reference data set ("10M", "1M"): deterministic for a
// given size and seed.
type Dataset struct {
	Origins int
	Seed    uint64
	// Now is the data set's present: every generated time lies before it.
	Now time.Time
}

// NewDataset returns the reference data set of n origins.
func NewDataset(n int) Dataset {
	return Dataset{Origins: n, Seed: 20261121, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// The two listers of the data set: A lists 80 % of the origins, B 20 %.
const (
	ListerName      = "bench"
	ListerInstanceA = "a"
	ListerInstanceB = "b"
)

const day = 24 * time.Hour

// Row is one generated origin: its listing, whether lister A lists it, and
// its stats (nil for the 40 % never visited). first_seen comes from the
// store's clock when the row is recorded: the loader spreads it over the
// last 1000 days.
type Row struct {
	Origin  revisit.ListedOrigin // ListerID left for Listed
	ListerA bool
	Stats   *revisit.VisitStats
}

// Listed returns the row's origin listed by a when lister A lists it, else
// by b.
func (r Row) Listed(a, b uuid.UUID) revisit.ListedOrigin {
	o := r.Origin
	o.ListerID = b
	if r.ListerA {
		o.ListerID = a
	}
	return o
}

// Row returns origin i of the data set; the same i always gives the same row.
func (d Dataset) Row(i int) Row {
	rng := rand.New(rand.NewPCG(d.Seed, uint64(i)))
	vt := "git"
	switch r := rng.IntN(10); {
	case r == 8:
		vt = "hg"
	case r == 9:
		vt = "pypi"
	}
	r := Row{ListerA: rng.IntN(10) < 8}
	r.Origin = revisit.ListedOrigin{
		URL:                  fmt.Sprintf("https://%s.example.org/project-%09d", vt, i),
		VisitType:            vt,
		Enabled:              rng.IntN(50) != 0,
		ExtraLoaderArguments: map[string]any{},
	}
	if rng.IntN(100) < 85 { // skewed recent over ~2000 days
		u := rng.Float64()
		lu := revisit.Microsecond(d.Now.Add(-time.Duration(u * u * float64(2000*day))))
		r.Origin.LastUpdate = &lu
	}
	if rng.IntN(100) < 60 {
		st := revisit.NewVisitStats(r.Origin.Key())
		lv := revisit.Microsecond(d.Now.Add(-time.Duration(rng.Float64() * float64(100*day))))
		ls := lv.Add(-time.Hour)
		st.LastVisit, st.LastScheduled = &lv, &ls
		status := revisit.VisitSuccessful
		switch p := rng.IntN(100); {
		case p < 5:
			status = revisit.VisitFailed
		case p < 10:
			status = revisit.VisitNotFound
		}
		st.LastVisitStatus = &status
		var succ *time.Time
		switch {
		case status == revisit.VisitSuccessful:
			succ = &lv
		case rng.IntN(2) == 0: // failing now, successful earlier
			earlier := lv.Add(-time.Duration(rng.Float64() * float64(200*day)))
			succ = &earlier
		}
		if succ != nil {
			st.LastSuccessful = succ
			snap := make([]byte, 20)
			for j := range snap {
				snap[j] = byte(rng.Uint32())
			}
			st.LastSnapshot = snap
		}
		pos := int64(rng.IntN(30 * 86400))
		st.NextVisitQueuePosition = &pos
		r.Stats = &st
	}
	return r
}

// ParseSize parses a data set size: "1M", "10M", "250k" or a plain number.
func ParseSize(s string) (int, error) {
	mult := 1
	num := s
	switch {
	case strings.HasSuffix(s, "M"):
		mult, num = 1_000_000, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "k"):
		mult, num = 1_000, strings.TrimSuffix(s, "k")
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return 0, revisit.Invalidf("origins", "%q is not a data set size (1M, 10M, 250k, 5000)", s)
	}
	return n * mult, nil
}
