package revisit

import "time"

// ActivityKind is a kind of event a store can count by minute after the
// fact (MinuteCount).
type ActivityKind string

// The kinds of activity a store recalls.
const (
	// ActivityScheduled is a visit scheduled: a grab marked its origin.
	ActivityScheduled ActivityKind = "scheduled"
	// ActivityResult is a visit's result, folded into its origin's stats.
	ActivityResult ActivityKind = "result"
	// ActivityLost is a visit declared lost (no result in time).
	ActivityLost ActivityKind = "lost"
)

// MinuteCount counts the events of one kind and visit type in one minute,
// as the store recalls them from what it keeps: the visits in flight (their
// policy, when they were scheduled and lost) and the visit stats (each
// origin's last results and last schedule).
type MinuteCount struct {
	VisitType string
	Kind      ActivityKind
	// Label is the policy of a scheduled visit ("" when the store no
	// longer records it: its visit has ended), the outcome of a result
	// (successful, failed, not_found), and "" for a lost visit.
	Label string
	// Minute is the start of the minute, in UTC.
	Minute time.Time
	Count  int64
}

// ValidateActivityWindow checks the window [since, until) of an activity
// count: until may not come before since.
func ValidateActivityWindow(since, until time.Time) error {
	if until.Before(since) {
		return Invalidf("until", "%s is before since %s", until.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	return nil
}
