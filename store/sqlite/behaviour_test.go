package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// These tests cover what the shared suite (store/storetest) does not yet.

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestMetricsUpdate(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, func() time.Time { return t0 })
	a, err := s.ListerGetOrCreate(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ListerGetOrCreate(ctx, "b", "x")
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	upd := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	origins := []revisit.ListedOrigin{
		{ListerID: a.ID, URL: "https://e/1", VisitType: "git", Enabled: true, LastUpdate: upd(-day)},      // pending
		{ListerID: a.ID, URL: "https://e/2", VisitType: "git", Enabled: true, LastUpdate: upd(-10 * day)}, // visited after
		{ListerID: a.ID, URL: "https://e/3", VisitType: "git", Enabled: true},                             // never visited
		{ListerID: a.ID, URL: "https://e/4", VisitType: "git", Enabled: false},                            // disabled
		{ListerID: a.ID, URL: "https://e/5", VisitType: "hg", Enabled: true},
		{ListerID: b.ID, URL: "https://e/1", VisitType: "git", Enabled: true, LastUpdate: upd(-day)},
	}
	if _, err := s.ListedOriginsRecord(ctx, origins); err != nil {
		t.Fatal(err)
	}
	ok := revisit.VisitSuccessful
	visited := upd(-5 * day)
	if err := s.VisitStatsUpsert(ctx, []revisit.VisitStats{
		{URL: "https://e/1", VisitType: "git", LastSuccessful: visited, LastVisit: visited, LastVisitStatus: &ok},
		{URL: "https://e/2", VisitType: "git", LastSuccessful: visited, LastVisit: visited, LastVisitStatus: &ok},
	}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.MetricsUpdate(ctx, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]string][4]int64{
		{a.ID.String(), "git"}: {4, 3, 1, 1},
		{a.ID.String(), "hg"}:  {1, 1, 1, 0},
		{b.ID.String(), "git"}: {1, 1, 0, 1},
	}
	if len(ms) != len(want) {
		t.Fatalf("got %d metrics, want %d: %+v", len(ms), len(want), ms)
	}
	for i, m := range ms {
		if i > 0 && (ms[i-1].ListerID.String() > m.ListerID.String() ||
			ms[i-1].ListerID == m.ListerID && ms[i-1].VisitType > m.VisitType) {
			t.Errorf("metrics not sorted: %+v", ms)
		}
		got := [4]int64{m.OriginsKnown, m.OriginsEnabled, m.OriginsNeverVisited, m.OriginsWithPendingChanges}
		if w := want[[2]string{m.ListerID.String(), m.VisitType}]; got != w {
			t.Errorf("%s %s: got %v, want %v", m.ListerID, m.VisitType, got, w)
		}
		if !m.LastUpdate.Equal(t0) {
			t.Errorf("last update %v, want %v", m.LastUpdate, t0)
		}
	}
	only, err := s.MetricsUpdate(ctx, &b.ID, t0.Add(time.Hour))
	if err != nil || len(only) != 1 || only[0].ListerID != b.ID {
		t.Fatalf("update of one lister: %+v, %v", only, err)
	}
	got, err := s.MetricsGet(ctx, &a.ID, "hg")
	if err != nil || len(got) != 1 || got[0].OriginsKnown != 1 {
		t.Fatalf("get a/hg: %+v, %v", got, err)
	}
	all, err := s.MetricsGet(ctx, nil, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("get all: %+v, %v", all, err)
	}
}

func TestConcurrentGrabsNeverShare(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, func() time.Time { return t0 })
	l, err := s.ListerGetOrCreate(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	batch := make([]revisit.ListedOrigin, n)
	for i := range batch {
		batch[i] = revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://e/%d", i), VisitType: "git", Enabled: true}
	}
	if _, err := s.ListedOriginsRecord(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for range 10 {
				got, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 7,
					Policy: revisit.OldestScheduledFirst, Now: t0})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, o := range got {
					seen[o.URL]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 8*10*7 {
		t.Errorf("grabbed %d distinct origins, want %d", len(seen), 8*10*7)
	}
	for u, c := range seen {
		if c > 1 {
			t.Errorf("%s grabbed %d times", u, c)
		}
	}
}

func TestGrabUnknownLister(t *testing.T) {
	s := openTest(t, nil)
	id := uuid.New()
	_, err := s.GrabNextVisits(context.Background(), revisit.GrabParams{VisitType: "git", Count: 1,
		Policy: revisit.OldestScheduledFirst, ListerID: &id})
	if revisit.Code(err) != revisit.CodeNotFound {
		t.Fatalf("got %v, want a not-found error", err)
	}
}

func TestRecordUnknownListerNamesIndex(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	l, err := s.ListerGetOrCreate(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
		{ListerID: l.ID, URL: "https://e/1", VisitType: "git"},
		{ListerID: uuid.New(), URL: "https://e/2", VisitType: "git"},
	})
	var e *revisit.Error
	if revisit.Code(err) != revisit.CodeInvalid || !errors.As(err, &e) || e.Field != "origins[1].lister_id" {
		t.Fatalf("got %v, want an invalid error on origins[1].lister_id", err)
	}
	page, err := s.ListedOriginsGet(ctx, revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled})
	if err != nil || len(page.Origins) != 0 {
		t.Fatalf("something was written: %+v, %v", page, err)
	}
}
