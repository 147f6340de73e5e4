package storetest

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// dispatch runs VisitsDispatch of count oldest_scheduled_first git visits
// at the clock's now and requires success.
func (f *fixture) dispatch(count int, cooldowns *revisit.Cooldowns) []revisit.Visit {
	f.t.Helper()
	vs, err := f.s.VisitsDispatch(f.ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{
		VisitType: "git", Count: count, Policy: revisit.OldestScheduledFirst, Cooldowns: cooldowns}})
	require.NoError(f.t, err)
	return vs
}

// counts returns VisitsCount by visit type.
func (f *fixture) counts() map[string]revisit.VisitCounts {
	f.t.Helper()
	cs, err := f.s.VisitsCount(f.ctx)
	require.NoError(f.t, err)
	out := map[string]revisit.VisitCounts{}
	for _, c := range cs {
		out[c.VisitType] = c
	}
	return out
}

// gitOrigins records n git origins o0… of one lister, in order.
func (f *fixture) gitOrigins(n int) revisit.Lister {
	f.t.Helper()
	l := f.lister("gitlab", "gitlab.com")
	for i := range n {
		f.record(origin(l.ID, fmt.Sprintf("o%d", i), "git"))
	}
	return l
}

func visitIDs(vs []revisit.Visit) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

func visitNames(vs []revisit.Visit) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = names([]revisit.ListedOrigin{v.Origin})[0]
	}
	return out
}

