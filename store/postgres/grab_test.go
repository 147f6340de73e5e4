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
			now, []candidate{stale})
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
