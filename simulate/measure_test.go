package simulate

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQuantilesAreTheNearestRanksOfTheSortedValues checks the selection
// against a sort, on sizes and duplicates that exercise its edges.
func TestQuantilesAreTheNearestRanksOfTheSortedValues(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 99, 100, 101, 1000, 25_000} {
		for _, spread := range []int64{3, 1 << 40} {
			ds := make([]time.Duration, n)
			for i := range ds {
				ds[i] = time.Duration(rnd.Int64N(spread))
			}
			sorted := slices.Sorted(slices.Values(ds))
			at := func(p float64) time.Duration {
				k := int(float64(n)*p+0.999999999) - 1
				return sorted[max(0, k)]
			}
			require.Equal(t, Quantiles{P50: at(0.5), P90: at(0.9), P99: at(0.99)}, quantiles(ds), "n=%d spread=%d", n, spread)
		}
	}
	require.Equal(t, Quantiles{}, quantiles(nil))
}
