package config

import (
	"fmt"
	"strings"
)

// Journal configures the journal client (revisit journal-client, and the
// journal role of revisit serve): visit results read from the Software
// Heritage journal's Kafka topic PREFIX.origin_visit_status.
//
//	journal:
//	  brokers: [kafka1.example.org:9092]
//	  prefix: swh.journal.objects
//	  group_id: revisit.journal_client
//	  auto_offset_reset: earliest   # or latest: where a new group starts
//	  batch_size: 200
//	  sasl: {username: revisit, password: secret}   # SCRAM-SHA-512
//	  tls: {enabled: true, ca_file: /etc/ssl/kafka-ca.pem}
//
// The group is revisit's own, not upstream's swh.scheduler.journal_client,
// so that both clients can read the journal side by side.
type Journal struct {
	// Brokers are the Kafka bootstrap brokers (host:port); none disables
	// the journal client.
	Brokers []string `yaml:"brokers"`
	// Prefix is the prefix of the journal's topics.
	Prefix string `yaml:"prefix"`
	// GroupID is the consumer group.
	GroupID string `yaml:"group_id"`
	// AutoOffsetReset is where a partition without committed offset starts:
	// earliest or latest.
	AutoOffsetReset string `yaml:"auto_offset_reset"`
	// BatchSize bounds the messages processed and committed together.
	BatchSize int `yaml:"batch_size"`
	// SASL logs in to the brokers.
	SASL JournalSASL `yaml:"sasl"`
	// TLS encrypts the connections to the brokers.
	TLS JournalTLS `yaml:"tls"`
}

// JournalSASL is the SASL login to the journal's brokers; it is used when
// Username is set.
type JournalSASL struct {
	// Mechanism is SCRAM-SHA-512, the one production uses.
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	Password  string `yaml:"password"`
}

// JournalTLS is the TLS of the connections to the journal's brokers.
type JournalTLS struct {
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM file of the authorities to trust; "" trusts the
	// system's.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are a PEM client certificate and its key, for
	// brokers that ask for one.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName is the name to check the brokers' certificates against;
	// "" uses each broker's host.
	ServerName string `yaml:"server_name"`
}

// The values of journal.auto_offset_reset and journal.sasl.mechanism.
var (
	JournalOffsetResets  = []string{"earliest", "latest"}
	JournalSASLMechanism = "SCRAM-SHA-512"
)

func defaultJournal() Journal {
	return Journal{Prefix: "swh.journal.objects", GroupID: "revisit.journal_client", AutoOffsetReset: "earliest",
		BatchSize: 200, SASL: JournalSASL{Mechanism: JournalSASLMechanism}}
}

// Enabled reports whether the journal client is configured.
func (j Journal) Enabled() bool { return len(j.Brokers) > 0 }

// validate checks the section; errors name the key.
func (j Journal) validate() error {
	for i, b := range j.Brokers {
		if b == "" || strings.ContainsAny(b, " /") {
			return fmt.Errorf("journal.brokers[%d]: %q is not host:port", i, b)
		}
	}
	switch {
	case j.Prefix == "":
		return fmt.Errorf("journal.prefix: missing")
	case j.GroupID == "":
		return fmt.Errorf("journal.group_id: missing")
	case j.AutoOffsetReset != "earliest" && j.AutoOffsetReset != "latest":
		return fmt.Errorf("journal.auto_offset_reset: %q is not one of %s", j.AutoOffsetReset, strings.Join(JournalOffsetResets, ", "))
	case j.BatchSize <= 0:
		return fmt.Errorf("journal.batch_size: %d is not positive", j.BatchSize)
	case j.SASL.Mechanism != JournalSASLMechanism:
		return fmt.Errorf("journal.sasl.mechanism: %q is not supported (only %s)", j.SASL.Mechanism, JournalSASLMechanism)
	case j.SASL.Username == "" && j.SASL.Password != "":
		return fmt.Errorf("journal.sasl.username: missing (journal.sasl.password is set)")
	case j.SASL.Username != "" && j.SASL.Password == "":
		return fmt.Errorf("journal.sasl.password: missing (journal.sasl.username is set)")
	case (j.TLS.CertFile == "") != (j.TLS.KeyFile == ""):
		return fmt.Errorf("journal.tls: cert_file and key_file go together")
	case !j.TLS.Enabled && (j.TLS.CAFile != "" || j.TLS.CertFile != "" || j.TLS.ServerName != ""):
		return fmt.Errorf("journal.tls.enabled: false, but other tls keys are set")
	}
	return nil
}
