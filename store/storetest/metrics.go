package storetest

import (
	"bytes"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// metricFigures are the counts of one (lister, visit type).
type metricFigures struct {
	lister             uuid.UUID
	visitType          string
	known, enabled     int64
	neverVisited       int64
	withPendingChanges int64
}

func figures(ms []revisit.SchedulerMetrics) []metricFigures {
	out := make([]metricFigures, len(ms))
	for i, m := range ms {
		out[i] = metricFigures{m.ListerID, m.VisitType, m.OriginsKnown, m.OriginsEnabled,
			m.OriginsNeverVisited, m.OriginsWithPendingChanges}
	}
	return sortFigures(out...)
}

func sortFigures(fs ...metricFigures) []metricFigures {
	out := append([]metricFigures(nil), fs...)
	sort.Slice(out, func(i, j int) bool {
		if c := bytes.Compare(out[i].lister[:], out[j].lister[:]); c != 0 {
			return c < 0
		}
		return out[i].visitType < out[j].visitType
	})
	return out
}

func exerciseMetrics(t *testing.T, newStore NewStore) {
	parallel(t, "Metrics/UpdateAndGet", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("gitlab", "framagit.org")
		f.lister("empty", "")
		ls := []revisit.Lister{a, b}
		f.load(ls, false,
			row{name: "never"},
			row{name: "pending", successful: atp(-2 * day), update: atp(-day)},
			row{name: "up-to-date", successful: atp(-day), update: atp(-2 * day)},
			row{name: "disabled", disabled: true},
			row{name: "no-update", successful: atp(-day)},
			row{name: "disabled-pending", disabled: true, successful: atp(-2 * day), update: atp(-day)},
			row{name: "failed-only", status: revisit.VisitFailed, visit: atp(-day), update: atp(-time.Hour)},
			row{name: "nosnap-pending", successful: atp(-2 * day), noSnapshot: true, update: atp(-day)},
			row{name: "scheduled-only", scheduled: atp(-day)},
			row{name: "hg-never", vt: "hg"},
			row{name: "never", lister: 1},
			row{name: "b-disabled", lister: 1, disabled: true},
		)
		now := base.Add(1500 * time.Nanosecond)
		got, err := f.s.MetricsUpdate(f.ctx, nil, now)
		require.NoError(t, err)
		want := sortFigures(
			// never, failed-only, scheduled-only: never visited; pending,
			// nosnap-pending: pending changes.
			metricFigures{a.ID, "git", 9, 7, 3, 2},
			metricFigures{a.ID, "hg", 1, 1, 1, 0},
			metricFigures{b.ID, "git", 2, 1, 1, 0},
		)
		require.Equal(t, want, figures(got))
		for _, m := range got {
			requireTime(t, now, m.LastUpdate)
		}

		all, err := f.s.MetricsGet(f.ctx, nil, "")
		require.NoError(t, err)
		require.Equal(t, want, figures(all))
		for _, m := range all {
			requireTime(t, now, m.LastUpdate)
		}
		byLister, err := f.s.MetricsGet(f.ctx, &a.ID, "")
		require.NoError(t, err)
		require.Equal(t, figuresOf(want, a.ID, ""), figures(byLister))
		byType, err := f.s.MetricsGet(f.ctx, nil, "git")
		require.NoError(t, err)
		require.Equal(t, figuresOf(want, uuid.Nil, "git"), figures(byType))
		both, err := f.s.MetricsGet(f.ctx, &a.ID, "hg")
		require.NoError(t, err)
		require.Equal(t, figuresOf(want, a.ID, "hg"), figures(both))
		none, err := f.s.MetricsGet(f.ctx, &b.ID, "hg")
		require.NoError(t, err)
		require.Empty(t, none)
	})

	parallel(t, "Metrics/UpdateOneListerLeavesOthers", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("gitlab", "framagit.org")
		ls := []revisit.Lister{a, b}
		f.load(ls, false, row{name: "x"}, row{name: "y", lister: 1})
		t1 := at(time.Hour)
		_, err := f.s.MetricsUpdate(f.ctx, nil, t1)
		require.NoError(t, err)

		f.load(ls, false, row{name: "x2"}, row{name: "y2", lister: 1},
			row{name: "x", successful: atp(-day), update: atp(-time.Hour)})
		t2 := at(2 * time.Hour)
		got, err := f.s.MetricsUpdate(f.ctx, &a.ID, t2)
		require.NoError(t, err)
		require.Equal(t, []metricFigures{{a.ID, "git", 2, 2, 1, 1}}, figures(got), "only lister a, recomputed")
		requireTime(t, t2, got[0].LastUpdate)

		ms, err := f.s.MetricsGet(f.ctx, &b.ID, "")
		require.NoError(t, err)
		require.Equal(t, []metricFigures{{b.ID, "git", 1, 1, 1, 0}}, figures(ms), "lister b untouched")
		requireTime(t, t1, ms[0].LastUpdate)
		ms, err = f.s.MetricsGet(f.ctx, &a.ID, "")
		require.NoError(t, err)
		require.Equal(t, []metricFigures{{a.ID, "git", 2, 2, 1, 1}}, figures(ms))
		requireTime(t, t2, ms[0].LastUpdate)
	})
}

// figuresOf filters fs by lister (uuid.Nil: any) and visit type ("": any).
func figuresOf(fs []metricFigures, lister uuid.UUID, vt string) []metricFigures {
	var out []metricFigures
	for _, m := range fs {
		if (lister == uuid.Nil || m.lister == lister) && (vt == "" || m.visitType == vt) {
			out = append(out, m)
		}
	}
	return out
}
