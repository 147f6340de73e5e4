package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

type cooldownKind int

const (
	cdAbsolute cooldownKind = iota
	cdScheduled
	cdFailed
	cdNotFound
)

func (k cooldownKind) String() string {
	return [...]string{"Absolute", "Scheduled", "Failed", "NotFound"}[k]
}

func (k cooldownKind) get(c revisit.Cooldowns) time.Duration {
	return [...]time.Duration{c.Absolute, c.Scheduled, c.Failed, c.NotFound}[k]
}

func (k cooldownKind) set(c *revisit.Cooldowns, d time.Duration) {
	*[...]*time.Duration{&c.Absolute, &c.Scheduled, &c.Failed, &c.NotFound}[k] = d
}

// custom is a non-default duration for each kind.
func (k cooldownKind) custom() time.Duration {
	return [...]time.Duration{3 * time.Hour, 3 * day, 2 * day, 5 * day}[k]
}

// cooldownRow is a row of a cooldown fixture and the cooldowns that keep it
// from being eligible at base.
type cooldownRow struct {
	row
	blockedBy []cooldownKind
}

// cooldownRows returns rows around the boundary of kind at duration d (now
// is base), in oldest_scheduled_first order.
func cooldownRows(kind cooldownKind, d time.Duration) []cooldownRow {
	now := base
	b := func(ks ...cooldownKind) []cooldownKind { return ks }
	switch kind {
	case cdAbsolute:
		// A visit after the schedule keeps the scheduled cooldown out of it.
		lv := now.Add(-d / 2)
		return []cooldownRow{
			{row{name: "never"}, nil},
			{row{name: "before", scheduled: tp(now.Add(-d - time.Microsecond)), visit: &lv, status: revisit.VisitSuccessful, successful: &lv}, nil},
			{row{name: "at", scheduled: tp(now.Add(-d)), visit: &lv, status: revisit.VisitSuccessful, successful: &lv}, b(cdAbsolute)},
			{row{name: "recent", scheduled: tp(now.Add(-time.Microsecond)), visit: tp(now), status: revisit.VisitSuccessful, successful: tp(now)}, b(cdAbsolute)},
		}
	case cdScheduled:
		// d is more than a day.
		return []cooldownRow{
			{row{name: "before", scheduled: tp(now.Add(-d - time.Microsecond))}, nil},
			{row{name: "at", scheduled: tp(now.Add(-d))}, b(cdScheduled)},
			{row{name: "visited-after", scheduled: atp(-day), visit: atp(-day + time.Microsecond), status: revisit.VisitSuccessful, successful: atp(-day + time.Microsecond)}, nil},
			{row{name: "visited-same", scheduled: atp(-day), visit: atp(-day), status: revisit.VisitSuccessful, successful: atp(-day)}, b(cdScheduled)},
			{row{name: "visited-before", scheduled: atp(-day), visit: atp(-2 * day), status: revisit.VisitSuccessful, successful: atp(-2 * day)}, b(cdScheduled)},
			{row{name: "visited-recent", scheduled: atp(-time.Hour), visit: atp(-30 * time.Minute), status: revisit.VisitSuccessful, successful: atp(-30 * time.Minute)}, b(cdAbsolute)},
		}
	case cdFailed, cdNotFound:
		st, other, otherKind := revisit.VisitFailed, revisit.VisitNotFound, cdNotFound
		if kind == cdNotFound {
			st, other, otherKind = revisit.VisitNotFound, revisit.VisitFailed, cdFailed
		}
		return []cooldownRow{
			{row{name: "before", visit: tp(now.Add(-d - time.Microsecond)), status: st}, nil},
			{row{name: "at", visit: tp(now.Add(-d)), status: st}, b(kind)},
			{row{name: "recent", visit: atp(-time.Hour), status: st}, b(kind)},
			{row{name: "other-recent", visit: atp(-time.Hour), status: other}, b(otherKind)},
			{row{name: "ok-recent", visit: atp(-time.Hour), status: revisit.VisitSuccessful, successful: atp(-time.Hour)}, nil},
			{row{name: "never"}, nil},
		}
	}
	panic("unknown cooldown kind")
}

// expectEligible returns the names of rows that no enabled cooldown blocks.
func expectEligible(rows []cooldownRow, c revisit.Cooldowns) []string {
	var out []string
next:
	for _, r := range rows {
		for _, k := range r.blockedBy {
			if k.get(c) > 0 {
				continue next
			}
		}
		out = append(out, r.name)
	}
	return out
}

func exerciseCooldowns(t *testing.T, newStore NewStore) {
	for _, kind := range []cooldownKind{cdAbsolute, cdScheduled, cdFailed, cdNotFound} {
		check := func(t *testing.T, f *fixture, rows []cooldownRow, what string, c *revisit.Cooldowns) {
			t.Helper()
			eff := revisit.DefaultCooldowns()
			if c != nil {
				eff = *c
			}
			got := f.grabNames(revisit.GrabParams{VisitType: "git", Count: 100, Policy: revisit.OldestScheduledFirst,
				Now: base, Cooldowns: c, DryRun: true})
			require.Equal(t, expectEligible(rows, eff), got, "%s cooldown, %s: %+v", kind, what, eff)
		}
		load := func(f *fixture, d time.Duration) []cooldownRow {
			rows := cooldownRows(kind, d)
			var rs []row
			for _, r := range rows {
				rs = append(rs, r.row)
			}
			f.load([]revisit.Lister{f.lister("gitlab", "gitlab.com")}, false, rs...)
			return rows
		}
		parallel(t, "Cooldowns/"+kind.String()+"/DefaultDuration", func(t *testing.T) {
			f := newFixture(t, newStore)
			def := revisit.DefaultCooldowns()
			rows := load(f, kind.get(def))
			check(t, f, rows, "nil means the defaults", nil)
			check(t, f, rows, "explicit defaults", &def)
			off := def
			kind.set(&off, 0)
			check(t, f, rows, "disabled by zero", &off)
			check(t, f, rows, "all disabled", &revisit.Cooldowns{})
			only := revisit.Cooldowns{}
			kind.set(&only, kind.get(def))
			check(t, f, rows, "alone", &only)
		})
		parallel(t, "Cooldowns/"+kind.String()+"/CustomDuration", func(t *testing.T) {
			f := newFixture(t, newStore)
			rows := load(f, kind.custom())
			only := revisit.Cooldowns{}
			kind.set(&only, kind.custom())
			check(t, f, rows, "custom alone", &only)
			withDefaults := revisit.DefaultCooldowns()
			kind.set(&withDefaults, kind.custom())
			check(t, f, rows, "custom with the other defaults", &withDefaults)
		})
	}
}
