package sqlite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// TestUndecodableRecentResults: stored recent results that do not decode
// fail the read of the stats with an error naming the origin.
func TestUndecodableRecentResults(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	k := revisit.OriginKey{URL: "https://forge.example/a", VisitType: "git"}
	require.NoError(t, s.VisitStatsUpsert(ctx, []revisit.VisitStats{revisit.NewVisitStats(k)}))
	_, err := s.w.ExecContext(ctx, `UPDATE visit_stats SET recent = x'010203'`)
	require.NoError(t, err)
	_, err = s.VisitStatsGet(ctx, []revisit.OriginKey{k})
	require.ErrorContains(t, err, "the recent results stored for https://forge.example/a (git) do not decode: 3 bytes")
	require.Equal(t, revisit.CodeInternal, revisit.Code(err))
}
