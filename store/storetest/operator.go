package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// The changes an operator makes from the console: a visit of one origin
// now, enabling and disabling an origin, pausing a visit type.

// dispatchOrigin runs VisitsDispatchOrigin of the git origin name at the
// clock's now.
func (f *fixture) dispatchOrigin(name string, listerID *uuid.UUID, force bool) (revisit.Visit, error) {
	return f.s.VisitsDispatchOrigin(f.ctx, revisit.OriginDispatchParams{
		Key: revisit.OriginKey{URL: url(name), VisitType: "git"}, ListerID: listerID, Owner: "operator", Force: force})
}

// dryGrab returns the names of the git origins a grab with the default
// cooldowns would choose.
func (f *fixture) dryGrab() []string {
	f.t.Helper()
	return f.grabNames(revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, DryRun: true})
}

// setEnabled runs ListedOriginsSetEnabled on the git origin name and
// requires success.
func (f *fixture) setEnabled(name string, listerID *uuid.UUID, enabled bool) int {
	f.t.Helper()
	n, err := f.s.ListedOriginsSetEnabled(f.ctx, revisit.OriginKey{URL: url(name), VisitType: "git"}, listerID, enabled)
	require.NoError(f.t, err)
	return n
}

func exerciseOperator(t *testing.T, newStore NewStore) {
	parallel(t, "Operator/DispatchOriginMarksItAndRecordsItsVisit", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.gitOrigins(3)
		before := at(-10 * day)
		f.upsert(revisit.VisitStats{URL: url("o1"), VisitType: "git", LastScheduled: &before,
			NextPositionOffset: 4, SuccessiveVisits: 1})
		require.Equal(t, []string{"o0", "o2", "o1"}, f.dryGrab())

		v, err := f.dispatchOrigin("o1", nil, false)
		require.NoError(t, err)
		require.Equal(t, revisit.OperatorChoice, v.Policy)
		require.Equal(t, revisit.VisitPending, v.State)
		require.Equal(t, "operator", v.Owner)
		require.Equal(t, l.ID, v.Origin.ListerID)
		require.Equal(t, url("o1"), v.Origin.URL)
		require.Equal(t, map[string]any{}, v.Origin.ExtraLoaderArguments)
		requireTime(t, at(0), v.ScheduledAt)
		requireTimePtr(t, atp(0), f.stats("o1", "git").LastScheduled, "marked scheduled now")
		require.Equal(t, []string{"o0", "o2"}, f.dryGrab(), "a grab passes over it, as over a grabbed origin")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1}, f.counts()["git"])

		_, err = f.dispatchOrigin("o1", nil, false)
		requireCode(t, err, revisit.ErrConflict, "")
		require.ErrorContains(t, err, "pending since 2024-03-01T12:00:00Z")
		f.clock.Advance(sentAfter)
		_, err = f.s.VisitsSent(f.ctx, []string{v.ID}, f.clock.Now())
		require.NoError(t, err)
		_, err = f.dispatchOrigin("o1", nil, false)
		requireCode(t, err, revisit.ErrConflict, "")
		require.ErrorContains(t, err, "sent since 2024-03-01T12:00:03Z")

		again, err := f.dispatchOrigin("o1", nil, true)
		require.NoError(t, err, "forced")
		require.NotEqual(t, v.ID, again.ID)
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1, Sent: 1}, f.counts()["git"])

		// Released, the forced visit gives the origin back the mark of its
		// stats; the first visit, still in flight, no longer holds it back.
		_, err = f.s.VisitsRelease(f.ctx, []string{again.ID}, false)
		require.NoError(t, err)
		requireTimePtr(t, &before, f.stats("o1", "git").LastScheduled)
		require.Equal(t, []string{"o0", "o2", "o1"}, f.dryGrab())
		n, err := f.s.VisitsExpire(f.ctx, "git", at(day))
		require.NoError(t, err)
		require.Equal(t, 1, n, "the first visit, lost")
		requireTimePtr(t, &before, f.stats("o1", "git").LastScheduled)
		require.Equal(t, []string{"o0", "o2", "o1"}, f.dryGrab())

		// Lost or released, an operator's visit of a fresh origin leaves it
		// as it was.
		v, err = f.dispatchOrigin("o2", nil, false)
		require.NoError(t, err)
		_, err = f.s.VisitsRelease(f.ctx, []string{v.ID}, false)
		require.NoError(t, err)
		require.Nil(t, f.stats("o2", "git").LastScheduled)
		require.Equal(t, []string{"o0", "o2", "o1"}, f.dryGrab())
	})

	parallel(t, "Operator/DispatchOriginChoosesTheListedRow", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("gitlab", "framagit.org")
		disabled := origin(a.ID, "x", "git")
		disabled.Enabled = false
		f.record(disabled)
		f.record(origin(b.ID, "x", "git"))

		v, err := f.dispatchOrigin("x", nil, false)
		require.NoError(t, err)
		require.Equal(t, b.ID, v.Origin.ListerID, "the enabled row")
		require.True(t, v.Origin.Enabled)
		v, err = f.dispatchOrigin("x", &a.ID, true)
		require.NoError(t, err)
		require.Equal(t, a.ID, v.Origin.ListerID, "the lister's row, even disabled")
		require.False(t, v.Origin.Enabled)

		_, err = f.dispatchOrigin("nope", nil, false)
		requireCode(t, err, revisit.ErrNotFound, "")
		c := f.lister("cgit", "")
		_, err = f.dispatchOrigin("x", &c.ID, false)
		requireCode(t, err, revisit.ErrNotFound, "")
		require.ErrorContains(t, err, "lister "+c.ID.String())
		_, err = f.s.VisitsDispatchOrigin(f.ctx, revisit.OriginDispatchParams{
			Key: revisit.OriginKey{URL: "", VisitType: "git"}, Owner: "operator"})
		requireInvalid(t, err, "url")
		_, err = f.s.VisitsDispatchOrigin(f.ctx, revisit.OriginDispatchParams{Key: revisit.OriginKey{URL: url("x"), VisitType: "git"}})
		requireInvalid(t, err, "owner")
	})

	parallel(t, "Operator/DispatchOriginOfAGrabbedOrigin", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		require.Equal(t, []string{"o0"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 1,
			Policy: revisit.OldestScheduledFirst}))
		f.clock.Advance(sentAfter)
		v, err := f.dispatchOrigin("o0", nil, false)
		require.NoError(t, err, "a grab records no visit in flight")
		require.Equal(t, url("o0"), v.Origin.URL)
		requireTimePtr(t, atp(sentAfter), f.stats("o0", "git").LastScheduled, "the later mark")
		require.Equal(t, []string{"o1"}, f.dryGrab())
		_, err = f.s.VisitsRelease(f.ctx, []string{v.ID}, false)
		require.NoError(t, err)
		require.Nil(t, f.stats("o0", "git").LastScheduled, "the mark of its stats, not the grab's")
		require.Equal(t, []string{"o0", "o1"}, f.dryGrab())
	})

	parallel(t, "Operator/SetEnabledOfOneListerOrAll", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("gitlab", "framagit.org")
		f.record(origin(a.ID, "x", "git"), origin(a.ID, "x", "hg"), origin(a.ID, "y", "git"))
		f.record(origin(b.ID, "x", "git"))

		require.Equal(t, 2, f.setEnabled("x", nil, false), "both listers' rows")
		require.False(t, f.get(a.ID, "x", "git").Enabled)
		require.False(t, f.get(b.ID, "x", "git").Enabled)
		require.True(t, f.get(a.ID, "x", "hg").Enabled, "another visit type of the URL stays")
		require.Equal(t, []string{"y"}, f.dryGrab())
		require.Equal(t, 0, f.setEnabled("x", nil, false), "disabled already")

		require.Equal(t, 1, f.setEnabled("x", &b.ID, true), "one lister's row")
		require.False(t, f.get(a.ID, "x", "git").Enabled)
		require.True(t, f.get(b.ID, "x", "git").Enabled)
		require.ElementsMatch(t, []string{"x", "y"}, f.dryGrab())

		// A grabbed origin, waiting for its visit's result.
		require.ElementsMatch(t, []string{"x", "y"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.OldestScheduledFirst}))
		require.Equal(t, 1, f.setEnabled("x", &b.ID, false))
		require.False(t, f.get(b.ID, "x", "git").Enabled)
		require.Equal(t, 2, f.setEnabled("x", nil, true))
		require.True(t, f.get(a.ID, "x", "git").Enabled)

		_, err := f.s.ListedOriginsSetEnabled(f.ctx, revisit.OriginKey{URL: url("nope"), VisitType: "git"}, nil, false)
		requireCode(t, err, revisit.ErrNotFound, "")
		_, err = f.s.ListedOriginsSetEnabled(f.ctx, revisit.OriginKey{URL: url("y"), VisitType: "git"}, &b.ID, false)
		requireCode(t, err, revisit.ErrNotFound, "", "b does not list y")
		_, err = f.s.ListedOriginsSetEnabled(f.ctx, revisit.OriginKey{URL: url("y"), VisitType: "Git!"}, nil, false)
		requireInvalid(t, err, "visit_type")
	})

	parallel(t, "Operator/PauseAndResumeVisitTypes", func(t *testing.T) {
		f := newFixture(t, newStore)
		list := func() []revisit.Pause {
			t.Helper()
			ps, err := f.s.VisitTypePauseList(f.ctx)
			require.NoError(t, err)
			return ps
		}
		require.Empty(t, list())
		p, err := f.s.VisitTypePauseSet(f.ctx, revisit.Pause{VisitType: "hg", By: "ops", At: at(0)})
		require.NoError(t, err)
		require.Equal(t, revisit.Pause{VisitType: "hg", By: "ops", At: at(0)}, p)
		p, err = f.s.VisitTypePauseSet(f.ctx, revisit.Pause{VisitType: "hg", By: "other", At: at(day)})
		require.NoError(t, err)
		require.Equal(t, revisit.Pause{VisitType: "hg", By: "ops", At: at(0)}, p, "paused already: the first pause stays")
		_, err = f.s.VisitTypePauseSet(f.ctx, revisit.Pause{VisitType: "git", By: "anonymous", At: at(sentAfter)})
		require.NoError(t, err)
		require.Equal(t, []revisit.Pause{{VisitType: "git", By: "anonymous", At: at(sentAfter)},
			{VisitType: "hg", By: "ops", At: at(0)}}, list())

		resumed, err := f.s.VisitTypePauseClear(f.ctx, "hg")
		require.NoError(t, err)
		require.True(t, resumed)
		resumed, err = f.s.VisitTypePauseClear(f.ctx, "hg")
		require.NoError(t, err)
		require.False(t, resumed, "not paused")
		require.Equal(t, []string{"git"}, pausedTypes(list()))

		_, err = f.s.VisitTypePauseSet(f.ctx, revisit.Pause{VisitType: "git", At: at(0)})
		requireInvalid(t, err, "by")
		_, err = f.s.VisitTypePauseSet(f.ctx, revisit.Pause{VisitType: "", By: "ops", At: at(0)})
		requireInvalid(t, err, "visit_type")
		_, err = f.s.VisitTypePauseClear(f.ctx, "Git!")
		requireInvalid(t, err, "visit_type")
	})
}

// sentAfter is how long after their grab the fixtures' visits are sent.
const sentAfter = 3 * time.Second

// pausedTypes returns the visit types of pauses.
func pausedTypes(ps []revisit.Pause) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.VisitType
	}
	return out
}
