package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// TestMarkScheduledChecksAddresses covers the picks whose address no longer
// holds the row the candidate query read (a concurrent disable rewrote it):
// the row is found by URL instead, and a row of another origin sitting at a
// stale address stays where it is.
func TestMarkScheduledChecksAddresses(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var origins []revisit.ListedOrigin
	for _, name := range []string{"moved", "bystander"} {
		origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, URL: "https://forge.example/" + name,
			VisitType: "git", Enabled: true})
	}
	if _, err := s.ListedOriginsRecord(ctx, origins); err != nil {
		t.Fatal(err)
	}
	var bystander pgtype.TID
	if err := s.pool.QueryRow(ctx, "SELECT ctid FROM listed_origin WHERE url = $1", origins[1].URL).Scan(&bystander); err != nil {
		t.Fatal(err)
	}
	stale := candidate{Candidate: grabsql.Candidate{Origin: origins[0]}, ctid: bystander}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return markScheduled(ctx, tx, revisit.GrabParams{VisitType: "git", Policy: revisit.OldestScheduledFirst},
			now, []candidate{stale}, moveAll)
	})
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]bool{}
	rows, _ := s.pool.Query(ctx, `SELECT url, true FROM listed_origin_pending UNION ALL SELECT url, false FROM listed_origin`)
	var (
		url       string
		isPending bool
	)
	_, err = pgx.ForEachRow(rows, []any{&url, &isPending}, func() error { pending[url] = isPending; return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{origins[0].URL: true, origins[1].URL: false}
	for u, p := range want {
		if got, ok := pending[u]; !ok || got != p {
			t.Errorf("%s: pending = %v (listed: %v), want pending = %v", u, got, ok, p)
		}
	}
}

// TestRequeueMovesEveryChunk makes the requeue step take several chunks:
// every pending origin that the grab's cooldowns release comes back, by the
// scheduled cooldown, by a visit since the mark, and with no cooldown at all.
func TestRequeueMovesEveryChunk(t *testing.T) {
	defer func(n int) { requeueChunk = n }(requeueChunk)
	requeueChunk = 2
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	const n = 7
	recordGitOrigins(t, s, n)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	grab := func(now time.Time, c revisit.Cooldowns) int {
		t.Helper()
		got, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: n + 1,
			Policy: revisit.OldestScheduledFirst, Now: now, Cooldowns: &c})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	hour := revisit.Cooldowns{Scheduled: time.Hour}
	if got := grab(t0, hour); got != n {
		t.Fatalf("first grab: %d origins, want %d", got, n)
	}
	if got := grab(t0.Add(time.Minute), hour); got != 0 {
		t.Fatalf("grab within the cooldown: %d origins, want 0", got)
	}
	if got := grab(t0.Add(2*time.Hour), hour); got != n {
		t.Errorf("grab after the scheduled cooldown: %d origins, want %d", got, n)
	}
	// Visits reported after the mark (a clock set back) release the origins
	// at once under the scheduled cooldown.
	later := t0.Add(3 * time.Hour)
	flushAside(t, s)
	if _, err := s.pool.Exec(ctx, "UPDATE listed_origin_pending SET last_visit = $1", later); err != nil {
		t.Fatal(err)
	}
	if got := grab(t0.Add(2*time.Hour+time.Minute), hour); got != n {
		t.Errorf("grab after visits since the mark: %d origins, want %d", got, n)
	}
	if got := grab(t0.Add(2*time.Hour+2*time.Minute), revisit.Cooldowns{}); got != n {
		t.Errorf("grab without cooldowns: %d origins, want %d", got, n)
	}
}
