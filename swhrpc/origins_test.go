package swhrpc

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/swhwire"
)

var listedOriginFields = []string{"lister_id", "url", "visit_type", "extra_loader_arguments", "last_update", "is_fork",
	"forked_from_url", "enabled", "first_seen", "last_seen"}

// newLister creates a lister and returns its id.
func (c *client) newLister(name string) uuid.UUID {
	c.t.Helper()
	l := fields(c.t, c.ok("lister/get_or_create", "name", name, "instance_name", name, "first_visits_queue_prefix", nil), "Lister")
	return l["id"].(uuid.UUID)
}

func TestOriginsRecord(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		lister := c.newLister("github")
		updated := time.Date(2026, 3, 1, 12, 0, 0, 1000, time.UTC)
		got := list(t, c.ok("origins/record", "listed_origins", []any{
			origin(lister, "https://github.com/o/b", "git", "last_update", updated, "is_fork", true,
				"forked_from_url", "https://github.com/o/a", "extra_loader_arguments", pairs("n", int64(3), "f", 1.5, "l", []any{"x"})),
			origin(lister, "https://github.com/o/a", "git", "enabled", false, "first_seen", nil, "last_seen", nil),
			origin(lister, "https://github.com/o/b", "git", "last_update", updated),
		}))
		require.Len(t, got, 2, "one row per distinct origin")
		b, a := got[0].(swhwire.Model), fields(t, got[1], "ListedOrigin")
		require.Equal(t, listedOriginFields, names(b))
		bf := fields(t, b, "ListedOrigin")
		require.Equal(t, "https://github.com/o/b", bf["url"], "in the order of the first occurrences")
		require.Equal(t, updated, bf["last_update"])
		require.Nil(t, bf["is_fork"], "the last occurrence wins")
		require.Equal(t, swhwire.Map{}, bf["extra_loader_arguments"])
		require.IsType(t, time.Time{}, bf["first_seen"])
		require.Equal(t, bf["first_seen"], bf["last_seen"])
		require.Equal(t, false, a["enabled"])

		again := fields(t, list(t, c.ok("origins/record", "listed_origins", []any{
			origin(lister, "https://github.com/o/b", "git", "extra_loader_arguments", pairs("n", int64(3), "f", 1.5, "l", []any{"x"})),
		}))[0], "ListedOrigin")
		require.Equal(t, bf["first_seen"], again["first_seen"], "first_seen stays")
		require.True(t, again["last_seen"].(time.Time).After(bf["last_seen"].(time.Time)))
		require.ElementsMatch(t, swhwire.Map{{Key: "f", Value: 1.5}, {Key: "l", Value: []any{"x"}}, {Key: "n", Value: int64(3)}},
			again["extra_loader_arguments"])
		require.Equal(t, []any{}, c.ok("origins/record", "listed_origins", []any{}))
	})
}

