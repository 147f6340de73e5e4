package journal_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/revisit-sched/revisit/internal/testkit/journaltest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/journal"
)

const (
	scramUser     = "revisit"
	scramPassword = "s3cret"
)

// saslCluster starts a cluster that only serves clients logged in as
// scramUser with SCRAM-SHA-512, and fills it with w's statuses.
func saslCluster(t *testing.T, w journaltest.Workload) []string {
	t.Helper()
	brokers := journaltest.Cluster(t, 2, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", scramUser, scramPassword))
	login := scram.Auth{User: scramUser, Pass: scramPassword}.AsSha512Mechanism()
	journaltest.ProduceCopied(t, brokers, 2, w.Statuses, kgo.SASL(login))
	return brokers
}

// limited is a consumer of cfg into st that stops after want messages.
func limited(t *testing.T, st journal.Store, cfg journal.Config, want int) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg.Metrics, cfg.Rand, cfg.MaxMessages = journal.NewMetrics(reg), rand.Float64, want
	c, err := journal.New(st, cfg)
	require.NoError(t, err)
	return &running{reg: reg, c: c}
}

// ready is r's Ready within 10 s.
func (r *running) ready() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.c.Ready(ctx)
}

// runFor runs r until it has read its messages or within has passed, and
// returns how many statuses it folded.
func (r *running) runFor(t *testing.T, within time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	require.NoError(t, r.c.Run(ctx))
	return r.messages(journal.OutcomeFolded)
}

// TestSASLLogin: a consumer logged in with the right SCRAM-SHA-512
// credentials folds the statuses of a cluster that asks for a login.
func TestSASLLogin(t *testing.T) {
	w := journaltest.NewWorkload("sasl", 12, 3, 3, 2, base, 3)
	brokers := saslCluster(t, w)
	st := teststore.SQLite(t)
	w.Record(t, st)

	r := limited(t, st, journal.Config{Brokers: brokers,
		SASL: &journal.SCRAM{User: scramUser, Password: scramPassword}}, len(w.Statuses))
	require.NoError(t, r.ready())
	require.Equal(t, len(w.Finals()), r.runFor(t, time.Minute))
	require.Equal(t, w.Expected(t), w.Outcomes(t, st))
}

// TestSASLWrongPassword: with a wrong password the brokers do not answer
// and the consumer folds nothing. kfake drops the connection of a failed
// SCRAM login (a real broker answers SASL_AUTHENTICATION_FAILED), so Ready
// can only report the broker as not answering.
func TestSASLWrongPassword(t *testing.T) {
	w := journaltest.NewWorkload("badsasl", 4, 0, 0, 1, base, 4)
	brokers := saslCluster(t, w)
	st := teststore.SQLite(t)
	w.Record(t, st)

	r := limited(t, st, journal.Config{Brokers: brokers,
		SASL: &journal.SCRAM{User: scramUser, Password: "wrong"}}, len(w.Statuses))
	err := r.ready()
	require.Error(t, err)
	require.Contains(t, err.Error(), brokers[0])
	require.Zero(t, r.runFor(t, 3*time.Second))
	require.Empty(t, w.Outcomes(t, st))
}

// TestTLS: a consumer trusting the cluster's self-signed certificate folds
// its statuses over TLS; one trusting only the system's authorities is
// refused.
func TestTLS(t *testing.T) {
	cert, caFile := journaltest.SelfSigned(t)
	w := journaltest.NewWorkload("tls", 6, 2, 2, 1, base, 5)
	brokers := journaltest.Cluster(t, 1, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	journaltest.ProduceWith(t, brokers, w.Statuses, map[string]string{"security.protocol": "SSL", "ssl.ca.location": caFile})
	st := teststore.SQLite(t)
	w.Record(t, st)

	untrusted := limited(t, st, journal.Config{Brokers: brokers, TLS: &tls.Config{MinVersion: tls.VersionTLS12}}, 1)
	err := untrusted.ready()
	require.Error(t, err)
	require.Contains(t, err.Error(), "certificate")
	require.Zero(t, untrusted.runFor(t, time.Second))

	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	r := limited(t, st, journal.Config{Brokers: brokers,
		TLS: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}}, len(w.Statuses))
	require.NoError(t, r.ready())
	require.Equal(t, len(w.Finals()), r.runFor(t, time.Minute))
	require.Equal(t, w.Expected(t), w.Outcomes(t, st))
}
