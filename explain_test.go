package revisit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func TestCooldownStates(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	status := func(s revisit.VisitStatus) *revisit.VisitStatus { return &s }
	c := revisit.DefaultCooldowns()
	const day = 24 * time.Hour
	type state struct {
		holds bool
		until *time.Time
	}
	at := func(since *time.Time, d time.Duration) *time.Time { u := since.Add(d); return &u }
	for _, tc := range []struct {
		name  string
		stats revisit.VisitStats
		want  map[string]state
	}{
		{"no stats", revisit.VisitStats{}, map[string]state{}},
		{"scheduled an hour ago, no result", revisit.VisitStats{LastScheduled: ago(time.Hour)}, map[string]state{
			revisit.CooldownAbsolute:  {true, at(ago(time.Hour), 12*time.Hour)},
			revisit.CooldownScheduled: {true, at(ago(time.Hour), 7*day)}}},
		{"scheduled 12 h ago to the instant: still held", revisit.VisitStats{LastScheduled: ago(12 * time.Hour)}, map[string]state{
			revisit.CooldownAbsolute:  {true, &now},
			revisit.CooldownScheduled: {true, at(ago(12*time.Hour), 7*day)}}},
		{"scheduled 2 d ago, failed since", revisit.VisitStats{LastScheduled: ago(2 * day), LastVisit: ago(day),
			LastVisitStatus: status(revisit.VisitFailed)}, map[string]state{
			revisit.CooldownFailed: {true, at(ago(day), 14*day)}}},
		{"not found 40 d ago", revisit.VisitStats{LastScheduled: ago(41 * day), LastVisit: ago(40 * day),
			LastVisitStatus: status(revisit.VisitNotFound)}, map[string]state{}},
		{"not found 3 d ago", revisit.VisitStats{LastVisit: ago(3 * day), LastVisitStatus: status(revisit.VisitNotFound)},
			map[string]state{revisit.CooldownNotFound: {true, at(ago(3*day), 31*day)}}},
		{"successful, scheduled again an hour ago", revisit.VisitStats{LastScheduled: ago(time.Hour), LastVisit: ago(day),
			LastVisitStatus: status(revisit.VisitSuccessful)}, map[string]state{
			revisit.CooldownAbsolute:  {true, at(ago(time.Hour), 12*time.Hour)},
			revisit.CooldownScheduled: {true, at(ago(time.Hour), 7*day)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.States(tc.stats, now)
			require.Len(t, got, 4)
			for i, name := range []string{revisit.CooldownAbsolute, revisit.CooldownScheduled, revisit.CooldownFailed, revisit.CooldownNotFound} {
				require.Equal(t, name, got[i].Cooldown)
				want := tc.want[name]
				require.Equal(t, want.holds, got[i].Holds, name)
				require.Equal(t, want.until, got[i].Until, name)
			}
		})
	}

	// A result after the mark lets the scheduled cooldown through, not
	// the absolute one; a disabled cooldown never holds.
	s := revisit.VisitStats{LastScheduled: ago(2 * time.Hour), LastVisit: ago(time.Hour),
		LastVisitStatus: status(revisit.VisitFailed)}
	got := c.States(s, now)
	require.True(t, got[0].Holds)
	require.True(t, got[1].VisitedSince)
	require.False(t, got[1].Holds)
	require.True(t, got[2].Holds)
	require.Equal(t, ago(time.Hour), got[2].Since)
	for _, st := range (revisit.Cooldowns{}).States(s, now) {
		require.False(t, st.Holds, st.Cooldown)
	}
}

func TestPolicyQualifies(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	later := t0.Add(time.Hour)
	ok := revisit.VisitSuccessful
	failed := revisit.VisitFailed
	withUpdate := revisit.ListedOrigin{LastUpdate: &later}
	noUpdate := revisit.ListedOrigin{}
	listed := revisit.Lister{LastListingFinishedAt: &later}
	for _, tc := range []struct {
		name   string
		origin revisit.ListedOrigin
		stats  revisit.VisitStats
		lister revisit.Lister
		want   []revisit.Policy
	}{
		{"never visited, with an update", withUpdate, revisit.VisitStats{}, revisit.Lister{}, []revisit.Policy{
			revisit.OldestScheduledFirst, revisit.NeverVisitedOldestUpdateFirst, revisit.StopAfterSuccess,
			revisit.FirstVisitsAfterListing}},
		{"visited before its update, scheduled before the listing", withUpdate,
			revisit.VisitStats{LastSuccessful: &t0, LastVisit: &t0, LastVisitStatus: &ok, LastScheduled: &t0}, listed,
			[]revisit.Policy{revisit.OldestScheduledFirst, revisit.AlreadyVisitedOrderByLag, revisit.FirstVisitsAfterListing}},
		{"failed, no update, scheduled after the listing", noUpdate,
			revisit.VisitStats{LastVisit: &later, LastVisitStatus: &failed, LastScheduled: &later}, listed,
			[]revisit.Policy{revisit.OldestScheduledFirst, revisit.OriginsWithoutLastUpdate, revisit.StopAfterSuccess}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []revisit.Policy
			for _, p := range revisit.Policies {
				if p.Qualifies(tc.origin, tc.stats, tc.lister) {
					got = append(got, p)
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}
