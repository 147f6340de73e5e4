package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// TestGrabPlans checks that the candidate query of every policy can be
// answered by walking the policy's index in order: with sorts and
// sequential scans priced out, the plan must be a scan of that index with
// no sort step (docs/store.md).
func TestGrabPlans(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	for _, c := range grabsql.PlanCases(uuid.New()) {
		t.Run(c.Name, func(t *testing.T) {
			plan := explain(t, ctx, s, c.Params)
			if !strings.Contains(plan, "Index Scan using "+c.Index+" ") {
				t.Errorf("plan does not walk %s:\n%s", c.Index, plan)
			}
			if strings.Contains(plan, "Sort") {
				t.Errorf("plan sorts:\n%s", plan)
			}
		})
	}
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
