package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func exerciseGrabConcurrency(t *testing.T, newStore NewStore) {
	parallel(t, "Grab/ConcurrentDisjoint", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		const total, workers, count = 150, 8, 25
		var batch []revisit.ListedOrigin
		for i := range total {
			batch = append(batch, origin(l.ID, fmt.Sprintf("o%03d", i), "git"))
		}
		f.record(batch...)
		// Another visit type, never to be returned.
		f.record(origin(l.ID, "o000", "hg"))

		results := make([][]string, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range total {
					got, err := f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "git", Count: count,
						Policy: revisit.OldestScheduledFirst, Now: base})
					if err != nil {
						errs[w] = err
						return
					}
					if len(got) == 0 {
						return
					}
					for _, o := range got {
						if o.VisitType != "git" {
							errs[w] = fmt.Errorf("got visit type %q", o.VisitType)
							return
						}
					}
					results[w] = append(results[w], names(got)...)
				}
			}()
		}
		close(start)
		wg.Wait()
		owner := map[string]int{}
		for w := range workers {
			require.NoError(t, errs[w], "worker %d", w)
			for _, n := range results[w] {
				prev, dup := owner[n]
				require.False(t, dup, "%s returned to workers %d and %d", n, prev, w)
				owner[n] = w
			}
		}
		require.Len(t, owner, total, "every eligible origin returned once")
		for _, o := range batch {
			requireTimePtr(t, &base, f.stats(names([]revisit.ListedOrigin{o})[0], "git").LastScheduled)
		}
	})
}

func exerciseRecordConcurrency(t *testing.T, newStore NewStore) {
	// Two listers that list the same new origins at the same moment, in
	// concurrent batches (one recording as ListedOriginsRecord does, the
	// other as ListedOriginsRecordReturning): each grab must still take
	// every lister's row of an origin, so that no origin is offered twice.
	parallel(t, "Record/ConcurrentListersOfOneOrigin", func(t *testing.T) {
		f := newFixture(t, newStore)
		listers := []revisit.Lister{f.lister("github", ""), f.lister("swh-save", "")}
		const rounds, size = 5, 400
		for r := range rounds {
			errs := make([]error, len(listers))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, l := range listers {
				batch := make([]revisit.ListedOrigin, size)
				for j := range size {
					batch[j] = origin(l.ID, fmt.Sprintf("r%d-o%03d", r, j), "git")
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if i == 0 {
						_, errs[i] = f.s.ListedOriginsRecord(f.ctx, batch)
					} else {
						_, errs[i] = f.s.ListedOriginsRecordReturning(f.ctx, batch)
					}
				}()
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				require.NoError(t, err, "lister %d, round %d", i, r)
			}
		}
		seen := map[string]int{}
		for {
			got, err := f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "git", Count: 150,
				Policy: revisit.OldestScheduledFirst, Now: base})
			require.NoError(t, err)
			if len(got) == 0 {
				break
			}
			for _, n := range names(got) {
				seen[n]++
				require.Equal(t, 1, seen[n], "%s offered twice", n)
			}
		}
		require.Len(t, seen, rounds*size, "every origin offered once")
	})
}
