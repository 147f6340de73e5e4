package revisit

import "time"

// The names of the cooldowns of semantics.md §3.1, as the configuration
// and the API write them.
const (
	CooldownAbsolute  = "absolute"
	CooldownScheduled = "scheduled"
	CooldownFailed    = "failed"
	CooldownNotFound  = "not_found"
)

// CooldownState is where one cooldown of semantics.md §3.1 stands for an
// origin at a time: what it counts from, whether it keeps the origin out of
// grabs, and until when.
type CooldownState struct {
	// Cooldown is its name (CooldownAbsolute…).
	Cooldown string
	// Length is the cooldown's duration; zero when disabled.
	Length time.Duration
	// Since is the time it counts from: the origin's last_scheduled
	// (absolute, scheduled), or its last visit when that visit failed
	// (failed) or found nothing (not found); nil when there is none.
	Since *time.Time
	// VisitedSince, for the scheduled cooldown, reports that a visit ended
	// after the origin was scheduled, which lets it through at once.
	VisitedSince bool
	// Holds reports whether the cooldown keeps the origin out of grabs.
	Holds bool
	// Until, when it holds, is the last instant it does: Since + Length.
	// The scheduled cooldown may end sooner, with a result.
	Until *time.Time
}

// States returns the four cooldowns' states for an origin whose stats are
// s at now, in the order of semantics.md §3.1. An origin without stats
// passes them all, as one whose stats hold only nulls.
func (c Cooldowns) States(s VisitStats, now time.Time) []CooldownState {
	var failedAt, notFoundAt *time.Time
	if s.LastVisitStatus != nil && s.LastVisit != nil {
		switch *s.LastVisitStatus {
		case VisitFailed:
			failedAt = s.LastVisit
		case VisitNotFound:
			notFoundAt = s.LastVisit
		}
	}
	visitedSince := s.LastScheduled != nil && s.LastVisit != nil && s.LastScheduled.Before(*s.LastVisit)
	states := []CooldownState{
		{Cooldown: CooldownAbsolute, Length: c.Absolute, Since: s.LastScheduled},
		{Cooldown: CooldownScheduled, Length: c.Scheduled, Since: s.LastScheduled, VisitedSince: visitedSince},
		{Cooldown: CooldownFailed, Length: c.Failed, Since: failedAt},
		{Cooldown: CooldownNotFound, Length: c.NotFound, Since: notFoundAt},
	}
	for i := range states {
		st := &states[i]
		if st.Length <= 0 || st.Since == nil || st.VisitedSince {
			continue
		}
		// It lets the origin through once Since is before now - Length.
		if end := st.Since.Add(st.Length); !end.Before(now) {
			st.Holds, st.Until = true, &end
		}
	}
	return states
}

// Qualifies reports whether the listed row o, of an origin whose stats are
// s, meets policy p's condition of eligibility (semantics.md §3.2), the
// cooldowns aside; l is o's lister, whose last finished listing
// first_visits_after_listing compares with.
func (p Policy) Qualifies(o ListedOrigin, s VisitStats, l Lister) bool {
	switch p {
	case OldestScheduledFirst:
		return true
	case NeverVisitedOldestUpdateFirst:
		return s.LastSuccessful == nil && o.LastUpdate != nil
	case AlreadyVisitedOrderByLag:
		return s.LastSuccessful != nil && o.LastUpdate != nil && o.LastUpdate.After(*s.LastSuccessful)
	case OriginsWithoutLastUpdate:
		return o.LastUpdate == nil
	case StopAfterSuccess:
		return s.LastVisitStatus == nil || *s.LastVisitStatus != VisitSuccessful
	case FirstVisitsAfterListing:
		return s.LastScheduled == nil ||
			(l.LastListingFinishedAt != nil && s.LastScheduled.Before(*l.LastListingFinishedAt))
	}
	return false
}
