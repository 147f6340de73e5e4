package cli

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/testkit/journaltest"
	"github.com/revisit-sched/revisit/journal"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
)

// journalConfig writes a configuration whose journal section names brokers.
func journalConfig(t *testing.T, dir string, brokers []string, extra string) string {
	t.Helper()
	name := filepath.Join(dir, "revisit.yaml")
	text := fmt.Sprintf("journal:\n  brokers: [%s]\n  batch_size: 9\n%s", strings.Join(brokers, ", "), extra)
	require.NoError(t, os.WriteFile(name, []byte(text), 0o600))
	return name
}

// The configuration's defaults are the journal package's.
func TestJournalDefaults(t *testing.T) {
	c := config.Default().Journal
	require.Equal(t, journal.DefaultGroup, c.GroupID)
	require.Equal(t, journal.DefaultPrefix, c.Prefix)
	require.Equal(t, journal.DefaultBatchSize, c.BatchSize)
}

// TestJournalClientCommand: journal-client -m N processes the N messages
// of the topic into the visit stats and exits, their offsets committed.
func TestJournalClientCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	msg := h.fails(ExitError, "journal-client")
	require.Contains(t, msg, "journal.brokers: not set")
	require.Contains(t, h.fails(ExitUsage, "journal-client", "-m", "-1"), "--max-messages: must not be negative")

	brokers := journaltest.Cluster(t, 3)
	w := journaltest.NewWorkload("cli", 12, 3, 3, 3, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), 4)
	st, err := sqlite.Open(context.Background(), filepath.Join(h.dir, "revisit.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	w.Record(t, st)
	journaltest.Produce(t, brokers, w.Statuses)
	cfg := journalConfig(t, h.dir, brokers, "")
	h.ok("--config", cfg, "journal-client", "-m", fmt.Sprint(len(w.Statuses)))
	require.Equal(t, w.Expected(t), w.Outcomes(t, st))
	require.Equal(t, journaltest.Ends(t, brokers), journaltest.Committed(t, brokers, journal.DefaultGroup))
}

// TestServeJournalRole: with journal.brokers configured, revisit serve runs
// the journal role by default, /readyz checks its brokers and the
// dashboard shows its lag; brokers that do not answer make it not ready.
func TestServeJournalRole(t *testing.T) {
	t.Parallel()
	bin := buildRevisit(t)
	brokers := journaltest.Cluster(t, 2)
	w := journaltest.NewWorkload("serve", 6, 0, 1, 2, time.Now().Add(-time.Hour).UTC(), 5)
	journaltest.Produce(t, brokers, w.Statuses)
	dir := t.TempDir()
	base := startServe(t, bin, dir, "serve", "--config", journalConfig(t, dir, brokers, ""))
	journaltest.WaitCommitted(t, brokers, journal.DefaultGroup, time.Minute)

	code, ready := getJSON(t, base+"/readyz")
	require.Equal(t, http.StatusOK, code, "%v", ready)
	require.Equal(t, "ok", ready["checks"].(map[string]any)["journal"])
	_, dash := getJSON(t, base+"/api/v1/dashboard")
	j, ok := dash["journal"].(map[string]any)
	require.True(t, ok, "the dashboard has no journal: %v", dash)
	require.Equal(t, journaltest.Topic, j["topic"])
	require.NotEmpty(t, j["lag"])

	gone := freeAddr(t)
	dir = t.TempDir()
	base = startServe(t, bin, dir, "serve", "--roles", "journal", "--config", journalConfig(t, dir, []string{gone}, ""))
	code, ready = getJSON(t, base+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, "%v", ready)
	require.Contains(t, ready["checks"].(map[string]any)["journal"], "no Kafka broker")
}

// getJSON GETs url and decodes its JSON object.
func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var v map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return resp.StatusCode, v
}

// journal.tls becomes a TLS configuration trusting ca_file, checking
// server_name, with the client certificate; unreadable files name their key.
func TestJournalTLS(t *testing.T) {
	cert, pemFile := journaltest.SelfSigned(t)
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600))

	c, err := journalTLS(config.JournalTLS{Enabled: true, CAFile: pemFile, CertFile: pemFile, KeyFile: keyFile, ServerName: "kafka.example"})
	require.NoError(t, err)
	require.Equal(t, "kafka.example", c.ServerName)
	_, err = cert.Leaf.Verify(x509.VerifyOptions{Roots: c.RootCAs, DNSName: "localhost"})
	require.NoError(t, err, "ca_file is trusted")
	require.Len(t, c.Certificates, 1)
	require.Equal(t, cert.Certificate, c.Certificates[0].Certificate)

	c, err = journalTLS(config.JournalTLS{Enabled: true})
	require.NoError(t, err)
	require.Nil(t, c.RootCAs, "no ca_file: the system's authorities")

	_, err = journalTLS(config.JournalTLS{Enabled: true, CAFile: keyFile})
	require.ErrorContains(t, err, "journal.tls.ca_file: "+keyFile+" holds no PEM certificate")
	_, err = journalTLS(config.JournalTLS{Enabled: true, CAFile: filepath.Join(t.TempDir(), "none.pem")})
	require.ErrorContains(t, err, "journal.tls.ca_file: ")
	_, err = journalTLS(config.JournalTLS{Enabled: true, CertFile: pemFile, KeyFile: pemFile})
	require.ErrorContains(t, err, "journal.tls.cert_file: ")
}
