// Package storetest is the conformance suite every store implementation
// passes: the same behaviour on PostgreSQL and on SQLite.
package storetest

import (
	"testing"
	"time"

	"github.com/revisit-sched/revisit/store"
)

// NewStore returns an empty, migrated store, isolated from every other store
// it returns (the suite runs tests in parallel), whose clock is clock. The
// store is closed by the suite's cleanup.
type NewStore func(t *testing.T, clock func() time.Time) store.Store

// Exercise runs the whole conformance suite against stores made by newStore:
// one function per area of the store, each running its cases as parallel
// subtests of t named "Area/Case".
func Exercise(t *testing.T, newStore NewStore) {
	t.Helper()

	exerciseListers(t, newStore)
	exerciseFirstVisits(t, newStore)
	exerciseMetrics(t, newStore)

	exerciseOrigins(t, newStore)
	exerciseDisable(t, newStore)
	exerciseOutcomes(t, newStore)
	exerciseRecordReturning(t, newStore)
	exerciseRecordConcurrency(t, newStore)
	exerciseBrowse(t, newStore)
	exerciseSearch(t, newStore)
	exerciseURLSearchSwitch(t, newStore)

	exerciseGrab(t, newStore)
	exerciseGrabConcurrency(t, newStore)
	exerciseCooldowns(t, newStore)
	exerciseScheduled(t, newStore)
	exerciseSharedOrigins(t, newStore)
	exerciseProperty(t, newStore)
	exerciseWalks(t, newStore)

	exerciseStats(t, newStore)
	exerciseStatsWrite(t, newStore)
	exerciseRecentResults(t, newStore)
	exerciseActivity(t, newStore)
	exerciseActivityResults(t, newStore)
	exerciseVisits(t, newStore)
	exerciseCloseByOrigin(t, newStore)

	exerciseQueue(t, newStore)
	exerciseQueueActions(t, newStore)
	exerciseQueueList(t, newStore)
	exerciseNotify(t, newStore)

	exerciseOperator(t, newStore)
	exerciseActions(t, newStore)

	exerciseTaskTypes(t, newStore)
	exerciseTasks(t, newStore)
	exerciseTaskRuns(t, newStore)
	exerciseTaskConfirm(t, newStore)
	exerciseSWH(t, newStore)
	exerciseImports(t, newStore)
	exerciseFootprint(t, newStore)
}

// parallel runs c as a parallel subtest of t named name.
func parallel(t *testing.T, name string, c func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		c(t)
	})
}
