package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

func exerciseProperty(t *testing.T, newStore NewStore) {
	parallel(t, "Property/GrabMatchesNaiveSort", func(t *testing.T) { propertyGrab(t, newStore) })
}

// propertyGrab builds random small worlds (one visit type each: random
// clocks on a coarse grid that lands on cooldown boundaries, stats, listers,
// disabled origins, origins listed twice) and checks that every grab returns
// exactly the keys the oracle's full sort returns, marks what it returns, and
// moves the queue position like the oracle. TEST_PROPERTY_SEED replays a
// run; TEST_PROPERTY_WORLDS makes it longer.
func propertyGrab(t *testing.T, newStore NewStore) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("TEST_PROPERTY_SEED"), 10, 64); err == nil {
		seed = s
	}
	worlds := 8
	if n, err := strconv.Atoi(os.Getenv("TEST_PROPERTY_WORLDS")); err == nil && n > 0 {
		worlds = n
	}
	t.Logf("TEST_PROPERTY_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	clock := NewClock(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	s := newStore(t, clock.Now)
	ctx := context.Background()

	o := newOracle()
	var listers []revisit.Lister
	for i := range 3 {
		l, err := s.ListerGetOrCreate(ctx, "prop", fmt.Sprintf("instance-%d", i))
		require.NoError(t, err)
		if i > 0 { // lister 0 never finished a listing
			fin := clock.Now().Add(-time.Duration(rng.IntN(40)) * 6 * time.Hour)
			l.LastListingFinishedAt = &fin
			l, err = s.ListerUpdate(ctx, l)
			require.NoError(t, err)
		}
		o.finished[l.ID] = l.LastListingFinishedAt
		listers = append(listers, l)
	}
	for w := range worlds {
		vt := fmt.Sprintf("prop%d", w)
		buildWorld(t, s, o, rng, clock, listers, vt, w%2 == 0)
		for op := range 14 {
			if rng.IntN(4) == 0 {
				writeResults(t, s, o, rng, clock, vt)
			}
			checkGrab(t, s, o, rng, clock, listers, vt, fmt.Sprintf("world %d op %d", w, op))
		}
	}
}

// writeResults writes visit results for a few origins of the visit type as
// result processing does: read the stats, change the visit fields, write
// them back, one result an origin, whatever its listers.
func writeResults(t *testing.T, s store.Store, o *oracle, rng *rand.Rand, clock *Clock, vt string) {
	ctx := context.Background()
	var keys []revisit.OriginKey
	seen := map[revisit.OriginKey]bool{}
	for _, r := range o.rows {
		if r.VisitType == vt && rng.IntN(4) == 0 && !seen[r.Key()] {
			keys, seen[r.Key()] = append(keys, r.Key()), true
		}
	}
	got, err := s.VisitStatsGet(ctx, keys)
	require.NoError(t, err)
	read := map[revisit.OriginKey]revisit.VisitStats{}
	for _, st := range got {
		read[st.Key()] = st
	}
	var stats []revisit.VisitStats
	for _, k := range keys {
		st, ok := read[k]
		if !ok {
			st = revisit.NewVisitStats(k)
		}
		if want := o.stats[k]; !timesEqual(st.LastScheduled, want.LastScheduled) {
			t.Fatalf("%s: last_scheduled %v, oracle %v", k.URL, st.LastScheduled, want.LastScheduled)
		}
		visit := clock.Now().Add(-time.Duration(rng.IntN(40)) * 6 * time.Hour)
		status := []revisit.VisitStatus{revisit.VisitSuccessful, revisit.VisitFailed, revisit.VisitNotFound}[rng.IntN(3)]
		st.LastVisit, st.LastVisitStatus = &visit, &status
		if status == revisit.VisitSuccessful {
			st.LastSuccessful, st.LastSnapshot = &visit, []byte{1}
		}
		stats = append(stats, st)
	}
	require.NoError(t, s.VisitStatsUpsert(ctx, stats))
	for _, st := range stats {
		o.stats[st.Key()] = st
	}
}

