package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// result is the OriginResult of the fixture origin name of visitType at date.
func result(name, visitType string, date time.Time) revisit.OriginResult {
	return revisit.OriginResult{Key: revisit.OriginKey{URL: url(name), VisitType: visitType}, Date: date}
}

// closeByOrigin runs VisitsCloseByOrigin and requires success.
func (f *fixture) closeByOrigin(results ...revisit.OriginResult) []revisit.Visit {
	f.t.Helper()
	closed, err := f.s.VisitsCloseByOrigin(f.ctx, results)
	require.NoError(f.t, err)
	return closed
}

func exerciseCloseByOrigin(t *testing.T, newStore NewStore) {
	parallel(t, "Visits/CloseByOriginClosesSentAndLost", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.gitOrigins(3)
		vs := f.dispatch(3, nil)
		_, err := f.s.VisitsSent(f.ctx, visitIDs(vs), at(time.Minute))
		require.NoError(t, err)
		n, err := f.s.VisitsExpire(f.ctx, "git", at(2*time.Minute))
		require.NoError(t, err)
		require.Equal(t, 3, n)
		f.clock.Set(at(time.Hour))
		again := f.dispatch(2, nil) // o0 and o1, eligible again once lost
		require.Equal(t, []string{"o0", "o1"}, visitNames(again))
		_, err = f.s.VisitsSent(f.ctx, visitIDs(again), at(time.Hour+time.Minute))
		require.NoError(t, err)
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 2, Lost: 3}, f.counts()["git"])

		require.Empty(t, f.closeByOrigin(result("o0", "git", at(-time.Microsecond))),
			"a result dated before every visit of its origin was scheduled is none of theirs")
		require.Empty(t, f.closeByOrigin(result("o0", "hg", at(day))), "another visit type's result")

		closed := f.closeByOrigin(result("o0", "git", at(30*time.Minute)), result("o2", "git", base))
		require.ElementsMatch(t, []string{vs[0].ID, vs[2].ID}, visitIDs(closed),
			"the lost visits scheduled at or before the results; o0's later visit stays")
		for _, v := range closed {
			require.Equal(t, revisit.VisitLost, v.State)
			require.Equal(t, l.ID, v.Origin.ListerID)
			requireTime(t, base, v.ScheduledAt)
			requireTimePtr(t, atp(time.Minute), v.SentAt)
		}
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 2, Lost: 1}, f.counts()["git"])

		closed = f.closeByOrigin(result("o1", "git", at(time.Hour)))
		require.ElementsMatch(t, []string{vs[1].ID, again[1].ID}, visitIDs(closed),
			"every visit of the origin scheduled at or before the result, sent or lost")
		got, err := f.s.VisitsGet(f.ctx, append(visitIDs(vs), visitIDs(again)...))
		require.NoError(t, err)
		require.Equal(t, []string{again[0].ID}, visitIDs(got), "closed visits are gone")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1}, f.counts()["git"])
		requireTimePtr(t, atp(time.Hour), f.stats("o1", "git").LastScheduled,
			"closing leaves the origin's schedule alone, as VisitsClose does")

		require.Empty(t, f.closeByOrigin(result("o1", "git", at(time.Hour))), "a second result finds nothing")
		closed, err = f.s.VisitsClose(f.ctx, visitIDs(again))
		require.NoError(t, err)
		require.Equal(t, []string{again[0].ID}, visitIDs(closed), "closing by id after closing by origin finds the rest")
	})

	parallel(t, "Visits/CloseByOriginLeavesPendingVisits", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(2)
		vs := f.dispatch(2, nil)
		_, err := f.s.VisitsSent(f.ctx, visitIDs(vs[1:]), at(time.Minute))
		require.NoError(t, err)
		closed := f.closeByOrigin(result("o0", "git", at(day)), result("o1", "git", at(-time.Hour)),
			result("o1", "git", at(time.Hour)))
		require.Equal(t, []string{vs[1].ID}, visitIDs(closed),
			"the pending visit's message may not be published yet; an origin given twice counts at its latest date")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Pending: 1}, f.counts()["git"])
	})

	parallel(t, "Visits/CloseByOriginValidates", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(1)
		vs := f.dispatch(1, nil)
		_, err := f.s.VisitsSent(f.ctx, visitIDs(vs), base)
		require.NoError(t, err)
		good := result("o0", "git", at(time.Hour))

		closed, err := f.s.VisitsCloseByOrigin(f.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, closed)
		for _, c := range []struct {
			bad   revisit.OriginResult
			field string
		}{
			{revisit.OriginResult{Key: revisit.OriginKey{URL: "", VisitType: "git"}, Date: base}, "results[1].url"},
			{revisit.OriginResult{Key: revisit.OriginKey{URL: url("o0"), VisitType: "Git!"}, Date: base}, "results[1].visit_type"},
			{revisit.OriginResult{Key: revisit.OriginKey{URL: url("o0"), VisitType: "git"}}, "results[1].date"},
		} {
			_, err := f.s.VisitsCloseByOrigin(f.ctx, []revisit.OriginResult{good, c.bad})
			requireInvalid(t, err, c.field)
		}
		many := make([]revisit.OriginResult, revisit.MaxOriginResults+1)
		for i := range many {
			many[i] = good
		}
		_, err = f.s.VisitsCloseByOrigin(f.ctx, many)
		requireInvalid(t, err, "results")
		require.ErrorContains(t, err, "at most 10000 origins a call, not 10001")
		require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1}, f.counts()["git"], "nothing closed")

		require.Len(t, f.closeByOrigin(many[:revisit.MaxOriginResults]...), 1, "a full batch is taken")
	})
}
