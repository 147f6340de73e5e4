package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetentionSection(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	require.NoError(t, err)
	require.False(t, cfg.Retention.Enabled(), "no periodic retention by default")
	require.Equal(t, Retention{Interval: Duration(time.Hour), Archive: true}, cfg.Retention)
	require.Equal(t, Embedded{KeepDone: Duration(time.Hour)}, cfg.Embedded)

	cfg, err = loadYAML(t, `
retention: {older_than: 90d, interval: 30m, archive_dir: /var/lib/revisit/archive}
embedded: {keep_done: 2h}
`, "REVISIT_RETENTION_INTERVAL=2h")
	require.NoError(t, err)
	require.Equal(t, Retention{OlderThan: Duration(90 * 24 * time.Hour), Interval: Duration(2 * time.Hour),
		ArchiveDir: "/var/lib/revisit/archive", Archive: true}, cfg.Retention, "the environment overrides the file")
	require.True(t, cfg.Retention.Enabled())
	require.Equal(t, Duration(2*time.Hour), cfg.Embedded.KeepDone)

	cfg, err = loadYAML(t, "retention: {older_than: 30d, archive: false}")
	require.NoError(t, err, "deleting without a copy when asked")
	require.False(t, cfg.Retention.Archive)
}

func TestRetentionSectionErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ yaml, want string }{
		{"retention: {older_than: 30d}", "retention.archive_dir: missing"},
		{"retention: {older_than: 30d, archive_dir: /a, archive: false}", "retention.archive_dir: set while retention.archive is false"},
		{"retention: {older_than: -1h, archive_dir: /a}", `retention.older_than: duration "-1h" is negative`},
		{"retention: {older_than: 30d, archive_dir: /a, interval: 0s}", "retention.interval: 0 is not positive"},
		{"retention: {older_than: soon}", `retention.older_than`},
		{"retention: {archive: maybe}", `retention.archive`},
		{"retention: {keep: 1h}", `unknown key "retention.keep"`},
		{"embedded: {keep_done: 0s}", "embedded.keep_done: 0 is not positive"},
		{"embedded: {keep: 1h}", `unknown key "embedded.keep"`},
	} {
		_, err := loadYAML(t, c.yaml)
		require.ErrorContains(t, err, c.want, c.yaml)
	}
}
