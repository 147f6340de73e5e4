package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// The writes of an import from another scheduler's database: rows kept as
// they are, ids and times included.

func init() {
	register("Import/Listers", func(t *testing.T, newStore NewStore) {
		f := newFixture(t, newStore)
		created, updated := at(-48*time.Hour+time.Microsecond), at(-time.Hour+7*time.Microsecond)
		a := revisit.Lister{ID: uuid.New(), Name: "gitlab", InstanceName: "gitlab.com", Created: created, Updated: updated,
			CurrentState: json.RawMessage(`{"last_page":{"n":12,"name":"ünïcode ✓"},"ids":[1,2]}`),
			LastListingFinishedAt: atp(-2 * time.Hour), FirstVisitsQueuePrefix: sp("add_forge_now"),
			FirstVisitsScheduledAt: atp(-90 * time.Minute)}
		b := revisit.Lister{ID: uuid.New(), Name: "cgit", Created: created, Updated: updated, CurrentState: json.RawMessage(`{}`)}
		require.NoError(t, f.s.ListersImport(f.ctx, []revisit.Lister{a, b}))
		got, err := f.s.ListerGetByIDs(f.ctx, []uuid.UUID{a.ID, b.ID})
		require.NoError(t, err)
		require.Len(t, got, 2)
		byID := map[uuid.UUID]revisit.Lister{got[0].ID: got[0], got[1].ID: got[1]}
		for _, want := range []revisit.Lister{a, b} {
			l := byID[want.ID]
			require.Equal(t, want.Name, l.Name)
			require.Equal(t, want.InstanceName, l.InstanceName)
			requireTime(t, want.Created, l.Created)
			requireTime(t, want.Updated, l.Updated, "the optimistic-lock token, to the microsecond")
			require.JSONEq(t, string(want.CurrentState), string(l.CurrentState))
			requireTimePtr(t, want.LastListingFinishedAt, l.LastListingFinishedAt)
			require.Equal(t, want.FirstVisitsQueuePrefix, l.FirstVisitsQueuePrefix)
			requireTimePtr(t, want.FirstVisitsScheduledAt, l.FirstVisitsScheduledAt)
		}
		// The imported token works: the lister updates as before the switch.
		a.CurrentState = json.RawMessage(`{"last_page":{"n":13}}`)
		_, err = f.s.ListerUpdate(f.ctx, a)
		require.NoError(t, err)

		a.Updated = updated
		a.CurrentState = json.RawMessage(`{"again":true}`)
		require.NoError(t, f.s.ListersImport(f.ctx, []revisit.Lister{a}), "importing again replaces")
		l, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.JSONEq(t, `{"again":true}`, string(l.CurrentState))
		requireTime(t, updated, l.Updated)

		other := b
		other.ID = uuid.New()
		err = f.s.ListersImport(f.ctx, []revisit.Lister{a, other})
		requireField(t, err, revisit.ErrConflict, "listers[1]")
		require.ErrorContains(t, err, "cgit/ exists with another id")
		bad := b
		bad.CurrentState = json.RawMessage(`[1]`)
		requireField(t, f.s.ListersImport(f.ctx, []revisit.Lister{a, bad}), revisit.ErrInvalid, "listers[1].current_state")
		bad = b
		bad.ID = uuid.Nil
		requireField(t, f.s.ListersImport(f.ctx, []revisit.Lister{bad}), revisit.ErrInvalid, "listers[0].id")
	})

	register("Import/ListedOriginsKeepTheirDates", func(t *testing.T, newStore NewStore) {
		f := newFixture(t, newStore)
		l := f.lister("github", "")
		m := f.lister("mirror", "")
		first, last := at(-1000*time.Hour+3*time.Microsecond), at(-time.Hour+5*time.Microsecond)
		x := origin(l.ID, "x", "git")
		x.FirstSeen, x.LastSeen = first, last
		shared := origin(m.ID, "x", "git")
		shared.FirstSeen, shared.LastSeen = first.Add(time.Hour), last
		foo := origin(l.ID, "x", "git")
		foo.URL, foo.FirstSeen, foo.LastSeen, foo.Enabled = "foo", first, last, false
		res, err := f.s.ListedOriginsImport(f.ctx, []revisit.ListedOrigin{x, shared, foo})
		require.NoError(t, err)
		require.Equal(t, 3, res.Inserted)
		got := f.get(l.ID, "x", "git")
		requireTime(t, first, got.FirstSeen)
		requireTime(t, last, got.LastSeen)
		requireTime(t, first.Add(time.Hour), f.get(m.ID, "x", "git").FirstSeen)
		all := f.all(revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled})
		require.Len(t, all, 3, "a URL of any text, disabled, and an origin of two listers")

		res, err = f.s.ListedOriginsImport(f.ctx, []revisit.ListedOrigin{x})
		require.NoError(t, err)
		require.Equal(t, 1, res.Updated)
		requireTime(t, last, f.get(l.ID, "x", "git").LastSeen, "importing again changes nothing")

		p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: at(0), DryRun: true,
			EveryListedRow: true}
		require.Len(t, f.grab(p), 2, "both listers' rows of the shared origin, the disabled one left")
		p.EveryListedRow = false
		require.Len(t, f.grab(p), 1, "one origin")
	})
}
