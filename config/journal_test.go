package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJournalSection(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	require.NoError(t, err)
	require.False(t, cfg.Journal.Enabled(), "no brokers by default")
	require.Equal(t, "revisit.journal_client", cfg.Journal.GroupID)
	require.Equal(t, "swh.journal.objects", cfg.Journal.Prefix)
	require.Equal(t, 200, cfg.Journal.BatchSize)
	require.Equal(t, "earliest", cfg.Journal.AutoOffsetReset)

	cfg, err = loadYAML(t, `
journal:
  brokers: [k1:9092, k2:9092]
  group_id: ops.revisit
  auto_offset_reset: latest
  batch_size: 1000
  sasl: {username: revisit}
  tls: {enabled: true, ca_file: /etc/ca.pem}
`, "REVISIT_JOURNAL_SASL_PASSWORD=secret")
	require.NoError(t, err)
	require.True(t, cfg.Journal.Enabled())
	require.Equal(t, []string{"k1:9092", "k2:9092"}, cfg.Journal.Brokers)
	require.Equal(t, "ops.revisit", cfg.Journal.GroupID)
	require.Equal(t, "latest", cfg.Journal.AutoOffsetReset)
	require.Equal(t, 1000, cfg.Journal.BatchSize)
	require.Equal(t, JournalSASL{Mechanism: "SCRAM-SHA-512", Username: "revisit", Password: "secret"}, cfg.Journal.SASL)
	require.Equal(t, JournalTLS{Enabled: true, CAFile: "/etc/ca.pem"}, cfg.Journal.TLS)

	for text, want := range map[string]string{
		"journal: {brokers: [k:1], topic: x}":          `unknown key "journal.topic"`,
		"journal: {sasl: {user: x}}":                   `unknown key "journal.sasl.user"`,
		"journal: {auto_offset_reset: smallest}":       `journal.auto_offset_reset: "smallest" is not one of earliest, latest`,
		"journal: {batch_size: 0}":                     "journal.batch_size: 0 is not positive",
		"journal: {sasl: {mechanism: PLAIN}}":          `journal.sasl.mechanism: "PLAIN" is not supported (only SCRAM-SHA-512)`,
		"journal: {sasl: {username: u}}":               "journal.sasl.password: missing (journal.sasl.username is set)",
		"journal: {tls: {ca_file: /ca.pem}}":           "journal.tls.enabled: false, but other tls keys are set",
		"journal: {tls: {enabled: true, key_file: k}}": "journal.tls: cert_file and key_file go together",
		"journal: {brokers: ['kafka:9092/x']}":         `journal.brokers[0]: "kafka:9092/x" is not host:port`,
		"journal: {group_id: ''}":                      "journal.group_id: missing",
	} {
		_, err := loadYAML(t, text)
		require.ErrorContains(t, err, want, text)
	}
}
