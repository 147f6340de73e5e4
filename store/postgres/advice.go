package postgres

import (
	"context"
	"fmt"

	"github.com/dustin/go-humanize"

	"github.com/revisit-sched/revisit/store"
)

var _ store.SettingsAdvisor = (*Store)(nil)

// SettingsAdvice reports the server settings under which revisit was
// measured to run much slower (docs/performance.md; docs/deploy/README.md
// says what to set).
func (s *Store) SettingsAdvice(ctx context.Context) ([]string, error) {
	var set serverSettings
	// The listed origins' size includes their indexes and the pending
	// table's. Whether the shared cache is on huge pages is known from
	// huge_pages_status (PostgreSQL 17 on), or from huge_pages when it is
	// on or off; with try on an older server it is not known.
	err := s.pool.QueryRow(ctx, `SELECT current_setting('wal_compression'),
			pg_size_bytes(current_setting('shared_buffers')),
			coalesce(pg_total_relation_size(to_regclass('listed_origin')), 0)
				+ coalesce(pg_total_relation_size(to_regclass('listed_origin_pending')), 0),
			coalesce(nullif(current_setting('huge_pages_status', true), 'unknown'),
				nullif(current_setting('huge_pages'), 'try'), '')`).
		Scan(&set.walCompression, &set.sharedBuffers, &set.listedOrigins, &set.hugePages)
	if err != nil {
		return nil, translate(wrap(err, "read the server's settings"))
	}
	return settingsAdvice(set), nil
}

// serverSettings are the settings the advice looks at; sizes in bytes.
type serverSettings struct {
	walCompression string
	sharedBuffers  int64
	listedOrigins  int64  // the listed origins' tables and their indexes
	hugePages      string // whether the shared cache is on huge pages: on, off, or "" when not known
}

// bigStore is the size of the listed origins' tables from which a
// shared_buffers smaller than them is worth a warning: below it, any
// server keeps them in its cache anyway.
const bigStore = 1 << 30

// bigSharedCache is the shared_buffers from which a cache on ordinary
// pages, not huge ones, is worth a warning.
const bigSharedCache = 1 << 30

// slowCompressions are the wal_compression methods measured to slow revisit
// down, with what was measured against lz4 (docs/deploy/README.md).
// PostgreSQL shows "on" as what it means, pglz, since version 15.
var slowCompressions = map[string]string{
	"pglz": pglzMeasured,
	"on":   pglzMeasured,
	"zstd": "results were processed ~2x slower on the 10M set after a checkpoint than with lz4",
}

const pglzMeasured = "grabs ran ~2x slower on the 10M set than with lz4"

// settingsAdvice returns the advice for these settings.
func settingsAdvice(set serverSettings) []string {
	var advice []string
	if measured, slow := slowCompressions[set.walCompression]; slow {
		advice = append(advice, fmt.Sprintf("wal_compression = %s compresses the full-page image "+
			"that each grab and result writes for every scattered page it touches first after a checkpoint, "+
			"at a high cost in processor time: %s; set wal_compression = lz4", set.walCompression, measured))
	}
	if set.listedOrigins >= bigStore && set.sharedBuffers < set.listedOrigins {
		advice = append(advice, fmt.Sprintf("shared_buffers (%s) is smaller than the listed origins' tables "+
			"and their indexes (%s), which results and recording touch at random: on the 10M set, 12 GB "+
			"instead of 4 GB made recording 55%% and result processing 45%% faster; raise shared_buffers",
			humanize.IBytes(uint64(set.sharedBuffers)), humanize.IBytes(uint64(set.listedOrigins))))
	}
	if set.sharedBuffers >= bigSharedCache && set.hugePages == "off" {
		advice = append(advice, fmt.Sprintf("shared_buffers (%s) is not on huge pages: each connection maps "+
			"the shared cache 4 kB at a time as results and recording touch it at random; on the 10M set "+
			"huge pages made results 1.15x to 4.9x faster, depending on the machine; set vm.nr_hugepages "+
			"to cover shared_buffers and huge_pages = on", humanize.IBytes(uint64(set.sharedBuffers))))
	}
	return advice
}
