package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// TestGrabPlans checks that the candidate query of every policy walks the
// policy's index in order: no sort step (docs/store.md).
func TestGrabPlans(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	finished := now.Add(-time.Hour)
	lister := uuid.NewString()
	cases := []struct {
		name  string
		p     grabsql.Params
		index string
	}{
		{"oldest_scheduled_first", grabsql.Params{Policy: revisit.OldestScheduledFirst}, "listed_origin_oldest_scheduled"},
		{"never_visited_oldest_update_first", grabsql.Params{Policy: revisit.NeverVisitedOldestUpdateFirst}, "listed_origin_never_visited"},
		{"already_visited_order_by_lag", grabsql.Params{Policy: revisit.AlreadyVisitedOrderByLag}, "listed_origin_lag"},
		{"origins_without_last_update", grabsql.Params{Policy: revisit.OriginsWithoutLastUpdate}, "listed_origin_without_last_update"},
		{"stop_after_success", grabsql.Params{Policy: revisit.StopAfterSuccess}, "listed_origin_stop_after_success"},
		{"first_visits_after_listing", grabsql.Params{Policy: revisit.FirstVisitsAfterListing, ListerID: lister,
			ListingFinishedAt: &finished}, "listed_origin_lister_scheduled"},
		{"first_visits_after_listing/never_finished", grabsql.Params{Policy: revisit.FirstVisitsAfterListing, ListerID: lister},
			"listed_origin_lister_scheduled"},
		{"oldest_scheduled_first/lister", grabsql.Params{Policy: revisit.OldestScheduledFirst, ListerID: lister},
			"listed_origin_lister_scheduled"},
		{"oldest_scheduled_first/disabled", grabsql.Params{Policy: revisit.OldestScheduledFirst, Disabled: true},
			"listed_origin_oldest_scheduled"},
		{"already_visited_order_by_lag/sample", grabsql.Params{Policy: revisit.AlreadyVisitedOrderByLag, Sample: 0.5},
			"listed_origin_lag"},
		{"stop_after_success/no_cooldowns", grabsql.Params{Policy: revisit.StopAfterSuccess, Cooldowns: revisit.Cooldowns{}},
			"listed_origin_stop_after_success"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			p.VisitType, p.Now = "git", now
			if !strings.HasSuffix(c.name, "no_cooldowns") {
				p.Cooldowns = revisit.DefaultCooldowns()
			}
			plan := explain(t, ctx, s, p)
			if !strings.Contains(plan, "USING INDEX "+c.index+" ") {
				t.Errorf("plan does not use %s:\n%s", c.index, plan)
			}
			if strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("plan sorts:\n%s", plan)
			}
		})
	}
}

// explain returns the query plan of the candidate query of p, one step a
// line.
func explain(t *testing.T, ctx context.Context, s *Store, p grabsql.Params) string {
	t.Helper()
	q, err := dialect.Build(p)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.SQL, append(q.Args, 1000)...)
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, q.SQL)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var (
			id, parent, unused int
			detail             string
		)
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
