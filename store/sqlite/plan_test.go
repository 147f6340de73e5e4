package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// TestGrabPlans checks that the candidate query of every policy walks the
// policy's index in order: no sort step (docs/store.md).
func TestGrabPlans(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	for _, c := range grabsql.PlanCases(uuid.NewString()) {
		t.Run(c.Name, func(t *testing.T) {
			plan := explain(t, ctx, s, c.Params)
			if !strings.Contains(plan, "USING INDEX "+c.Index+" ") {
				t.Errorf("plan does not use %s:\n%s", c.Index, plan)
			}
			if strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("plan sorts:\n%s", plan)
			}
		})
	}
}

// TestVisitPlans checks that expiry walks the visits not yet lost only, and
// forgetting the lost ones only: each round's expiry must not read the lost
// visits kept for the lost retention.
func TestVisitPlans(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	now := micro(s.now())
	for name, c := range map[string]struct {
		sql, index string
		args       []any
	}{
		"expire": {expireVisits, "visit_in_flight_open", []any{"git", now, now}},
		"forget": {forgetLostVisits, "visit_in_flight_lost", []any{"git", now}},
	} {
		t.Run(name, func(t *testing.T) {
			if plan := explainSQL(t, ctx, s, c.sql, c.args...); !strings.Contains(plan, "USING INDEX "+c.index+" ") {
				t.Errorf("plan does not use %s:\n%s", c.index, plan)
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
	return explainSQL(t, ctx, s, q.SQL, append(q.Args, 1000)...)
}

// explainSQL returns the query plan of a statement, one step a line.
func explainSQL(t *testing.T, ctx context.Context, s *Store, sql string, args ...any) string {
	t.Helper()
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+sql, args...)
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, sql)
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

// TestSearchPlans checks that the URLs of a search come from a walk of
// listed_origin's (url, visit_type) index in order, without a sort and
// without reading the table: bounded by a prefix, filtered by a substring.
func TestSearchPlans(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	for _, search := range []revisit.OriginSearch{
		{Query: "https://forge.example/", Match: revisit.MatchPrefix},
		{Query: "project", Match: revisit.MatchSubstring},
	} {
		t.Run(string(search.Match), func(t *testing.T) {
			sql, args := urlsQuery(search, "https://forge.example/a", false, 101)
			plan := explainSQL(t, ctx, s, sql, args...)
			if !strings.Contains(plan, "USING COVERING INDEX listed_origin_origin (url>?") {
				t.Errorf("plan does not walk listed_origin_origin from a URL:\n%s", plan)
			}
			if strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("plan sorts:\n%s", plan)
			}
		})
	}
}
