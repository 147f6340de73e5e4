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

// Exercise runs the whole conformance suite against stores made by newStore.
func Exercise(t *testing.T, newStore NewStore) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore)
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, newStore NewStore)
}

// cases collects the suite; each file of the package appends its own in init.
var cases []testCase

func register(name string, run func(t *testing.T, newStore NewStore)) {
	cases = append(cases, testCase{name: name, run: run})
}
