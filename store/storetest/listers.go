package storetest

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func exerciseListers(t *testing.T, newStore NewStore) {
	parallel(t, "Lister/GetOrCreateIdempotent", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.clock.Set(base.Add(1500 * time.Nanosecond))
		a := f.lister("gitlab", "gitlab.com")
		require.NotEqual(t, uuid.Nil, a.ID)
		require.Equal(t, "gitlab", a.Name)
		require.Equal(t, "gitlab.com", a.InstanceName)
		requireTime(t, f.clock.Now(), a.Created, "created = clock now")
		requireTime(t, f.clock.Now(), a.Updated, "updated = clock now")

		f.clock.Advance(time.Hour)
		again := f.lister("gitlab", "gitlab.com")
		require.Equal(t, a.ID, again.ID)
		requireTime(t, a.Created, again.Created, "get-or-create of an existing lister changes nothing")
		requireTime(t, a.Updated, again.Updated)

		other := f.lister("gitlab", "framagit.org")
		require.NotEqual(t, a.ID, other.ID)
		noInstance := f.lister("gitlab", "")
		require.NotEqual(t, a.ID, noInstance.ID)
		require.NotEqual(t, other.ID, noInstance.ID)
		require.Equal(t, noInstance.ID, f.lister("gitlab", "").ID)
	})

	parallel(t, "Lister/GetOrCreateConcurrent", func(t *testing.T) {
		f := newFixture(t, newStore)
		const n = 8
		ids := make([]uuid.UUID, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				l, err := f.s.ListerGetOrCreate(f.ctx, "github", "github.com")
				ids[i], errs[i] = l.ID, err
			}()
		}
		close(start)
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i], "goroutine %d", i)
			require.NotEqual(t, uuid.Nil, ids[i])
			require.Equal(t, ids[0], ids[i], "goroutine %d got another lister", i)
		}
		list, err := f.s.ListerList(f.ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
	})

	parallel(t, "Lister/GetOrCreateInvalid", func(t *testing.T) {
		f := newFixture(t, newStore)
		for _, c := range []struct {
			name, instance, field string
		}{
			{"", "gitlab.com", "name"},
			{" gitlab", "gitlab.com", "name"},
			{strings.Repeat("n", revisit.MaxNameLength+1), "", "name"},
			{"gitlab", "gitlab.com\n", "instance_name"},
			{"gitlab", "\xff", "instance_name"},
		} {
			_, err := f.s.ListerGetOrCreate(f.ctx, c.name, c.instance)
			requireInvalid(t, err, c.field, "%q %q", c.name, c.instance)
		}
		list, err := f.s.ListerList(f.ctx)
		require.NoError(t, err)
		require.Empty(t, list, "no lister was created")
	})

	parallel(t, "Lister/GetMissingNotFound", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.lister("gitlab", "gitlab.com")
		_, err := f.s.ListerGet(f.ctx, "gitlab", "framagit.org")
		requireCode(t, err, revisit.ErrNotFound, "")
		_, err = f.s.ListerGet(f.ctx, "github", "gitlab.com")
		requireCode(t, err, revisit.ErrNotFound, "")
		got, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.Equal(t, "gitlab.com", got.InstanceName)
	})

	parallel(t, "Lister/UpdateOptimistic", func(t *testing.T) {
		f := newFixture(t, newStore)
		// A clock below the microsecond: the token must still round-trip.
		f.clock.Set(base.Add(1500 * time.Nanosecond))
		l := f.lister("gitlab", "gitlab.com")
		old := l

		f.clock.Advance(time.Minute + 700*time.Nanosecond)
		finished := base.Add(30*time.Second + 2500*time.Nanosecond)
		l.CurrentState = json.RawMessage(`{"page": 7, "cursor": "abc"}`)
		l.LastListingFinishedAt = &finished
		upd, err := f.s.ListerUpdate(f.ctx, l)
		require.NoError(t, err)
		require.Equal(t, l.ID, upd.ID)
		require.True(t, upd.Updated.After(old.Updated), "updated moves forward: %s -> %s", old.Updated, upd.Updated)
		requireTime(t, f.clock.Now(), upd.Updated, "updated = clock now")
		require.JSONEq(t, `{"page": 7, "cursor": "abc"}`, string(upd.CurrentState))
		requireTimePtr(t, &finished, upd.LastListingFinishedAt)

		got, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.JSONEq(t, `{"page": 7, "cursor": "abc"}`, string(got.CurrentState))
		requireTimePtr(t, &finished, got.LastListingFinishedAt)
		requireTime(t, upd.Updated, got.Updated)
		requireTime(t, old.Created, got.Created, "created never changes")

		// The old token is stale now.
		f.clock.Advance(time.Minute)
		stale := old
		stale.CurrentState = json.RawMessage(`{"page": 1}`)
		_, err = f.s.ListerUpdate(f.ctx, stale)
		requireCode(t, err, revisit.ErrStaleData, "")
		got, err = f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.JSONEq(t, `{"page": 7, "cursor": "abc"}`, string(got.CurrentState), "a stale update writes nothing")

		// The returned one is current, and may clear the listing time.
		f.clock.Advance(time.Minute)
		upd.CurrentState = json.RawMessage(`{"page": 8}`)
		upd.LastListingFinishedAt = nil
		upd2, err := f.s.ListerUpdate(f.ctx, upd)
		require.NoError(t, err, "the Updated returned by ListerUpdate is the current token")
		require.True(t, upd2.Updated.After(upd.Updated))
		got, err = f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.JSONEq(t, `{"page": 8}`, string(got.CurrentState))
		require.Nil(t, got.LastListingFinishedAt)

		// A token read with ListerGet works too.
		f.clock.Advance(time.Minute)
		got.CurrentState = json.RawMessage(`{"page": 9}`)
		_, err = f.s.ListerUpdate(f.ctx, got)
		require.NoError(t, err)
		_, err = f.s.ListerUpdate(f.ctx, got)
		requireCode(t, err, revisit.ErrStaleData, "", "the same token twice")
	})

	parallel(t, "Lister/UpdateEdges", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")

		// A clock that has not moved past the stored updated still moves
		// it forward, by a microsecond.
		upd, err := f.s.ListerUpdate(f.ctx, l)
		require.NoError(t, err)
		requireTime(t, l.Updated.Add(time.Microsecond), upd.Updated)

		bad := upd
		bad.CurrentState = json.RawMessage(`[1, 2]`)
		_, err = f.s.ListerUpdate(f.ctx, bad)
		requireInvalid(t, err, "current_state")
		gone := upd
		gone.ID = uuid.New()
		_, err = f.s.ListerUpdate(f.ctx, gone)
		requireCode(t, err, revisit.ErrNotFound, "")

		none, err := f.s.ListerGetByIDs(f.ctx, nil)
		require.NoError(t, err)
		require.NotNil(t, none, "an empty list, not none")
		require.Empty(t, none)
	})

	parallel(t, "Lister/ListOrder", func(t *testing.T) {
		f := newFixture(t, newStore)
		for _, n := range [][2]string{{"gitlab", "gitlab.com"}, {"cgit", "git.kernel.org"},
			{"gitlab", "framagit.org"}, {"pypi", ""}, {"cgit", "git.savannah.gnu.org"}} {
			f.lister(n[0], n[1])
		}
		list, err := f.s.ListerList(f.ctx)
		require.NoError(t, err)
		var got [][2]string
		for _, l := range list {
			got = append(got, [2]string{l.Name, l.InstanceName})
		}
		require.Equal(t, [][2]string{{"cgit", "git.kernel.org"}, {"cgit", "git.savannah.gnu.org"},
			{"gitlab", "framagit.org"}, {"gitlab", "gitlab.com"}, {"pypi", ""}}, got)
	})

	parallel(t, "Lister/GetByIDs", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("github", "github.com")
		f.lister("pypi", "")
		got, err := f.s.ListerGetByIDs(f.ctx, []uuid.UUID{a.ID, uuid.New(), b.ID})
		require.NoError(t, err)
		sort.Slice(got, func(i, j int) bool { return bytes.Compare(got[i].ID[:], got[j].ID[:]) < 0 })
		want := []uuid.UUID{a.ID, b.ID}
		sort.Slice(want, func(i, j int) bool { return bytes.Compare(want[i][:], want[j][:]) < 0 })
		require.Len(t, got, 2)
		require.Equal(t, want[0], got[0].ID)
		require.Equal(t, want[1], got[1].ID)
		for _, l := range got {
			if l.ID == a.ID {
				require.Equal(t, "gitlab.com", l.InstanceName)
			}
		}
		got, err = f.s.ListerGetByIDs(f.ctx, []uuid.UUID{uuid.New()})
		require.NoError(t, err)
		require.Empty(t, got)
	})
}
