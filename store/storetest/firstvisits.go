package storetest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// A lister's first visits (its queue prefix and when they were all
// scheduled), and the optimistic token of ListerUpdate, at microsecond
// precision as the Software Heritage RPC carries it.
func exerciseFirstVisits(t *testing.T, newStore NewStore) {
	parallel(t, "Lister/GetOrCreateForFirstVisits", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.clock.Set(base.Add(1500 * time.Nanosecond))
		l, err := f.s.ListerGetOrCreateForFirstVisits(f.ctx, "gitlab", "gitlab.com", "high")
		require.NoError(t, err)
		require.NotEqual(t, uuid.Nil, l.ID)
		require.Equal(t, sp("high"), l.FirstVisitsQueuePrefix)
		require.Nil(t, l.FirstVisitsScheduledAt)
		requireTime(t, f.clock.Now(), l.Created)
		requireTime(t, f.clock.Now(), l.Updated)

		got, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.Equal(t, l, got, "every field as created")
		list, err := f.s.ListerList(f.ctx)
		require.NoError(t, err)
		require.Equal(t, []revisit.Lister{l}, list)
		byID, err := f.s.ListerGetByIDs(f.ctx, []uuid.UUID{l.ID})
		require.NoError(t, err)
		require.Equal(t, []revisit.Lister{l}, byID)

		f.clock.Advance(time.Hour)
		again, err := f.s.ListerGetOrCreateForFirstVisits(f.ctx, "gitlab", "gitlab.com", "other")
		require.NoError(t, err)
		require.Equal(t, l, again, "an existing lister keeps its prefix, and nothing changes")
		plain := f.lister("gitlab", "gitlab.com")
		require.Equal(t, l, plain, "ListerGetOrCreate keeps the prefix too")

		without := f.lister("github", "github.com")
		require.Nil(t, without.FirstVisitsQueuePrefix)
		kept, err := f.s.ListerGetOrCreateForFirstVisits(f.ctx, "github", "github.com", "high")
		require.NoError(t, err)
		require.Equal(t, without, kept, "a lister without prefix keeps none")

		longest := strings.Repeat("p", revisit.MaxQueuePrefixLength)
		l2, err := f.s.ListerGetOrCreateForFirstVisits(f.ctx, "cgit", "", longest)
		require.NoError(t, err)
		require.Equal(t, sp(longest), l2.FirstVisitsQueuePrefix, "a prefix as long as allowed is kept whole")
	})

	parallel(t, "Lister/GetOrCreateForFirstVisitsInvalid", func(t *testing.T) {
		f := newFixture(t, newStore)
		for _, prefix := range []string{"", strings.Repeat("p", revisit.MaxQueuePrefixLength+1), "high\xff"} {
			_, err := f.s.ListerGetOrCreateForFirstVisits(f.ctx, "gitlab", "gitlab.com", prefix)
			requireInvalid(t, err, "first_visits_queue_prefix")
		}
		_, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		requireCode(t, err, revisit.ErrNotFound, "", "no lister was created")
		_, err = f.s.ListerGetOrCreateForFirstVisits(f.ctx, "", "gitlab.com", "high")
		requireInvalid(t, err, "name", "a lister needs a name")
	})

	parallel(t, "Lister/GetOrCreateForFirstVisitsConcurrent", func(t *testing.T) {
		f := newFixture(t, newStore)
		const n = 8
		got := make([]revisit.Lister, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				if i%2 == 0 {
					got[i], errs[i] = f.s.ListerGetOrCreateForFirstVisits(f.ctx, "github", "github.com", "high")
				} else {
					got[i], errs[i] = f.s.ListerGetOrCreate(f.ctx, "github", "github.com")
				}
			})
		}
		close(start)
		wg.Wait()
		stored, err := f.s.ListerGet(f.ctx, "github", "github.com")
		require.NoError(t, err)
		for i := range n {
			require.NoError(t, errs[i], "goroutine %d", i)
			require.Equal(t, stored, got[i], "goroutine %d: the one lister, with the prefix of whoever created it", i)
		}
	})

	parallel(t, "Lister/UpdateFirstVisits", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		f.clock.Advance(time.Minute)
		scheduled := base.Add(30*time.Second + 2500*time.Nanosecond)
		l.FirstVisitsQueuePrefix = sp("high")
		l.FirstVisitsScheduledAt = &scheduled
		l.CurrentState = json.RawMessage(`{"page": 2}`)
		upd, err := f.s.ListerUpdate(f.ctx, l)
		require.NoError(t, err)
		require.Equal(t, sp("high"), upd.FirstVisitsQueuePrefix)
		requireTimePtr(t, &scheduled, upd.FirstVisitsScheduledAt, "stored at the microsecond")
		got, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.Equal(t, upd, got)

		// A bad prefix is refused, writes nothing, and leaves the token good.
		bad := got
		bad.FirstVisitsQueuePrefix = sp("")
		bad.CurrentState = json.RawMessage(`{"page": 3}`)
		_, err = f.s.ListerUpdate(f.ctx, bad)
		requireInvalid(t, err, "first_visits_queue_prefix")
		bad.FirstVisitsQueuePrefix = sp(strings.Repeat("p", revisit.MaxQueuePrefixLength+1))
		_, err = f.s.ListerUpdate(f.ctx, bad)
		requireInvalid(t, err, "first_visits_queue_prefix")
		after, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.Equal(t, got, after, "a refused update writes nothing")

		// Both cleared, from the current token.
		f.clock.Advance(time.Minute)
		after.FirstVisitsQueuePrefix, after.FirstVisitsScheduledAt = nil, nil
		cleared, err := f.s.ListerUpdate(f.ctx, after)
		require.NoError(t, err)
		require.Nil(t, cleared.FirstVisitsQueuePrefix)
		require.Nil(t, cleared.FirstVisitsScheduledAt)
		got, err = f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.Equal(t, cleared, got)

		// A stale update writes neither.
		f.clock.Advance(time.Minute)
		upd.FirstVisitsQueuePrefix = sp("stale")
		_, err = f.s.ListerUpdate(f.ctx, upd)
		requireCode(t, err, revisit.ErrStaleData, "")
		got, err = f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.Nil(t, got.FirstVisitsQueuePrefix)
	})

	// The Software Heritage client sends back the updated it read, as a
	// time at the microsecond: it must match the stored one exactly, and
	// one microsecond off must not.
	parallel(t, "Lister/UpdatedRoundTripsToTheMicrosecond", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.clock.Set(base.Add(1500 * time.Nanosecond))
		created, err := f.s.ListerGetOrCreateForFirstVisits(f.ctx, "gitlab", "gitlab.com", "high")
		require.NoError(t, err)
		require.Equal(t, created.Updated, revisit.Microsecond(created.Updated), "updated is whole microseconds")

		readers := map[string]func() revisit.Lister{
			"ListerGet": func() revisit.Lister {
				l, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
				require.NoError(t, err)
				return l
			},
			"ListerList": func() revisit.Lister {
				ls, err := f.s.ListerList(f.ctx)
				require.NoError(t, err)
				require.Len(t, ls, 1)
				return ls[0]
			},
			"ListerGetByIDs": func() revisit.Lister {
				ls, err := f.s.ListerGetByIDs(f.ctx, []uuid.UUID{created.ID})
				require.NoError(t, err)
				require.Len(t, ls, 1)
				return ls[0]
			},
		}
		for _, name := range []string{"ListerGet", "ListerList", "ListerGetByIDs"} {
			got := readers[name]()
			for _, off := range []time.Duration{time.Microsecond, -time.Microsecond} {
				wrong := got
				wrong.Updated = got.Updated.Add(off)
				wrong.CurrentState = json.RawMessage(`{"wrong": true}`)
				_, err := f.s.ListerUpdate(f.ctx, wrong)
				requireCode(t, err, revisit.ErrStaleData, "", "%s, updated %+v", name, off)
			}
			f.clock.Advance(time.Second + 700*time.Nanosecond)
			got.CurrentState = json.RawMessage(`{"by": "` + name + `"}`)
			upd, err := f.s.ListerUpdate(f.ctx, got)
			require.NoError(t, err, "%s: the updated read back is the current token", name)
			require.JSONEq(t, `{"by": "`+name+`"}`, string(upd.CurrentState))
			require.Equal(t, upd.Updated, revisit.Microsecond(upd.Updated), "updated is whole microseconds")
		}
	})
}
