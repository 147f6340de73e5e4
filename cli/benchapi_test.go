package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/bench"
)

// bench api --only keeps the groups it names, in its order, and names the
// groups when it is given another.
func TestBenchAPIOnly(t *testing.T) {
	groups := []bench.APIGroup{{Name: "overview"}, {Name: "origin page"}, {Name: "origins browse"}}
	got, err := onlyGroups(groups, nil)
	require.NoError(t, err)
	require.Equal(t, groups, got)
	got, err = onlyGroups(groups, []string{"origins browse", "overview"})
	require.NoError(t, err)
	require.Equal(t, []bench.APIGroup{{Name: "origins browse"}, {Name: "overview"}}, got)
	_, err = onlyGroups(groups, []string{"browse"})
	require.EqualError(t, err, `--only: no group of reads "browse" ("overview", "origin page", "origins browse")`)
	require.ErrorAs(t, err, new(usageError))
}