func timesEqual(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

// buildWorld records origins and stats of one visit type in the store and
// the oracle; statsFirst writes the stats before the origins.
func buildWorld(t *testing.T, s store.Store, o *oracle, rng *rand.Rand, clock *Clock,
	listers []revisit.Lister, vt string, statsFirst bool) {
	ctx := context.Background()
	base := clock.Now()
	at := func() *time.Time { // a time on a 6 h grid, sometimes 1 µs off
		v := base.Add(-time.Duration(rng.IntN(160)) * 6 * time.Hour)
		switch rng.IntN(6) {
		case 0:
			v = v.Add(time.Microsecond)
		case 1:
			v = v.Add(-time.Microsecond)
		}
		return &v
	}
	maybe := func(p float64) *time.Time {
		if rng.Float64() < p {
			return nil
		}
		return at()
	}
	nURLs := 15 + rng.IntN(25)
	var stats []revisit.VisitStats
	batches := make([][]revisit.ListedOrigin, 3)
	for u := range nURLs {
		url := fmt.Sprintf("https://forge.example/%s/%d", vt, u)
		perm := rng.Perm(len(listers))
		for _, li := range perm[:1+rng.IntN(2)*rng.IntN(2)] {
			b := rng.IntN(3)
			batches[b] = append(batches[b], revisit.ListedOrigin{
				ListerID: listers[li].ID, URL: url, VisitType: vt,
				Enabled: rng.Float64() < 0.85, LastUpdate: maybe(0.3)})
		}
		if rng.Float64() < 0.7 {
			st := revisit.NewVisitStats(revisit.OriginKey{URL: url, VisitType: vt})
			if rng.Float64() < 0.8 {
				st.LastVisit = at()
				status := []revisit.VisitStatus{revisit.VisitSuccessful, revisit.VisitFailed, revisit.VisitNotFound}[rng.IntN(3)]
				st.LastVisitStatus = &status
				if status == revisit.VisitSuccessful {
					st.LastSuccessful, st.LastSnapshot = st.LastVisit, []byte{byte(u)}
				} else if rng.IntN(2) == 0 {
					earlier := st.LastVisit.Add(-time.Duration(1+rng.IntN(20)) * 6 * time.Hour)
					st.LastSuccessful, st.LastSnapshot = &earlier, []byte{byte(u)}
				}
			}
			st.LastScheduled = maybe(0.3)
			if rng.Float64() < 0.7 {
				pos := int64(rng.IntN(6)) * 3600
				st.NextVisitQueuePosition = &pos
			}
			stats = append(stats, st)
		}
	}
	writeStats := func() {
		require.NoError(t, s.VisitStatsUpsert(ctx, stats))
		for _, st := range stats {
			o.stats[st.Key()] = st
		}
	}
	if statsFirst {
		writeStats()
	}
	for b, batch := range batches {
		clock.Set(base.Add(-time.Duration(3-b) * 6 * time.Hour))
		if _, err := s.ListedOriginsRecord(ctx, batch); err != nil {
			t.Fatalf("record %s batch %d: %v", vt, b, err)
		}
		for _, lo := range batch {
			if i := slices.IndexFunc(o.rows, func(r revisit.ListedOrigin) bool {
				return r.ListerID == lo.ListerID && r.URL == lo.URL && r.VisitType == lo.VisitType
			}); i >= 0 {
				lo.FirstSeen = o.rows[i].FirstSeen
				o.rows[i] = lo
				continue
			}
			lo.FirstSeen = clock.Now()
			o.rows = append(o.rows, lo)
		}
	}
	clock.Set(base)
	if !statsFirst {
		writeStats()
	}
}

// checkGrab runs one random grab against the store and the oracle.
func checkGrab(t *testing.T, s store.Store, o *oracle, rng *rand.Rand, clock *Clock,
	listers []revisit.Lister, vt, label string) {
	ctx := context.Background()
	const day = 24 * time.Hour
	offsets := []time.Duration{0, 6 * time.Hour, 12 * time.Hour, 7 * day, 14 * day, 31 * day, time.Microsecond, -time.Microsecond}
	p := revisit.GrabParams{
		VisitType: vt, Count: 1 + rng.IntN(45),
		Policy:   revisit.Policies[rng.IntN(len(revisit.Policies))],
		Now:      clock.Now().Add(offsets[rng.IntN(len(offsets))]),
		Disabled: rng.Float64() < 0.15,
		DryRun:   rng.IntN(2) == 0,
	}
	var lister *uuid.UUID
	if rng.Float64() < 0.3 || p.Policy == revisit.FirstVisitsAfterListing {
		l := listers[rng.IntN(len(listers))]
		lister = &l.ID
		if rng.IntN(2) == 0 {
			p.ListerID = &l.ID
		} else {
			p.ListerName, p.ListerInstanceName = l.Name, l.InstanceName
		}
	}
	c := revisit.DefaultCooldowns()
	if rng.IntN(2) == 0 {
		for _, d := range []*time.Duration{&c.Absolute, &c.Scheduled, &c.Failed, &c.NotFound} {
			if rng.IntN(2) == 0 {
				*d = 0
			}
		}
		p.Cooldowns = &c
	}
	want := o.grab(p, c, lister)
	got, err := s.GrabNextVisits(ctx, p)
	if err != nil {
		t.Fatalf("%s: grab %+v: %v", label, p, err)
	}
	gotKeys := make([]sortKey, len(got))
	urls := map[string]bool{}
	for i, lo := range got {
		if urls[lo.URL] {
			t.Fatalf("%s: %s returned twice", label, lo.URL)
		}
		urls[lo.URL] = true
		row := o.rows[slices.IndexFunc(o.rows, func(r revisit.ListedOrigin) bool {
			return r.ListerID == lo.ListerID && r.URL == lo.URL && r.VisitType == lo.VisitType
		})]
		if !o.eligible(row, p, c, p.Now, lister) {
			t.Fatalf("%s: %s/%s (lister %s) is not eligible for %+v", label, lo.URL, lo.VisitType, lo.ListerID, p)
		}
		gotKeys[i] = o.key(row, p.Policy)
	}
	if !slices.EqualFunc(gotKeys, want, func(a, b sortKey) bool { return slices.Equal(a, b) }) {
		t.Fatalf("%s: policy %s count %d: store keys\n%v\noracle keys\n%v", label, p.Policy, p.Count, gotKeys, want)
	}
	if p.DryRun {
		return
	}
	o.mark(p, got)
	pos, err := s.QueuePositionGet(ctx, vt)
	require.NoError(t, err)
	if pos != o.positions[vt] {
		t.Fatalf("%s: queue position %d, oracle %d", label, pos, o.positions[vt])
	}
}
