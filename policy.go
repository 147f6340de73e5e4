package revisit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Policy names an order in which grab_next_visits picks origins.
type Policy string

// The scheduling policies (semantics.md §3.2).
const (
	// OldestScheduledFirst: last_scheduled ascending, never scheduled first.
	OldestScheduledFirst Policy = "oldest_scheduled_first"
	// NeverVisitedOldestUpdateFirst: never visited, last_update known,
	// last_update ascending.
	NeverVisitedOldestUpdateFirst Policy = "never_visited_oldest_update_first"
	// AlreadyVisitedOrderByLag: visited, last_update after last_successful,
	// lag (last_update - last_successful) descending.
	AlreadyVisitedOrderByLag Policy = "already_visited_order_by_lag"
	// OriginsWithoutLastUpdate: last_update unknown, next_visit_queue_position
	// ascending (unknown first), then first_seen.
	OriginsWithoutLastUpdate Policy = "origins_without_last_update"
	// StopAfterSuccess: last visit not successful, last_update ascending
	// (unknown last), then first_seen.
	StopAfterSuccess Policy = "stop_after_success"
	// FirstVisitsAfterListing: needs a lister filter; never scheduled or
	// scheduled before the lister last finished listing; last_scheduled
	// ascending, never scheduled first.
	FirstVisitsAfterListing Policy = "first_visits_after_listing"
)

// Policies lists every policy, in the order of semantics.md.
var Policies = []Policy{OldestScheduledFirst, NeverVisitedOldestUpdateFirst,
	AlreadyVisitedOrderByLag, OriginsWithoutLastUpdate, StopAfterSuccess, FirstVisitsAfterListing}

// ParsePolicy returns the policy named s, or an ErrUnknownPolicy error.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(Policies))
	for i, p := range Policies {
		names[i] = string(p)
	}
	return "", &Error{Code: CodeUnknownPolicy, Field: "policy",
		Message: fmt.Sprintf("unknown policy %q (known: %s)", shortened([]any{s})[0], strings.Join(names, ", "))}
}

// Cooldowns keep an origin from being picked again too soon (semantics.md
// §3.1). A zero duration disables that cooldown.
type Cooldowns struct {
	// Absolute: not scheduled within this long.
	Absolute time.Duration
	// Scheduled: not scheduled since the last visit, unless this long ago.
	Scheduled time.Duration
	// Failed: last visit not failed within this long.
	Failed time.Duration
	// NotFound: last visit not "not found" within this long.
	NotFound time.Duration
}

// DefaultCooldowns returns the cooldowns of semantics.md §3.1: 12 h, 7 d, 14 d
// and 31 d.
func DefaultCooldowns() Cooldowns {
	const day = 24 * time.Hour
	return Cooldowns{Absolute: 12 * time.Hour, Scheduled: 7 * day, Failed: 14 * day, NotFound: 31 * day}
}

// GrabParams are the arguments of GrabNextVisits.
type GrabParams struct {
	VisitType string
	// Count is the most origins to return; it must be positive.
	Count  int
	Policy Policy
	// Now is the scheduling instant; zero means the store's clock.
	Now time.Time
	// Disabled selects disabled origins instead of enabled ones.
	Disabled bool
	// ListerID, or ListerName and ListerInstanceName, restrict the choice to
	// the origins of one lister.
	ListerID           *uuid.UUID
	ListerName         string
	ListerInstanceName string
	// Cooldowns apply to every origin; nil means DefaultCooldowns().
	Cooldowns *Cooldowns
	// Sample, when in (0, 1), considers each eligible origin only with that
	// probability; zero considers all. It is never needed for speed.
	Sample float64
	// DryRun returns the origins without marking them scheduled.
	DryRun bool
	// EveryListedRow returns the eligible listed rows as they come, an
	// origin that several listers list once per lister's row, Count
	// counting rows (Software Heritage's grab_next_visits); false returns
	// each origin once, from the lister whose row comes first.
	EveryListedRow bool
}

// MaxGrabCount bounds one grab, so that one call cannot lock a visit type for
// long.
const MaxGrabCount = 100_000

// GrabCount is the rule of the count of a grab, whichever way it comes.
var GrabCount = Limit{Field: "count", Min: 1, Max: MaxGrabCount}

// ListerFilter names the lister filter as the caller gave it: "" for
// none, "id:" and the lister's id, or "name:" with its name and instance
// name; two grabs that filter the same way share it.
func (p GrabParams) ListerFilter() string {
	switch {
	case p.ListerID != nil:
		return "id:" + p.ListerID.String()
	case p.ListerName != "":
		return "name:" + strconv.Quote(p.ListerName) + "/" + strconv.Quote(p.ListerInstanceName)
	}
	return ""
}

// Validate checks the parameters and returns the cooldowns to apply.
func (p GrabParams) Validate() (Cooldowns, error) {
	if err := ValidateVisitType(p.VisitType); err != nil {
		return Cooldowns{}, err
	}
	if err := GrabCount.Check(p.Count); err != nil {
		return Cooldowns{}, err
	}
	if _, err := ParsePolicy(string(p.Policy)); err != nil {
		return Cooldowns{}, err
	}
	if p.Sample != 0 && (p.Sample < 0 || p.Sample >= 1) {
		return Cooldowns{}, Invalidf("sample", "must be in (0, 1), not %g", p.Sample)
	}
	if p.ListerName == "" && p.ListerInstanceName != "" {
		return Cooldowns{}, Invalidf("lister_name", "a lister instance name needs a lister name")
	}
	if p.Policy == FirstVisitsAfterListing && p.ListerID == nil && p.ListerName == "" {
		return Cooldowns{}, Invalidf("lister", "policy %s needs a lister (id, or name and instance name)", p.Policy)
	}
	c := DefaultCooldowns()
	if p.Cooldowns != nil {
		c = *p.Cooldowns
	}
	for _, d := range []time.Duration{c.Absolute, c.Scheduled, c.Failed, c.NotFound} {
		if d < 0 {
			return Cooldowns{}, Invalidf("cooldowns", "negative cooldown %s", d)
		}
	}
	return c, nil
}

// Resolve validates p and returns it with Now set (from clock when zero) and
// truncated to the microsecond, and the cooldowns to apply.
func (p GrabParams) Resolve(clock Clock) (GrabParams, Cooldowns, error) {
	c, err := p.Validate()
	if err != nil {
		return p, c, err
	}
	if p.Now.IsZero() {
		p.Now = clock.Now()
	}
	p.Now = Microsecond(p.Now)
	return p, c, nil
}
