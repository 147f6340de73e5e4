package orchestrator

import (
	"fmt"
	"sort"

	"github.com/revisit-sched/revisit"
)

// Share is one policy of a visit type, its weight, and the extra options of
// its grabs (semantics.md §4.1).
type Share struct {
	// Policy chooses the origins.
	Policy revisit.Policy
	// Weight is the policy's part of the free slots; 0 disables it.
	Weight int
	// Grab holds the extra grab options: lister filter, sample, cooldowns.
	// The loop sets VisitType, Count, Policy and Now.
	Grab revisit.GrabParams
}

// DefaultShares returns the policy weights of semantics.md §4.1 for a
// visit type: upstream's production values.
func DefaultShares(visitType string) []Share {
	switch visitType {
	case "git", "hg", "svn", "cvs", "bzr":
		return []Share{
			{Policy: revisit.AlreadyVisitedOrderByLag, Weight: 49},
			{Policy: revisit.NeverVisitedOldestUpdateFirst, Weight: 49},
			{Policy: revisit.OriginsWithoutLastUpdate, Weight: 2},
		}
	case "content", "tarball-directory", "git-checkout", "hg-checkout", "svn-export":
		return []Share{{Policy: revisit.StopAfterSuccess, Weight: 100}}
	}
	return []Share{
		{Policy: revisit.AlreadyVisitedOrderByLag, Weight: 40},
		{Policy: revisit.NeverVisitedOldestUpdateFirst, Weight: 40},
		{Policy: revisit.OriginsWithoutLastUpdate, Weight: 20},
	}
}

// ValidateShares checks the shares of a visit type, which the
// configuration file names key (scheduling_policy.git): known policies,
// no negative weight, at least one positive weight, a sample in [0, 1),
// a lister for first_visits_after_listing. Errors name the share's
// field as the file does (scheduling_policy.git[0].weight).
func ValidateShares(key string, shares []Share) error {
	total := 0
	for i, s := range shares {
		at := fmt.Sprintf("%s[%d]", key, i)
		if _, err := revisit.ParsePolicy(string(s.Policy)); err != nil {
			return fmt.Errorf("%s.policy: %w", at, err)
		}
		if s.Weight < 0 {
			return fmt.Errorf("%s.weight: %d is negative", at, s.Weight)
		}
		if s.Grab.Sample < 0 || s.Grab.Sample >= 1 {
			return fmt.Errorf("%s.sample: %g is not in [0, 1)", at, s.Grab.Sample)
		}
		if s.Policy == revisit.FirstVisitsAfterListing && s.Grab.ListerID == nil && s.Grab.ListerName == "" {
			return fmt.Errorf("%s.lister: %s needs a lister", at, s.Policy)
		}
		total += s.Weight
	}
	if total == 0 {
		return fmt.Errorf("%s: no policy has a positive weight", key)
	}
	return nil
}

// firstPass gives each share floor(free × weight / Σweights) slots.
func firstPass(free int, shares []Share) []int {
	total := 0
	for _, s := range shares {
		total += s.Weight
	}
	counts := make([]int, len(shares))
	if total == 0 {
		return counts
	}
	for i, s := range shares {
		counts[i] = int(int64(free) * int64(s.Weight) / int64(total))
	}
	return counts
}

// refill splits exactly `remaining` slots among the open shares by weight,
// largest remainders first, so that a few slots still reach someone.
func refill(remaining int, shares []Share, open []bool) []int {
	total := int64(0)
	for i, s := range shares {
		if open[i] {
			total += int64(s.Weight)
		}
	}
	counts := make([]int, len(shares))
	if total == 0 || remaining <= 0 {
		return counts
	}
	type rest struct {
		i   int
		rem int64
	}
	var rests []rest
	given := 0
	for i, s := range shares {
		if !open[i] {
			continue
		}
		n := int64(remaining) * int64(s.Weight)
		counts[i] = int(n / total)
		given += counts[i]
		rests = append(rests, rest{i, n % total})
	}
	sort.SliceStable(rests, func(a, b int) bool { return rests[a].rem > rests[b].rem })
	for k := 0; given < remaining; k = (k + 1) % len(rests) {
		counts[rests[k].i]++
		given++
	}
	return counts
}

// fill runs the work-conserving split of semantics.md §4.1: grab asks one
// share for n origins and returns how many it got. The first pass gives
// each share its weighted floor; later passes give the slots left to the
// shares that filled all they were asked, until the slots or the eligible
// origins run out. It returns how many each share got, and whether each
// ran dry (returned fewer than it was asked).
func fill(free int, shares []Share, grab func(i, n int) (int, error)) (got []int, dry []bool, err error) {
	got = make([]int, len(shares))
	dry = make([]bool, len(shares))
	open := make([]bool, len(shares))
	for i, s := range shares {
		open[i] = s.Weight > 0
	}
	remaining := free
	counts := firstPass(free, shares)
	if sum(counts) == 0 {
		counts = refill(free, shares, open)
	}
	for remaining > 0 {
		progress := false
		for i, n := range counts {
			if n == 0 || !open[i] {
				continue
			}
			progress = true
			k, err := grab(i, n)
			if err != nil {
				return got, dry, err
			}
			got[i] += k
			remaining -= k
			if k < n {
				open[i], dry[i] = false, true
			}
		}
		if !progress {
			break
		}
		counts = refill(remaining, shares, open)
	}
	return got, dry, nil
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}
