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

// ResumedPlanCases returns the cases of PlanCases, but the sampled one,
// with each grab resuming a walk (Params.After): after a row with every
// term of the order known, and after one whose nullable terms are null.
// Every range of the resumed query must walk the case's index.
func ResumedPlanCases(d Dialect, listerID any) ([]PlanCase, error) {
	known := Candidate{LastScheduled: &planTime, LastSuccessful: &planTime, QueuePosition: new(int64), ID: 42,
		Origin: revisit.ListedOrigin{LastUpdate: &planLater, FirstSeen: planTime}}
	nulls := known
	nulls.LastScheduled, nulls.QueuePosition = nil, nil
	nulls.Origin.LastUpdate = nil
	var cases []PlanCase
	for _, c := range PlanCases(listerID) {
		if c.Params.Sample != 0 {
			continue
		}
		for _, row := range []struct {
			name string
			c    Candidate
		}{{"resumed", known}, {"resumed_at_nulls", nulls}} {
			key, err := d.KeyOf(c.Params.Policy, row.c)
			if err != nil && row.c.Origin.LastUpdate == nil {
				continue // the policy's rows all have a last update
			}
			if err != nil {
				return nil, err
			}
			r := c
			r.Name += "/" + row.name
			r.Params.After = key
			cases = append(cases, r)
		}
	}
	return cases, nil
}

var (
	planTime  = time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	planLater = planTime.Add(time.Hour)
)
