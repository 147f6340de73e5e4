package grabsql

import (
	"time"

	"github.com/revisit-sched/revisit"
)

// PlanCase is a candidate query whose plan a store's tests check: it must
// walk Index in order, with no sort step.
type PlanCase struct {
	Name   string
	Params Params
	Index  string
}

// PlanCases returns the candidate queries of every policy and of the
// variants that change their shape (lister filter, disabled origins,
// sampling, no cooldowns); listerID is bound as the engine binds lister ids.
func PlanCases(listerID any) []PlanCase {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	finished := now.Add(-time.Hour)
	base := Params{VisitType: "git", Now: now, Cooldowns: revisit.DefaultCooldowns()}
	with := func(f func(*Params)) Params {
		p := base
		f(&p)
		return p
	}
	policy := func(pol revisit.Policy) func(*Params) { return func(p *Params) { p.Policy = pol } }
	return []PlanCase{
		{"oldest_scheduled_first", with(policy(revisit.OldestScheduledFirst)), "listed_origin_oldest_scheduled"},
		{"never_visited_oldest_update_first", with(policy(revisit.NeverVisitedOldestUpdateFirst)), "listed_origin_never_visited"},
		{"already_visited_order_by_lag", with(policy(revisit.AlreadyVisitedOrderByLag)), "listed_origin_lag"},
		{"origins_without_last_update", with(policy(revisit.OriginsWithoutLastUpdate)), "listed_origin_without_last_update"},
		{"stop_after_success", with(policy(revisit.StopAfterSuccess)), "listed_origin_stop_after_success"},
		{"first_visits_after_listing", with(func(p *Params) {
			p.Policy, p.ListerID, p.ListingFinishedAt = revisit.FirstVisitsAfterListing, listerID, &finished
		}), "listed_origin_lister_scheduled"},
		{"first_visits_after_listing/never_finished", with(func(p *Params) {
			p.Policy, p.ListerID = revisit.FirstVisitsAfterListing, listerID
		}), "listed_origin_lister_scheduled"},
		{"oldest_scheduled_first/lister", with(func(p *Params) {
			p.Policy, p.ListerID = revisit.OldestScheduledFirst, listerID
		}), "listed_origin_lister_scheduled"},
		{"oldest_scheduled_first/disabled", with(func(p *Params) {
			p.Policy, p.Disabled = revisit.OldestScheduledFirst, true
		}), "listed_origin_oldest_scheduled"},
		{"already_visited_order_by_lag/sample", with(func(p *Params) {
			p.Policy, p.Sample = revisit.AlreadyVisitedOrderByLag, 0.5
		}), "listed_origin_lag"},
		{"stop_after_success/no_cooldowns", with(func(p *Params) {
			p.Policy, p.Cooldowns = revisit.StopAfterSuccess, revisit.Cooldowns{}
		}), "listed_origin_stop_after_success"},
	}
}
