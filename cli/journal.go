package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/journal"
	"github.com/revisit-sched/revisit/store"
)

const roleJournal = "journal"

func (a *app) journalClientCommand() *cobra.Command {
	var (
		maxMessages int
		metricsAddr string
	)
	cmd := &cobra.Command{
		Use:   "journal-client [-m N]",
		Short: "Fold the visit statuses of the Software Heritage journal (Kafka) into the visit stats",
		Long: `Reads the topic PREFIX.origin_visit_status of the Software Heritage journal in
the consumer group journal.group_id (default revisit.journal_client, not
upstream's, so that both can run side by side) until SIGINT or SIGTERM, and
folds each batch of visit statuses into the visit stats as "revisit
visit-status ingest" does. A batch's offsets are committed once it is
written; a restart resumes from them, and a status read twice is ignored.
Malformed messages are counted, logged once per kind, and skipped.

The brokers, group, batch size, SASL and TLS come from the journal section
of the configuration. -m N stops after N messages.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxMessages < 0 {
				return usagef("--max-messages: must not be negative, not %d", maxMessages)
			}
			c, err := a.config(cmd)
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			reg := newRegistry()
			jc, err := a.newJournalConsumer(c, st, reg, maxMessages)
			if err != nil {
				return err
			}
			return a.runWithMetrics(cmd.Context(), metricsAddr, reg, st, []role{{name: roleJournal, run: jc.Run}})
		},
	}
	cmd.Flags().IntVarP(&maxMessages, "max-messages", "m", 0, "stop after `N` messages (0: never)")
	cmd.Flags().StringVar(&metricsAddr, "metrics-listen", "", "serve Prometheus metrics at http://`ADDRESS`/metrics")
	return cmd
}

// newJournalConsumer builds the journal client of the configuration's
// journal section.
func (a *app) newJournalConsumer(c config.Config, st store.Store, reg prometheus.Registerer, maxMessages int) (*journal.Consumer, error) {
	j := c.Journal
	if !j.Enabled() {
		return nil, errors.New("journal.brokers: not set: name the Kafka brokers of the journal in the journal section of the configuration")
	}
	cfg := journal.Config{Brokers: j.Brokers, Topic: j.Prefix + "." + journal.ObjectType, Group: j.GroupID,
		Reset: j.AutoOffsetReset, BatchSize: j.BatchSize, MaxMessages: maxMessages,
		Horizon: feedback.Horizon{Clock: a.env.Clock, MaxFuture: time.Duration(c.Results.MaxFuture)},
		Logger:  a.log.With("role", roleJournal), Metrics: journal.NewMetrics(reg)}
	if j.SASL.Username != "" {
		cfg.SASL = &journal.SCRAM{User: j.SASL.Username, Password: j.SASL.Password}
	}
	if j.TLS.Enabled {
		t, err := journalTLS(j.TLS)
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	return journal.New(st, cfg)
}

// journalTLS builds the TLS configuration of the journal's connections.
func journalTLS(c config.JournalTLS) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("journal.tls.ca_file: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("journal.tls.ca_file: %s holds no PEM certificate", c.CAFile)
		}
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("journal.tls.cert_file: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}