func exerciseVisits(t *testing.T, newStore NewStore) {
	parallel(t, "Visits/DispatchRecordsPendingVisits", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.gitOrigins(3)
		vs := f.dispatch(2, nil)
		require.Equal(t, []string{"o0", "o1"}, visitNames(vs))
		seen := map[string]bool{}
		for _, v := range vs {
			_, err := uuid.Parse(v.ID)
			require.NoError(t, err, "id %q", v.ID)
			require.False(t, seen[v.ID], "ids are distinct")
			seen[v.ID] = true
			require.Equal(t, revisit.VisitPending, v.State)
			require.Equal(t, revisit.OldestScheduledFirst, v.Policy)
			require.Equal(t, l.ID, v.Origin.ListerID)
			require.Equal(t, "test", v.Owner)
			requireTime(t, base, v.ScheduledAt)
		}
		requireTimePtr(t, &base, f.stats("o0", "git").LastScheduled, "dispatch marks like a grab")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 2}, f.counts()["git"])
		require.Equal(t, []string{"o2"}, visitNames(f.dispatch(5, nil)), "marked origins wait for the cooldown")

		n, err := f.s.VisitsSent(f.ctx, append(visitIDs(vs), uuid.NewString(), "not-a-uuid"), at(time.Minute))
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = f.s.VisitsSent(f.ctx, visitIDs(vs), at(2*time.Minute))
		require.NoError(t, err)
		require.Zero(t, n, "only pending visits become sent")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1, Sent: 2}, f.counts()["git"])
	})

	parallel(t, "Visits/NeverSentBeforeScheduled", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(1)
		f.clock.Set(at(time.Hour))
		vs := f.dispatch(1, nil)
		n, err := f.s.VisitsSent(f.ctx, visitIDs(vs), base)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		got, err := f.s.VisitsGet(f.ctx, visitIDs(vs))
		require.NoError(t, err)
		require.Len(t, got, 1)
		requireTimePtr(t, atp(time.Hour), got[0].SentAt, "a visit is sent no earlier than it is scheduled")
		n, err = f.s.VisitsExpire(f.ctx, "git", at(time.Hour))
		require.NoError(t, err)
		require.Zero(t, n, "sent at the bound: not lost")
		n, err = f.s.VisitsExpire(f.ctx, "git", at(time.Hour+time.Microsecond))
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})

	parallel(t, "Visits/DispatchValidates", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(1)
		grab := revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OldestScheduledFirst}
		_, err := f.s.VisitsDispatch(f.ctx, revisit.DispatchParams{Grab: grab})
		requireInvalid(t, err, "owner")
		dry := grab
		dry.DryRun = true
		_, err = f.s.VisitsDispatch(f.ctx, revisit.DispatchParams{Grab: dry, Owner: "o"})
		requireInvalid(t, err, "dry_run")
		bad := grab
		bad.Count = 0
		_, err = f.s.VisitsDispatch(f.ctx, revisit.DispatchParams{Grab: bad, Owner: "o"})
		requireInvalid(t, err, "count")
		require.Empty(t, f.counts())
		require.Nil(t, f.stats("o0", "git"), "nothing marked")
	})

	parallel(t, "Visits/ReleaseRestoresEligibility", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		f.upsert(revisit.VisitStats{URL: url("o1"), VisitType: "git", LastScheduled: atp(-30 * day), NextPositionOffset: 4, SuccessiveVisits: 1})
		vs := f.dispatch(2, nil)
		require.Equal(t, []string{"o0", "o1"}, visitNames(vs))
		n, err := f.s.VisitsRelease(f.ctx, append(visitIDs(vs), "bogus"), false)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Empty(t, f.counts())
		require.Nil(t, f.stats("o0", "git").LastScheduled, "o0 was never scheduled before")
		requireTimePtr(t, atp(-30*day), f.stats("o1", "git").LastScheduled)
		require.Equal(t, []string{"o0", "o1"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 5,
			Policy: revisit.OldestScheduledFirst, DryRun: true}), "both eligible again, in their old order")

		sent := f.dispatch(1, nil)
		_, err = f.s.VisitsSent(f.ctx, visitIDs(sent), base)
		require.NoError(t, err)
		n, err = f.s.VisitsRelease(f.ctx, visitIDs(sent), false)
		require.NoError(t, err)
		require.Zero(t, n, "a sent visit is not released")
	})

	parallel(t, "Visits/RestoreKeepsLaterSchedule", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(1)
		first := f.dispatch(1, noCooldowns())
		f.clock.Advance(time.Hour)
		second := f.dispatch(1, noCooldowns())
		require.Equal(t, []string{"o0"}, visitNames(second))
		n, err := f.s.VisitsRelease(f.ctx, visitIDs(first), false)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		requireTimePtr(t, atp(time.Hour), f.stats("o0", "git").LastScheduled,
			"releasing an older visit keeps the newer schedule")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1}, f.counts()["git"])
	})

	parallel(t, "Visits/RecoverReleasesPendingOfOneVisitType", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.gitOrigins(3)
		f.record(origin(l.ID, "h0", "hg"))
		sent := f.dispatch(2, nil)
		_, err := f.s.VisitsSent(f.ctx, visitIDs(sent), base)
		require.NoError(t, err)
		f.dispatch(1, nil)
		_, err = f.s.VisitsDispatch(f.ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{
			VisitType: "hg", Count: 1, Policy: revisit.OldestScheduledFirst}})
		require.NoError(t, err)

		n, err := f.s.VisitsRecover(f.ctx, "git", false)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		c := f.counts()
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 2}, c["git"])
		require.Equal(t, revisit.VisitCounts{VisitType: "hg", Pending: 1}, c["hg"])
		require.Nil(t, f.stats("o2", "git").LastScheduled)
		require.Equal(t, []string{"o2"}, visitNames(f.dispatch(5, nil)), "the recovered origin is offered again")
	})

	parallel(t, "Visits/RecoverMaybePublishedKeepsThemLost", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		first := f.dispatch(2, nil)
		f.clock.Set(at(time.Minute))
		n, err := f.s.VisitsRecover(f.ctx, "git", true)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Lost: 2}, f.counts()["git"])
		got, err := f.s.VisitsGet(f.ctx, visitIDs(first))
		require.NoError(t, err)
		require.Len(t, got, 2, "kept, so that a result for them is one of a known visit")
		for _, v := range got {
			require.Equal(t, revisit.VisitLost, v.State)
			requireTimePtr(t, &base, v.SentAt, "maybe sent when scheduled")
		}
		require.Nil(t, f.stats("o0", "git").LastScheduled, "the origin is eligible again")
		again := f.dispatch(5, nil)
		require.Equal(t, []string{"o0", "o1"}, visitNames(again), "the recovered origins are offered again")

		n, err = f.s.VisitsExpire(f.ctx, "git", at(day))
		require.NoError(t, err)
		require.Zero(t, n, "a recovered visit is not lost twice")
		closed, err := f.s.VisitsClose(f.ctx, []string{first[0].ID})
		require.NoError(t, err)
		require.Len(t, closed, 1, "a result closes a recovered visit")
		n, err = f.s.VisitsForgetLost(f.ctx, "git", base)
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = f.s.VisitsForgetLost(f.ctx, "git", at(time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n, "the lost retention forgets a recovered visit without result")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 2}, f.counts()["git"])
	})

	parallel(t, "Visits/ReleaseMaybePublishedKeepsThemLost", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		vs := f.dispatch(2, nil)
		n, err := f.s.VisitsRelease(f.ctx, visitIDs(vs[:1]), true)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1, Lost: 1}, f.counts()["git"])
		got, err := f.s.VisitsGet(f.ctx, visitIDs(vs[:1]))
		require.NoError(t, err)
		require.Len(t, got, 1, "kept, so that a result for it is one of a known visit")
		require.Equal(t, revisit.VisitLost, got[0].State)
		require.Nil(t, f.stats("o0", "git").LastScheduled, "the origin is eligible again")
		n, err = f.s.VisitsRelease(f.ctx, visitIDs(vs[:1]), true)
		require.NoError(t, err)
		require.Zero(t, n, "a released visit is not released twice")
	})

	parallel(t, "Visits/ExpireMarksLostAndRestores", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		early := f.dispatch(1, nil)
		_, err := f.s.VisitsSent(f.ctx, visitIDs(early), at(time.Minute))
		require.NoError(t, err)
		late := f.dispatch(1, nil)
		_, err = f.s.VisitsSent(f.ctx, visitIDs(late), at(2*time.Hour))
		require.NoError(t, err)

		n, err := f.s.VisitsExpire(f.ctx, "git", at(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1, Lost: 1}, f.counts()["git"])
		require.Nil(t, f.stats("o0", "git").LastScheduled, "the lost visit's origin is eligible again")
		requireTimePtr(t, &base, f.stats("o1", "git").LastScheduled)
		n, err = f.s.VisitsExpire(f.ctx, "git", at(time.Hour))
		require.NoError(t, err)
		require.Zero(t, n, "a lost visit is not lost twice")
		n, err = f.s.VisitsExpire(f.ctx, "hg", at(100*day))
		require.NoError(t, err)
		require.Zero(t, n, "other visit types are untouched")

		n, err = f.s.VisitsForgetLost(f.ctx, "git", at(time.Minute))
		require.NoError(t, err)
		require.Zero(t, n, "a lost visit sent at the bound is kept")
		n, err = f.s.VisitsForgetLost(f.ctx, "git", at(3*time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, n, "only lost visits are forgotten, not sent ones")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1}, f.counts()["git"])
	})

	parallel(t, "Visits/CloseReturnsAndForgets", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.gitOrigins(3)
		vs := f.dispatch(3, nil)
		_, err := f.s.VisitsSent(f.ctx, visitIDs(vs[:2]), at(time.Minute))
		require.NoError(t, err)
		_, err = f.s.VisitsExpire(f.ctx, "git", at(2*time.Minute))
		require.NoError(t, err)

		got, err := f.s.VisitsGet(f.ctx, []string{vs[0].ID, vs[2].ID, uuid.NewString(), "nope"})
		require.NoError(t, err)
		require.ElementsMatch(t, []string{vs[0].ID, vs[2].ID}, visitIDs(got), "get finds them, in any state")
		closed, err := f.s.VisitsClose(f.ctx, []string{vs[0].ID, vs[2].ID, uuid.NewString(), "nope"})
		require.NoError(t, err)
		require.Len(t, closed, 2)
		byID := map[string]revisit.Visit{}
		for _, v := range closed {
			byID[v.ID] = v
		}
		lost, pending := byID[vs[0].ID], byID[vs[2].ID]
		require.Equal(t, revisit.VisitLost, lost.State)
		require.Equal(t, revisit.OriginKey{URL: url("o0"), VisitType: "git"}, lost.Key())
		require.Equal(t, l.ID, lost.Origin.ListerID)
		requireTimePtr(t, atp(time.Minute), lost.SentAt)
		requireTime(t, base, lost.ScheduledAt)
		require.Equal(t, revisit.VisitPending, pending.State)
		require.Nil(t, pending.SentAt)
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Lost: 1}, f.counts()["git"])

		closed, err = f.s.VisitsClose(f.ctx, []string{vs[0].ID})
		require.NoError(t, err)
		require.Empty(t, closed, "a second result finds nothing")
		got, err = f.s.VisitsGet(f.ctx, []string{vs[0].ID})
		require.NoError(t, err)
		require.Empty(t, got, "closed visits are gone")
	})

	parallel(t, "Visits/ConcurrentDispatchDisjoint", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(60)
		const workers = 6
		got := make([][]revisit.Visit, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					vs, err := f.s.VisitsDispatch(f.ctx, revisit.DispatchParams{Owner: fmt.Sprint(w),
						Grab: revisit.GrabParams{VisitType: "git", Count: 4, Policy: revisit.OldestScheduledFirst}})
					if err != nil || len(vs) == 0 {
						errs[w] = err
						return
					}
					got[w] = append(got[w], vs...)
				}
			}()
		}
		wg.Wait()
		urls := map[string]bool{}
		for w := range workers {
			require.NoError(t, errs[w])
			for _, v := range got[w] {
				require.False(t, urls[v.Origin.URL], "%s dispatched twice", v.Origin.URL)
				urls[v.Origin.URL] = true
			}
		}
		require.Len(t, urls, 60)
		require.Equal(t, int64(60), f.counts()["git"].Pending)
	})

	parallel(t, "Leases/AcquireRenewExpireRelease", func(t *testing.T) {
		f := newFixture(t, newStore)
		acquire := func(owner string) revisit.Lease {
			t.Helper()
			l, err := f.s.LeaseAcquire(f.ctx, "orchestrator:git", owner, 15*time.Second)
			require.NoError(t, err)
			return l
		}
		l := acquire("a")
		require.Equal(t, revisit.Lease{Name: "orchestrator:git", Owner: "a", Expires: at(15 * time.Second)}, l)
		require.True(t, l.HeldBy("a", base))
		require.Equal(t, "a", acquire("b").Owner, "b cannot take a live lease")
		f.clock.Advance(10 * time.Second)
		requireTime(t, at(25*time.Second), acquire("a").Expires, "renewal extends")
		f.clock.Advance(15 * time.Second)
		l = acquire("b")
		require.Equal(t, "b", l.Owner, "an expired lease goes to the next taker")
		require.Equal(t, "b", acquire("a").Owner, "the old owner lost it")

		require.NoError(t, f.s.LeaseRelease(f.ctx, "orchestrator:git", "a"))
		require.Equal(t, "b", acquire("c").Owner, "only the owner releases")
		require.NoError(t, f.s.LeaseRelease(f.ctx, "orchestrator:git", "b"))
		require.Equal(t, "c", acquire("c").Owner, "a released lease is free")

		_, err := f.s.LeaseAcquire(f.ctx, "", "a", time.Second)
		requireInvalid(t, err, "name")
		_, err = f.s.LeaseAcquire(f.ctx, "x", "", time.Second)
		requireInvalid(t, err, "owner")
		_, err = f.s.LeaseAcquire(f.ctx, "x", "a", 0)
		requireInvalid(t, err, "ttl")
	})

	parallel(t, "Leases/TakeOverFromGoneHolder", func(t *testing.T) {
		f := newFixture(t, newStore)
		host, err := os.Hostname()
		require.NoError(t, err)
		running := exec.Command("sleep", "60")
		require.NoError(t, running.Start())
		t.Cleanup(func() { _ = running.Process.Kill(); _ = running.Wait() })
		dead := exec.Command("sleep", "60")
		require.NoError(t, dead.Start())
		require.NoError(t, dead.Process.Kill())
		_ = dead.Wait()
		acquire := func(name, owner string) string {
			t.Helper()
			l, err := f.s.LeaseAcquire(f.ctx, name, owner, 15*time.Second)
			require.NoError(t, err)
			return l.Owner
		}
		holderOf := func(pid int) string { return fmt.Sprintf("%s:%d:beef", host, pid) }

		gone := holderOf(dead.Process.Pid)
		require.Equal(t, gone, acquire("a", gone))
		require.Equal(t, "b", acquire("a", "b"), "a lease whose holder died on this host is taken over at once")
		require.Equal(t, "b", acquire("a", gone), "and stays with its new holder")

		alive := holderOf(running.Process.Pid)
		require.Equal(t, alive, acquire("c", alive))
		require.Equal(t, alive, acquire("c", "b"), "a running holder keeps its lease")

		elsewhere := fmt.Sprintf("%s-elsewhere:%d:beef", host, dead.Process.Pid)
		require.Equal(t, elsewhere, acquire("d", elsewhere))
		require.Equal(t, elsewhere, acquire("d", "b"), "a holder of another host keeps its lease until it expires")
	})

	parallel(t, "Leases/FenceDispatch", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		fenced := func(owner string) ([]revisit.Visit, error) {
			return f.s.VisitsDispatch(f.ctx, revisit.DispatchParams{Owner: owner, Lease: "orchestrator:git",
				Grab: revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OldestScheduledFirst}})
		}
		_, err := fenced("a")
		requireCode(t, err, revisit.ErrConflict, "", "no lease yet")
		_, err = f.s.LeaseAcquire(f.ctx, "orchestrator:git", "a", time.Minute)
		require.NoError(t, err)
		_, err = fenced("b")
		requireCode(t, err, revisit.ErrConflict, "", "someone else's lease")
		require.Empty(t, f.counts(), "a refused dispatch records nothing")
		require.Nil(t, f.stats("o0", "git"), "and marks nothing")
		vs, err := fenced("a")
		require.NoError(t, err)
		require.Len(t, vs, 1)
		f.clock.Advance(time.Minute)
		_, err = fenced("a")
		requireCode(t, err, revisit.ErrConflict, "", "an expired lease fences its owner out")
	})
}
