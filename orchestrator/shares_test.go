package orchestrator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// fakeGrab serves grabs from per-share stocks of eligible origins.
func fakeGrab(stock []int) func(i, n int) (int, error) {
	return func(i, n int) (int, error) {
		k := min(n, stock[i])
		stock[i] -= k
		return k, nil
	}
}

func shares(weights ...int) []Share {
	policies := []revisit.Policy{revisit.AlreadyVisitedOrderByLag, revisit.NeverVisitedOldestUpdateFirst,
		revisit.OriginsWithoutLastUpdate, revisit.StopAfterSuccess}
	out := make([]Share, len(weights))
	for i, w := range weights {
		out[i] = Share{Policy: policies[i], Weight: w}
	}
	return out
}

func TestFillMeetsWeightsWhenEveryPolicyHasCandidates(t *testing.T) {
	got, _, err := fill(1000, shares(49, 49, 2), fakeGrab([]int{1e6, 1e6, 1e6}))
	require.NoError(t, err)
	require.Equal(t, []int{490, 490, 20}, got)

	got, _, err = fill(1001, shares(40, 40, 20), fakeGrab([]int{1e6, 1e6, 1e6}))
	require.NoError(t, err)
	require.Equal(t, 1001, got[0]+got[1]+got[2], "rounding leftovers are handed out too")
	require.InDelta(t, 400, got[0], 1)
	require.InDelta(t, 400, got[1], 1)
	require.InDelta(t, 200, got[2], 1)
}

func TestFillGivesSpareSlotsToPoliciesThatStillHaveOrigins(t *testing.T) {
	got, _, err := fill(1000, shares(49, 49, 2), fakeGrab([]int{1e6, 100, 5}))
	require.NoError(t, err)
	require.Equal(t, []int{895, 100, 5}, got)

	got, _, err = fill(1000, shares(40, 40, 20), fakeGrab([]int{300, 300, 1e6}))
	require.NoError(t, err)
	require.Equal(t, []int{300, 300, 400}, got)
}

func TestFillStopsWhenOriginsRunOut(t *testing.T) {
	got, _, err := fill(1000, shares(1, 1), fakeGrab([]int{3, 4}))
	require.NoError(t, err)
	require.Equal(t, []int{3, 4}, got)
}

func TestFillWeightZeroDisables(t *testing.T) {
	got, _, err := fill(100, shares(0, 1, 0), fakeGrab([]int{1e6, 10, 1e6}))
	require.NoError(t, err)
	require.Equal(t, []int{0, 10, 0}, got, "a weight of 0 never grabs, even when others run dry")
}

func TestFillFewSlots(t *testing.T) {
	got, _, err := fill(1, shares(49, 49, 2), fakeGrab([]int{1e6, 1e6, 1e6}))
	require.NoError(t, err)
	require.Equal(t, 1, got[0]+got[1]+got[2], "one free slot is still filled")
}

func TestValidateShares(t *testing.T) {
	const key = "scheduling_policy.git"
	require.NoError(t, ValidateShares(key, DefaultShares("git")))
	for _, c := range []struct {
		shares []Share
		want   string
	}{
		{shares(0, 0), "scheduling_policy.git: no policy has a positive weight"},
		{shares(1, -1), "scheduling_policy.git[1].weight: -1 is negative"},
		{[]Share{{Policy: "nope", Weight: 1}}, "scheduling_policy.git[0].policy: "},
		{[]Share{{Policy: revisit.FirstVisitsAfterListing, Weight: 1}}, "scheduling_policy.git[0].lister: first_visits_after_listing needs a lister"},
		{[]Share{{Policy: revisit.StopAfterSuccess, Weight: 1, Grab: revisit.GrabParams{Sample: 1}}}, "scheduling_policy.git[0].sample: 1 is not in [0, 1)"},
	} {
		require.ErrorContains(t, ValidateShares(key, c.shares), c.want)
	}
}
