package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

func exerciseWalks(t *testing.T, newStore NewStore) {
	parallel(t, "Walks/BackToBackAsFromTheHead", func(t *testing.T) { walksBackToBack(t, newStore) })
	parallel(t, "Walks/WritesBetween", func(t *testing.T) { walksWritesBetween(t, newStore) })
}

// resumed returns how many grabs of f's store resumed a walk.
func (f *fixture) resumed() int64 {
	f.t.Helper()
	w, ok := f.s.(store.GrabWalker)
	require.True(f.t, ok, "the store does not resume walks (store.GrabWalker)")
	return w.GrabsResumed()
}

// grabAsFromTheHead grabs p, after a dry run of p (which walks from the
// head of the order), and requires both to return the same origins, in
// the same order.
func (f *fixture) grabAsFromTheHead(p revisit.GrabParams, label string) []string {
	f.t.Helper()
	dry := p
	dry.DryRun = true
	want := f.grabNames(dry)
	got := f.grabNames(p)
	require.Equal(f.t, want, got, "%s: a grab returned other origins than one from the head of the order", label)
	return got
}

// walksBackToBack grabs every policy back to back, an hour apart, while
// the cooldowns of origins at the head of the orders end between two
// grabs: each grab must return what a grab from the head would, and most
// must resume the walk of the one before.
func walksBackToBack(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	l := f.lister("walk", "a")
	for i, policy := range revisit.Policies {
		vt := fmt.Sprintf("walk%d", i)
		walksWorld(f, l.ID, vt)
		p := revisit.GrabParams{VisitType: vt, Count: 4, Policy: policy}
		if policy == revisit.FirstVisitsAfterListing {
			p.ListerName, p.ListerInstanceName = l.Name, l.InstanceName
		}
		before := f.resumed()
		for i := range 8 {
			p.Now = at(time.Duration(i) * time.Hour)
			f.grabAsFromTheHead(p, fmt.Sprintf("%s grab %d", policy, i))
		}
		t.Logf("%s: %d of 8 grabs resumed", policy, f.resumed()-before)
		require.GreaterOrEqual(t, f.resumed()-before, int64(2), "%s: grabs back to back did not resume their walks", policy)
	}
}

// walksWorld records 60 origins of visit type vt with stats of every kind,
// and three at the head of several orders whose cooldowns end 150, 210
// and 270 minutes after base.
func walksWorld(f *fixture, lister uuid.UUID, vt string) {
	c := revisit.DefaultCooldowns()
	var batch []revisit.ListedOrigin
	var stats []revisit.VisitStats
	for i := range 60 {
		o := origin(lister, fmt.Sprintf("%s-%02d", vt, i), vt)
		if i%7 != 0 {
			o.LastUpdate = atp(-time.Duration((i*37)%60+10) * day)
		}
		batch = append(batch, o)
		if i%3 == 0 {
			continue
		}
		st := revisit.NewVisitStats(o.Key())
		st.LastVisit = atp(-time.Duration(40+i) * day)
		st.LastVisitStatus = stp([]revisit.VisitStatus{revisit.VisitSuccessful, revisit.VisitFailed, revisit.VisitNotFound}[i%3])
		if *st.LastVisitStatus == revisit.VisitSuccessful || i%2 == 0 {
			st.LastSuccessful = atp(-time.Duration(80+i) * day)
		}
		stats = append(stats, st)
	}
	failing := origin(lister, vt+"-flip-failed", vt)
	failing.LastUpdate = atp(-1000 * day)
	notFound := origin(lister, vt+"-flip-not-found", vt)
	notFound.LastUpdate = atp(-2000 * day)
	scheduled := origin(lister, vt+"-flip-scheduled", vt)
	scheduled.LastUpdate = atp(-1500 * day)
	f.record(append([]revisit.ListedOrigin{failing, notFound, scheduled}, batch...)...)
	st := revisit.NewVisitStats(failing.Key())
	st.LastVisit, st.LastVisitStatus = atp(-c.Failed+150*time.Minute), stp(revisit.VisitFailed)
	st.LastSuccessful = atp(-3000 * day)
	stats = append(stats, st)
	st = revisit.NewVisitStats(notFound.Key())
	st.LastVisit, st.LastVisitStatus = atp(-c.NotFound+210*time.Minute), stp(revisit.VisitNotFound)
	stats = append(stats, st)
	st = revisit.NewVisitStats(scheduled.Key())
	st.LastScheduled = atp(-c.Absolute + 270*time.Minute)
	stats = append(stats, st)
	f.upsert(stats...)
}