func TestOriginsGet(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		gh, gl := c.newLister("github"), c.newLister("gitlab")
		var batch []any
		const n = 1000
		for i := range n {
			url := fmt.Sprintf("https://github.com/o/r%04d", i)
			batch = append(batch, origin(gh, url, "git", "enabled", i%10 != 0))
			if i%7 == 0 {
				batch = append(batch, origin(gh, url, "hg"), origin(gh, url, "svn"))
			}
		}
		c.ok("origins/record", "listed_origins", batch)
		c.ok("origins/record", "listed_origins", []any{origin(gl, "https://gitlab.com/o/r", "git")})
		all := 1000 + 2*143 + 1

		page := func(params ...any) (origins []map[string]any, token any, r response) {
			t.Helper()
			r = c.call("origins/get", params...)
			require.Equal(t, http.StatusOK, r.status, "%v", r.value)
			pr, ok := r.value.(swhwire.PagedResult)
			require.True(t, ok, "want a paged result, got %#v", r.value)
			require.Nil(t, pr.TotalResults)
			for _, o := range list(t, pr.Results) {
				origins = append(origins, fields(t, o, "ListedOrigin"))
			}
			return origins, pr.NextPageToken, r
		}

		// The whole of one lister's in one page: a large response, whole.
		first, token, r := page("lister_id", gh, "url", nil, "urls", nil, "enabled", nil, "limit", int64(2000), "page_token", nil)
		require.Len(t, first, all-1)
		require.Nil(t, token, "a page that is not full is the last")
		require.Greater(t, len(r.raw), 2048)
		require.Equal(t, strconv.Itoa(len(r.raw)), r.header.Get("Content-Length"))
		require.Empty(t, r.header.Values("Transfer-Encoding"))

		// Defaults: enabled origins only, 1000 at most.
		enabled, token, _ := page()
		require.Len(t, enabled, 1000)
		require.NotNil(t, token)
		disabled, _, _ := page("enabled", false)
		require.Len(t, disabled, 100)

		// Pages of 10 cut inside the visit types of one URL: the page ends
		// with the URL's other visit types, the next starts after the URL.
		var seen []string
		var pages int
		token = nil
		for {
			origins, next, _ := page("enabled", nil, "limit", int64(10), "page_token", token)
			pages++
			for _, o := range origins {
				seen = append(seen, o["lister_id"].(uuid.UUID).String()+" "+o["url"].(string)+" "+o["visit_type"].(string))
			}
			if next == nil {
				break
			}
			pair := list(t, next)
			require.Len(t, pair, 2)
			last := origins[len(origins)-1]
			require.Equal(t, []any{last["lister_id"].(uuid.UUID).String(), last["url"]}, pair)
			token = next
		}
		require.Len(t, seen, all, "every origin once")
		require.IsIncreasing(t, seen)
		require.Greater(t, pages, all/12)

		// Filters: one URL, a set of URLs, both (what both select).
		one, _, _ := page("url", "https://github.com/o/r0007", "enabled", nil)
		require.Len(t, one, 3)
		some, _, _ := page("urls", []any{"https://github.com/o/r0001", "https://gitlab.com/o/r"})
		require.Len(t, some, 2)
		none, token, _ := page("url", "https://github.com/o/r0007", "urls", []any{"https://github.com/o/r0001"})
		require.Empty(t, none)
		require.Nil(t, token)
		other, _, _ := page("lister_id", gl)
		require.Len(t, other, 1)
	})
}

func TestOriginsGrabNext(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		gh := c.newLister("github")
		old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		var batch []any
		for i := range 5 {
			batch = append(batch, origin(gh, fmt.Sprintf("https://github.com/o/r%d", i), "git", "last_update", old.Add(time.Duration(i)*time.Hour)))
		}
		c.ok("origins/record", "listed_origins", batch)
		grab := func(params ...any) []map[string]any {
			t.Helper()
			var out []map[string]any
			for _, o := range list(t, c.ok("origins/grab_next", append([]any{"visit_type", "git"}, params...)...)) {
				out = append(out, fields(t, o, "ListedOrigin"))
			}
			return out
		}
		dry := grab("count", int64(2), "policy", "never_visited_oldest_update_first", "dry_run", true)
		require.Len(t, dry, 2)
		require.Equal(t, "https://github.com/o/r0", dry[0]["url"], "oldest update first")
		got := grab("count", int64(2), "policy", "never_visited_oldest_update_first", "lister_uuid", gh.String())
		require.Equal(t, dry, got, "a dry run marks nothing")
		rest := grab("count", int64(10), "policy", "never_visited_oldest_update_first", "absolute_cooldown", swhwire.Timedelta{Seconds: 43200})
		require.Len(t, rest, 3, "the grabbed ones are in their cooldown")
		require.Empty(t, grab("count", int64(10), "policy", "oldest_scheduled_first"))
		later := time.Now().Add(24 * time.Hour)
		require.Len(t, grab("count", int64(10), "policy", "oldest_scheduled_first", "timestamp", later,
			"absolute_cooldown", nil, "scheduled_cooldown", nil), 5, "None disables a cooldown")
		require.Len(t, grab("count", int64(10), "policy", "oldest_scheduled_first", "enabled", false), 0)
		require.Empty(t, grab("count", int64(10), "policy", "oldest_scheduled_first", "lister_name", "gitlab",
			"lister_instance_name", "gitlab", "timestamp", later.Add(48*time.Hour)))

		c.fails(http.StatusBadRequest, "UnknownPolicy", "Unknown scheduling policy nope",
			"origins/grab_next", "visit_type", "git", "count", int64(1), "policy", "nope")
		c.fails(http.StatusBadRequest, "SchedulerException", "tablesample: 150 is not a percentage",
			"origins/grab_next", "visit_type", "git", "count", int64(1), "policy", "oldest_scheduled_first", "tablesample", int64(150))
		c.fails(http.StatusBadRequest, "SchedulerException", "count: must be between 1 and 100000, not 100001",
			"origins/grab_next", "visit_type", "git", "count", int64(100001), "policy", "oldest_scheduled_first")
	})
}
