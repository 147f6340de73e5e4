package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// wakeWithin is how long a change may take to wake up a subscriber.
const wakeWithin = 5 * time.Second

func exerciseNotify(t *testing.T, newStore NewStore) {
	parallel(t, "Notify/EligibleWakesTheVisitType", func(t *testing.T) {
		f := newFixture(t, newStore)
		n, ok := f.s.(store.Notifier)
		if !ok {
			t.Skip("the store does not implement store.Notifier")
		}
		wake, cancel := n.SubscribeEligible("git")
		defer cancel()
		settle := func() {
			time.Sleep(300 * time.Millisecond) // a store may first wake everyone, once listening
			select {
			case <-wake:
			default:
			}
		}
		woken := func(change string) {
			t.Helper()
			select {
			case <-wake:
			case <-time.After(wakeWithin):
				t.Fatalf("%s did not wake up the visit type's subscriber", change)
			}
		}
		l := f.lister("gitlab", "")
		tt := revisit.TaskType{Type: "load-git", BackendName: "swh.loader.git.tasks.UpdateGitRepository"}

		settle()
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, tt))
		woken("creating the load task type")
		tt.MaxQueueLength = 10
		require.NoError(t, f.s.TaskTypeUpdate(f.ctx, tt))
		woken("changing the load task type")
		f.record(revisit.ListedOrigin{ListerID: l.ID, URL: url("a"), VisitType: "git", Enabled: true})
		woken("recording an origin")
		f.recordReturning(revisit.ListedOrigin{ListerID: l.ID, URL: url("b"), VisitType: "git", Enabled: true})
		woken("recording an origin, returning the rows")
		_, err := f.s.VisitStatsWrite(f.ctx, []revisit.VisitStatsWrite{{Stats: revisit.VisitStats{URL: url("a"),
			VisitType: "git", LastVisit: atp(0), LastVisitStatus: stp(revisit.VisitFailed), SuccessiveVisits: 1}}})
		require.NoError(t, err)
		woken("writing visit stats")
		_, err = f.s.ListedOriginsSetEnabled(f.ctx, revisit.OriginKey{URL: url("a"), VisitType: "git"}, nil, false)
		require.NoError(t, err)
		settle()
		_, err = f.s.ListedOriginsSetEnabled(f.ctx, revisit.OriginKey{URL: url("a"), VisitType: "git"}, nil, true)
		require.NoError(t, err)
		woken("enabling an origin")
		_, err = f.s.VisitTypePauseSet(f.ctx, revisit.Pause{VisitType: "git", By: "ops", At: at(0)})
		require.NoError(t, err)
		woken("pausing the visit type")
		_, err = f.s.VisitTypePauseClear(f.ctx, "git")
		require.NoError(t, err)
		woken("resuming the visit type")
		vs := f.dispatch(1, nil)
		_, err = f.s.VisitsSent(f.ctx, visitIDs(vs), at(0))
		require.NoError(t, err)
		settle()
		lost, err := f.s.VisitsExpire(f.ctx, "git", at(day))
		require.NoError(t, err)
		require.Equal(t, 1, lost)
		woken("declaring a visit lost")

	})
}