// walksWritesBetween puts an eligible origin at the head of the order
// between two grabs, in each way a store can (a recording, an origin
// enabled, a result, a visit released): the next grab must return it
// first, as a grab from the head would.
func walksWritesBetween(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	l := f.lister("walk", "b")
	const vt = "walk"
	var batch []revisit.ListedOrigin
	for i := range 30 {
		o := origin(l.ID, fmt.Sprintf("n%02d", i), vt)
		o.LastUpdate = atp(-time.Duration(100-i) * day)
		batch = append(batch, o)
	}
	off := origin(l.ID, "enabled-later", vt)
	off.LastUpdate, off.Enabled = atp(-1001*day), false
	failing := origin(l.ID, "failed-lately", vt)
	failing.LastUpdate = atp(-1002 * day)
	batch = append(batch, off, failing)
	f.record(batch...)
	st := revisit.NewVisitStats(failing.Key())
	st.LastVisit, st.LastVisitStatus = atp(-time.Hour), stp(revisit.VisitFailed)
	f.upsert(st)

	p := revisit.GrabParams{VisitType: vt, Count: 3, Policy: revisit.NeverVisitedOldestUpdateFirst, Now: base}
	f.grabAsFromTheHead(p, "first grab")
	before := f.resumed()
	f.grabAsFromTheHead(p, "second grab")
	require.Equal(t, before+1, f.resumed(), "the second grab did not resume the walk of the first")

	ahead := func(label, name string, write func()) {
		t.Helper()
		f.grabAsFromTheHead(p, label+": the grab before")
		write()
		got := f.grabAsFromTheHead(p, label)
		require.Equal(t, name, got[0], "%s: the origin put ahead does not come first", label)
	}
	ahead("a recording", "listed-later", func() {
		o := origin(l.ID, "listed-later", vt)
		o.LastUpdate = atp(-1000 * day)
		f.record(o)
	})
	ahead("an origin enabled", "enabled-later", func() {
		_, err := f.s.ListedOriginsSetEnabled(f.ctx, off.Key(), nil, true)
		require.NoError(t, err)
	})
	ahead("a result", "failed-lately", func() {
		st.LastVisit = atp(-100 * day)
		f.upsert(st)
	})

	d := revisit.DispatchParams{Grab: p, Owner: "walks"}
	visits, err := f.s.VisitsDispatch(f.ctx, d)
	require.NoError(t, err)
	require.Len(t, visits, 3)
	ids := make([]string, len(visits))
	for i, v := range visits {
		ids[i] = v.ID
	}
	_, err = f.s.VisitsRelease(f.ctx, ids, false)
	require.NoError(t, err)
	dry := p
	dry.DryRun = true
	want := f.grabNames(dry)
	again, err := f.s.VisitsDispatch(f.ctx, d)
	require.NoError(t, err)
	got := make([]string, len(again))
	for i, v := range again {
		got[i] = names([]revisit.ListedOrigin{v.Origin})[0]
	}
	require.Equal(t, want, got, "a dispatch after visits released returned other origins than one from the head")
	require.Equal(t, names([]revisit.ListedOrigin{visits[0].Origin})[0], got[0], "a released origin does not come first")
}
