package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// On PostgreSQL, `revisit db search` tells the state of the URL search and
// its size; off frees it and searches are refused, saying how to turn it
// on; on builds it again and finds what was recorded meanwhile. Each is
// idempotent.
func TestDBSearchOnPostgres(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.url = pgtest.URL(t)
	h.ok("db", "migrate")
	h.ok("origin", "record", h.file("before.jsonl", originLines(3, "git")))

	require.Contains(t, h.ok("db", "search"), "URL search on: its tables and indexes take ")
	st := h.jsonObject("db", "search", "status")
	require.Equal(t, "on", st["state"])
	require.Equal(t, true, st["own_index"])
	onBytes := st["bytes"].(float64)
	require.Positive(t, onBytes)

	off := h.jsonObject("db", "search", "off")
	require.Equal(t, map[string]any{"state": "off", "changed": true, "freed_bytes": off["freed_bytes"]}, off)
	require.Positive(t, off["freed_bytes"].(float64))
	require.Less(t, off["freed_bytes"].(float64), onBytes+1)
	require.Equal(t, "URL search already off\n", h.ok("db", "search", "off"))
	require.Contains(t, h.ok("db", "search"), "URL search off: searches are refused")
	msg := h.fails(ExitError, "origin", "search", "https://example.org/")
	require.Contains(t, msg, "the search of origins by URL is off on this store: `revisit db search on` builds its index")
	require.Len(t, h.jsonList("origin", "list"), 3, "origins are listed all the same")

	h.ok("origin", "record", h.file("while-off.jsonl",
		`{"url": "https://example.org/recorded-while-off", "visit_type": "git", "lister_name": "gitlab", "lister_instance_name": "example.org"}`+"\n"))
	require.Regexp(t, `^URL search turned on in [0-9.]+m?s: its tables and indexes take [0-9.]+ [kMG]B\n$`, h.ok("db", "search", "on"))
	on := h.jsonObject("db", "search", "on")
	require.Equal(t, map[string]any{"state": "on", "changed": false, "seconds": on["seconds"], "bytes": on["bytes"]}, on)
	require.Equal(t, "URL search already on\n", h.ok("db", "search", "on"))
	found := h.jsonList("origin", "search", "--contains", "while-off")
	require.Len(t, found, 1)
	require.Equal(t, "https://example.org/recorded-while-off", found[0]["url"])

	require.Contains(t, h.fails(ExitUsage, "db", "search", "maybe"), `"maybe" is not one of status, on, off`)
	require.Contains(t, h.fails(ExitUsage, "db", "search", "on", "off"), "want arguments [status|on|off], got 2 argument(s)")
}

// The SQLite store's search reads the listed origins' own index: it is
// on, and off is refused, saying why.
func TestDBSearchOnSQLite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("db", "migrate")
	require.Equal(t, "URL search on (uses the listed origins' own index)\n", h.ok("db", "search"))
	require.Equal(t, map[string]any{"state": "on", "own_index": false, "bytes": 0.0}, h.jsonObject("db", "search", "status"))
	require.Equal(t, "URL search on (uses the listed origins' own index)\n", h.ok("db", "search", "on"))
	msg := h.fails(ExitError, "db", "search", "off")
	require.Contains(t, msg, "the embedded SQLite store searches origins by URL in the listed origins' own index")
	require.Contains(t, msg, "there is no search index to turn off")
}
