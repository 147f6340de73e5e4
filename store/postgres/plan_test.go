package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// TestGrabPlans checks that the candidate query of every policy can be
// answered by walking the policy's index in order: with sorts and
// sequential scans priced out, the plan must be a scan of that index with
// no sort step above it (docs/store.md). A policy ordered by last_scheduled
// may sort its few marked origins, and merge them in.
func TestGrabPlans(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range grabsql.PlanCases(uuid.New()) {
		t.Run(c.Name, func(t *testing.T) {
			plan := explain(t, ctx, s, c.Params)
			lines := strings.Split(plan, "\n")
			scan := slices.IndexFunc(lines, func(l string) bool {
				return strings.Contains(l, "Index Scan using "+c.Index+" on listed_origin lo ")
			})
			if scan < 0 {
				t.Fatalf("plan does not walk %s:\n%s", c.Index, plan)
			}
			if sorts := sortsAbove(lines, scan); sorts || !grabsql.Merged(c.Params.Policy) && strings.Contains(plan, "Sort") {
				t.Errorf("plan sorts:\n%s", plan)
			}
		})
	}
}

// sortsAbove reports whether a node above the plan line i sorts, up to
// the plan's root or an Append that merges its branch.
func sortsAbove(lines []string, i int) bool {
	indent := strings.Index(lines[i], "->")
	for j := i - 1; j >= 0 && indent > 0; j-- {
		at := strings.Index(lines[j], "->")
		if j > 0 && (at < 0 || at >= indent) {
			continue // a property line, or not an ancestor
		}
		indent = at
		if strings.Contains(lines[j], "Append") {
			return false
		}
		if strings.Contains(lines[j], "Sort") {
			return true
		}
	}
	return false
}

func explain(t *testing.T, ctx context.Context, s *Store, p grabsql.Params) string {
	t.Helper()
	q, err := dialect.Build(p)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	var plan strings.Builder
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off"); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, "EXPLAIN "+q.SQL, append(q.Args, 1000)...)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		plan.WriteString(strings.Join(lines, "\n"))
		return err
	})
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, q.SQL)
	}
	return plan.String()
}
