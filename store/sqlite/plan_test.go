package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/browse"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// TestGrabPlans checks that the candidate query of every policy walks the
// policy's index in order: no sort step (docs/store.md).
func TestGrabPlans(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	lister := uuid.NewString()
	resumed, err := grabsql.ResumedPlanCases(dialect, lister)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(grabsql.PlanCases(lister), resumed...) {
		t.Run(c.Name, func(t *testing.T) {
			plan := explain(t, ctx, s, c.Params)
			if !strings.Contains(plan, "USING INDEX "+c.Index+" ") {
				t.Errorf("plan does not use %s:\n%s", c.Index, plan)
			}
			if scans, walks := strings.Count(plan, " listed_origin "), strings.Count(plan, "listed_origin USING INDEX "+c.Index+" "); scans != walks {
				t.Errorf("a scan of listed_origin does not use %s:\n%s", c.Index, plan)
			}
			if strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("plan sorts:\n%s", plan)
			}
		})
	}
}

// TestCooldownsSkippedInIndex checks that the candidate query of the four
// policies whose order keeps origins in a cooldown (migration 00026) reads
// a listed_origin row only once it passed every condition: the cooldowns
// are checked on the policy index's columns, before the row's seek.
func TestCooldownsSkippedInIndex(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	root := func(name string) int64 {
		var page int64
		if err := s.r.QueryRowContext(ctx, "SELECT rootpage FROM sqlite_schema WHERE name = ?", name).Scan(&page); err != nil {
			t.Fatalf("root page of %s: %v", name, err)
		}
		return page
	}
	table := root("listed_origin")
	for _, c := range grabsql.PlanCases(uuid.NewString()) {
		switch c.Name {
		case "never_visited_oldest_update_first", "already_visited_order_by_lag", "origins_without_last_update",
			"stop_after_success":
		default:
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			q, err := dialect.Build(c.Params)
			if err != nil {
				t.Fatal(err)
			}
			ops := bytecode(t, ctx, s, q.SQL, append(q.Args, 1000)...)
			// The row is read from its first Column on the table's cursor;
			// a condition that fails jumps to the loop's Next, after the
			// ResultRow. No such jump may come after the row's read.
			cursors := map[int64]int64{} // root page by cursor
			read, result, next := -1, -1, -1
			for i, op := range ops {
				switch {
				case op.code == "OpenRead":
					cursors[op.p1] = op.p2
				case op.code == "Column" && cursors[op.p1] == table && read < 0:
					read = i
				case op.code == "ResultRow" && read >= 0 && result < 0:
					result = i
				case op.code == "Next" && result >= 0 && next < 0:
					next = i
				}
			}
			if read < 0 || next < 0 {
				t.Fatalf("no read of the row (%d) or no loop (%d) in:\n%v", read, next, ops)
			}
			for i := read; i < result; i++ {
				if ops[i].code != "Column" && ops[i].p2 == int64(next) {
					t.Errorf("op %d (%s) checks a condition after the row's read (op %d): the cooldowns are not in %s\n%v",
						i, ops[i].code, read, c.Index, ops)
					break
				}
			}
		})
	}
}

// op is one instruction of a statement's bytecode.
type op struct {
	code   string
	p1, p2 int64
}

// bytecode returns the instructions SQLite runs for a statement (EXPLAIN).
func bytecode(t *testing.T, ctx context.Context, s *Store, sql string, args ...any) []op {
	t.Helper()
	rows, err := s.r.QueryContext(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, sql)
	}
	defer rows.Close()
	var ops []op
	for rows.Next() {
		var (
			o                         op
			addr, p3, p4, p5, comment any
		)
		if err := rows.Scan(&addr, &o.code, &o.p1, &o.p2, &p3, &p4, &p5, &comment); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, o)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ops
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
		"look for expiring visits": {"SELECT 1 FROM visit_in_flight WHERE " + expiring, "visit_in_flight_open",
			[]any{"git", now}},
		"look for lost visits": {"SELECT 1 FROM visit_in_flight WHERE " + forgettable, "visit_in_flight_lost",
			[]any{"git", now}},
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

// TestRecordingAgainMovesNoIndexEntry checks that the upsert of a listed
// origin updates only columns that no index holds: SQLite moves a row's
// entry in every index holding a column an UPDATE sets, even to the same
// value, so recording an unchanged origin again would move it in every
// policy index. Its enabled and last_update are set apart, when they change.
func TestRecordingAgainMovesNoIndexEntry(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	for _, q := range []string{upsertOrigin, upsertOriginReturning} {
		ops := bytecode(t, ctx, s, q, uuid.NewString(), "https://example.com/a", "git", "{}", true, 0, nil, nil, nil, 0)
		var updates, deletes int
		for _, o := range ops {
			switch o.code {
			case "Insert":
				updates++ // the insert of a new row and the rewrite of an existing one
			case "IdxDelete":
				deletes++
			}
		}
		if updates < 2 || deletes > 0 {
			t.Errorf("the upsert has %d row writes (want the insert and the update) and %d index entry deletions (want none):\n%s\n%v",
				updates, deletes, q, ops)
		}
	}
	for _, q := range []string{setEnabled, setLastUpdate} {
		if ops := bytecode(t, ctx, s, q, 1, 1); !slices.ContainsFunc(ops, func(o op) bool { return o.code == "IdxDelete" }) {
			t.Errorf("%s moves no index entry: is the column still in the policy indexes?", q)
		}
	}
}

// TestBrowsePlans checks that every statement of a browse, each view
// either way, reads its index in order (docs/store.md, "Browsing
// origins").
func TestBrowsePlans(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	listerID, err := browse.SeedPlanWorld(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range browse.PlanCases(listerID) {
		t.Run(c.Name, func(t *testing.T) {
			q := &browse.CheckingQuerier{Next: browser{s}, Check: func(ctx context.Context, sql string, args []any) {
				plan := explainSQL(t, ctx, s, sql, args...)
				if !strings.Contains(plan, "USING INDEX "+c.Index+" ") {
					t.Errorf("plan does not read %s:\n%s", c.Index, plan)
				}
				if strings.Contains(plan, "TEMP B-TREE") {
					t.Errorf("plan sorts:\n%s", plan)
				}
			}}
			if err := browse.Pages(ctx, q, dialect, c.Browse); err != nil {
				t.Fatal(err)
			}
			if q.Statements < 2 {
				t.Errorf("%d statements", q.Statements)
			}
		})
	}
}
