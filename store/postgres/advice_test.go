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
		advice := settingsAdvice("lz4", c.sharedBuffers, c.listedOrigins)
		switch {
		case c.want == "" && len(advice) != 0:
			t.Errorf("shared_buffers %d, listed origins %d: advice %q, want none", c.sharedBuffers, c.listedOrigins, advice)
		case c.want != "" && (len(advice) != 1 || !strings.HasPrefix(advice[0], c.want)):
			t.Errorf("shared_buffers %d, listed origins %d: advice %q, want %q…", c.sharedBuffers, c.listedOrigins, advice, c.want)
		}
	}
}
