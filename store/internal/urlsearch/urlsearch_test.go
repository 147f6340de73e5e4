package urlsearch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// fakeEngine serves URLs "u0000"… with a git row each, and an hg row for
// every third; it stops its reading after walk URLs when walk is set, and
// counts the URLs asked for.
type fakeEngine struct {
	urls  []string
	walk  int
	asked []int
}

func newFake(n, walk int) *fakeEngine {
	e := &fakeEngine{walk: walk}
	for i := range n {
		e.urls = append(e.urls, fmt.Sprintf("u%04d", i))
	}
	return e
}

func (e *fakeEngine) URLs(_ context.Context, s revisit.OriginSearch, from string, inclusive bool, n int) ([]string, string, error) {
	e.asked = append(e.asked, n)
	i, found := slices.BinarySearch(e.urls, from)
	if found && !inclusive {
		i++
	}
	var out []string
	for read := 0; i < len(e.urls) && len(out) < n; i, read = i+1, read+1 {
		if e.walk > 0 && read == e.walk {
			return out, e.urls[i-1], nil
		}
		if strings.Contains(e.urls[i], s.Query) {
			out = append(out, e.urls[i])
		}
	}
	return out, "", nil
}

func (e *fakeEngine) Rows(_ context.Context, s revisit.OriginSearch, urls []string) ([]revisit.OriginMatch, error) {
	var out []revisit.OriginMatch
	for _, u := range slices.Backward(urls) { // any order
		i := slices.Index(e.urls, u)
		for _, vt := range []string{"hg", "git"} {
			if (vt == "hg" && i%3 != 0) || (s.VisitType != "" && s.VisitType != vt) {
				continue
			}
			out = append(out, revisit.OriginMatch{ListedOrigin: revisit.ListedOrigin{URL: u, VisitType: vt, ListerID: uuid.Nil}})
		}
	}
	return out, nil
}

// all follows a search's pages and returns its rows as "url vt", and how
// many pages it took.
func all(t *testing.T, e Engine, s revisit.OriginSearch) ([]string, int) {
	t.Helper()
	var rows []string
	for pages := 1; ; pages++ {
		page, err := Run(context.Background(), e, s)
		require.NoError(t, err)
		for _, o := range page.Origins {
			rows = append(rows, o.URL+" "+o.VisitType)
		}
		if page.NextPageToken == "" {
			return rows, pages
		}
		s.PageToken = page.NextPageToken
	}
}

func TestRun(t *testing.T) {
	e := newFake(30, 0)
	whole, pages := all(t, e, revisit.OriginSearch{Query: "u", Enabled: revisit.AnyEnabled, Limit: 1000})
	require.Equal(t, 1, pages)
	require.Len(t, whole, 40, "30 git rows, 10 hg")
	require.Equal(t, []string{"u0000 git", "u0000 hg", "u0001 git"}, whole[:3], "rows in (url, visit_type) order")
	for _, limit := range []int{1, 2, 7} {
		got, pages := all(t, e, revisit.OriginSearch{Query: "u", Enabled: revisit.AnyEnabled, Limit: limit})
		require.Equal(t, whole, got, "pages of %d", limit)
		require.Equal(t, (40+limit-1)/limit, pages)
	}

	// Without filters, a round asks for a page's worth of URLs; with
	// them, for the whole budget at once.
	e.asked = nil
	_, err := Run(context.Background(), e, revisit.OriginSearch{Query: "u", Enabled: revisit.AnyEnabled, Limit: 5})
	require.NoError(t, err)
	require.Equal(t, []int{6}, e.asked)
	e.asked = nil
	hg, _ := all(t, e, revisit.OriginSearch{Query: "u", Enabled: revisit.AnyEnabled, VisitType: "hg", Limit: 5})
	require.Len(t, hg, 10)
	require.Equal(t, Budget(5), e.asked[0])

	// An engine that stops its reading ends the page there; the pages
	// still hold every row once.
	walked, pages := all(t, newFake(30, 4), revisit.OriginSearch{Query: "u002", Enabled: revisit.AnyEnabled, Limit: 3})
	require.Equal(t, []string{"u0020 git", "u0021 git", "u0021 hg", "u0022 git", "u0023 git", "u0024 git", "u0024 hg",
		"u0025 git", "u0026 git", "u0027 git", "u0027 hg", "u0028 git", "u0029 git"}, walked)
	require.Greater(t, pages, 5, "walks of 4 URLs without a match come first")

	_, err = Run(context.Background(), e, revisit.OriginSearch{Enabled: 7})
	require.ErrorIs(t, err, revisit.ErrInvalid)
}

func TestEscapeAndPrefixEnd(t *testing.T) {
	require.Equal(t, `a\%b\_c\\d`, Escape(`a%b_c\d`))
	require.Equal(t, "https://b", PrefixEnd("https://a"))
	for _, p := range []string{"a", "https://x/é", "zz"} {
		end := PrefixEnd(p)
		require.Less(t, p+"\xf4\x8f\xbf\xbf", end, "above every string starting with %q", p)
		require.Less(t, p, end)
	}
}
