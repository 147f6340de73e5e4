package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

func TestSettingsAdviceNamesSlowCompressions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	for _, c := range []struct {
		compression string
		advised     bool
	}{{"pglz", true}, {"on", true}, {"zstd", true}, {"lz4", false}, {"off", false}} {
		s, err := Open(ctx, url+"&wal_compression="+c.compression, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		advice, err := s.SettingsAdvice(ctx)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The test schema is empty: shared_buffers is never worth a word.
		if c.advised != (len(advice) == 1) || len(advice) > 1 {
			t.Fatalf("wal_compression = %s: advice %q", c.compression, advice)
		}
		// PostgreSQL shows "on" as what it means, pglz.
		shown := c.compression
		if shown == "on" {
			shown = "pglz"
		}
		if c.advised && !strings.HasPrefix(advice[0], "wal_compression = "+shown+" ") {
			t.Errorf("wal_compression = %s: advice %q does not name the setting", c.compression, advice[0])
		}
	}
}

func TestSettingsAdviceComparesSharedBuffersWithTheListedOrigins(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	for _, c := range []struct {
		sharedBuffers, listedOrigins int64
		want                         string
	}{
		{4 * gib, 6 * gib, "shared_buffers (4.0 GiB) is smaller than the listed origins' tables and their indexes (6.0 GiB)"},
		{12 * gib, 6 * gib, ""},
		{128 << 20, 900 << 20, ""}, // a small store stays in any cache
	} {
		advice := settingsAdvice(serverSettings{walCompression: "lz4", sharedBuffers: c.sharedBuffers,
			listedOrigins: c.listedOrigins, hugePages: "on"})
		requireAdvice(t, advice, c.want)
	}
}

func TestSettingsAdviceAsksForHugePagesUnderALargeSharedCache(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	for _, c := range []struct {
		sharedBuffers int64
		hugePages     string
		want          string
	}{
		{12 * gib, "off", "shared_buffers (12 GiB) is not on huge pages"},
		{12 * gib, "on", ""},
		{12 * gib, "", ""},     // huge_pages = try on a server older than 17: not known
		{128 << 20, "off", ""}, // a small cache is mapped quickly
	} {
		advice := settingsAdvice(serverSettings{walCompression: "lz4", sharedBuffers: c.sharedBuffers, hugePages: c.hugePages})
		requireAdvice(t, advice, c.want)
	}
}

// requireAdvice fails unless advice is one sentence starting with want, or
// none when want is empty.
func requireAdvice(t *testing.T, advice []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(advice) != 0:
		t.Errorf("advice %q, want none", advice)
	case want != "" && (len(advice) != 1 || !strings.HasPrefix(advice[0], want)):
		t.Errorf("advice %q, want %q…", advice, want)
	}
}
