package browse

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// PlanCase is a browse whose statements' plans a store's tests check: each
// must read Index in order, with no sort step.
type PlanCase struct {
	Name   string
	Browse revisit.OriginBrowse
	Index  string
}

// PlanCases returns a browse of each view, either way, with and without
// the filters that change their statements; listerID is a lister's id.
func PlanCases(listerID uuid.UUID) []PlanCase {
	b := func(v revisit.BrowseView, desc bool, f func(*revisit.OriginBrowse)) revisit.OriginBrowse {
		out := revisit.OriginBrowse{VisitType: "git", View: v, Descending: desc, Limit: 1}
		if v == revisit.ViewFailures {
			out.Enabled = revisit.AnyEnabled
		}
		if f != nil {
			f(&out)
		}
		return out
	}
	lister := func(o *revisit.OriginBrowse) { o.ListerID = &listerID }
	outcome := func(o *revisit.OriginBrowse) { o.Outcome = revisit.OutcomeFilter(revisit.VisitFailed) }
	disabled := func(o *revisit.OriginBrowse) { o.Enabled = revisit.OnlyDisabled }
	return []PlanCase{
		{"scheduled", b(revisit.ViewScheduled, false, nil), "listed_origin_oldest_scheduled"},
		{"scheduled/desc", b(revisit.ViewScheduled, true, nil), "listed_origin_oldest_scheduled"},
		{"scheduled/disabled", b(revisit.ViewScheduled, false, disabled), "listed_origin_oldest_scheduled"},
		{"scheduled/outcome", b(revisit.ViewScheduled, true, outcome), "listed_origin_oldest_scheduled"},
		{"scheduled/lister", b(revisit.ViewScheduled, false, lister), "listed_origin_lister_scheduled"},
		{"scheduled/lister/desc", b(revisit.ViewScheduled, true, lister), "listed_origin_lister_scheduled"},
		{"failures", b(revisit.ViewFailures, false, nil), "listed_origin_failures"},
		{"failures/desc", b(revisit.ViewFailures, true, nil), "listed_origin_failures"},
		{"failures/lister", b(revisit.ViewFailures, true, lister), "listed_origin_failures"},
	}
}

// Pages follows b's pages forward to the last, then back to the first,
// through q: a store's tests pass a Querier that checks each statement.
func Pages(ctx context.Context, q Querier, d grabsql.Dialect, b revisit.OriginBrowse) error {
	for back := false; ; {
		page, err := Run(ctx, q, d, b)
		if err != nil {
			return err
		}
		next := page.NextPageToken
		if back {
			next = page.PrevPageToken
		}
		switch {
		case next != "":
			b.PageToken = next
		case back || page.PrevPageToken == "":
			return nil
		default:
			back, b.PageToken = true, page.PrevPageToken
		}
	}
}

// Seeder is what SeedPlanWorld writes through.
type Seeder interface {
	ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error)
	VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error
}

// SeedPlanWorld records git origins of one lister for PlanCases to page
// through, and returns the lister's id: three never scheduled, and three
// scheduled whose last visit failed.
func SeedPlanWorld(ctx context.Context, s Seeder) (uuid.UUID, error) {
	l, err := s.ListerGetOrCreate(ctx, "plans", "")
	if err != nil {
		return uuid.Nil, err
	}
	var (
		origins []revisit.ListedOrigin
		stats   []revisit.VisitStats
	)
	failed := revisit.VisitFailed
	for i := range 6 {
		o := revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://plans.example/%d", i), VisitType: "git",
			Enabled: true}
		origins = append(origins, o)
		if i >= 3 {
			st := revisit.NewVisitStats(o.Key())
			at := time.Date(2025, 6, 1, i, 0, 0, 0, time.UTC)
			st.LastScheduled, st.LastVisit, st.LastVisitStatus = &at, &at, &failed
			stats = append(stats, st)
		}
	}
	if _, err := s.ListedOriginsRecord(ctx, origins); err != nil {
		return uuid.Nil, err
	}
	return l.ID, s.VisitStatsUpsert(ctx, stats)
}

// CheckingQuerier hands each statement to Check before Next runs it: a
// store's plan tests check there that the statement reads its index in
// order.
type CheckingQuerier struct {
	Next       Querier
	Check      func(ctx context.Context, sql string, args []any)
	Statements int
}

// BrowseRows checks the statement, then runs it.
func (q *CheckingQuerier) BrowseRows(ctx context.Context, sql string, args []any) ([]Row, error) {
	q.Check(ctx, sql, args)
	q.Statements++
	return q.Next.BrowseRows(ctx, sql, args)
}
