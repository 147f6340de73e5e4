package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	require.NoError(t, err)
	require.Equal(t, "sqlite://revisit.db", cfg.Store)
	require.Equal(t, "info", cfg.Log.Level)
	require.Equal(t, "text", cfg.Log.Format)
	require.True(t, cfg.IsDefault("store"))
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "revisit.yaml", "store: sqlite:///from/file.db\nlog:\n  level: warn\n  format: json\n")

	cfg, err := Load(Sources{File: file})
	require.NoError(t, err)
	require.Equal(t, "sqlite:///from/file.db", cfg.Store)
	require.Equal(t, "warn", cfg.Log.Level)
	require.Equal(t, "json", cfg.Log.Format)
	require.Equal(t, "config file "+file, cfg.Source("log.level"))

	env := []string{"REVISIT_STORE=postgres://env/db", "REVISIT_LOG_LEVEL=error", "PATH=/bin", "HOME=/x"}
	cfg, err = Load(Sources{File: file, Environ: env})
	require.NoError(t, err)
	require.Equal(t, "postgres://env/db", cfg.Store)
	require.Equal(t, "error", cfg.Log.Level)
	require.Equal(t, "json", cfg.Log.Format, "the file still sets what the environment does not")
	require.Equal(t, "REVISIT_LOG_LEVEL", cfg.Source("log.level"))

	cfg, err = Load(Sources{File: file, Environ: env, Flags: map[string]string{"log.level": "debug"}})
	require.NoError(t, err)
	require.Equal(t, "debug", cfg.Log.Level)
	require.Equal(t, "postgres://env/db", cfg.Store)
	require.Equal(t, "the command line", cfg.Source("log.level"))
	require.False(t, cfg.IsDefault("store"))
}

func TestConfigFileFromEnvironment(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "r.yaml", "log:\n  level: debug\n")
	cfg, err := Load(Sources{Environ: []string{"REVISIT_CONFIG=" + file}})
	require.NoError(t, err)
	require.Equal(t, "debug", cfg.Log.Level)

	// --config wins over REVISIT_CONFIG.
	other := writeFile(t, "o.yaml", "log:\n  level: warn\n")
	cfg, err = Load(Sources{File: other, Environ: []string{"REVISIT_CONFIG=" + file}})
	require.NoError(t, err)
	require.Equal(t, "warn", cfg.Log.Level)
}

func TestEmptyFileAndSection(t *testing.T) {
	t.Parallel()
	for _, content := range []string{"", "# nothing\n", "log:\n"} {
		cfg, err := Load(Sources{File: writeFile(t, "e.yaml", content)})
		require.NoError(t, err, "%q", content)
		require.Equal(t, Default().Log, cfg.Log)
	}
}

func TestFileErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ content, want string }{
		{"stroe: sqlite://x.db\n", `revisit.yaml: unknown key "stroe" (line 1)`},
		{"log:\n  levl: debug\n", `unknown key "log.levl" (line 2)`},
		{"log: debug\n", `log: want a mapping, got "debug"`},
		{"store: 3\n", `store: want a string (quote it), got "3"`},
		{"store: [a]\n", `store: want a string, got a list`},
		{"log:\n  level: [debug]\n", `log.level: want a string, got a list`},
		{"log:\n  level: verbose\n", `log.level: "verbose" is not one of debug, info, warn, error (set by config file`},
		{"log:\n  format: xml\n", `log.format: "xml" is not one of text, json`},
		{"store: mysql://x\n", `store: unknown store scheme "mysql" in "mysql://x" (`},
		{"store: 'a: b\n", `not valid YAML`},
		{"- store\n", `(document): want a mapping, got a list`},
	} {
		_, err := Load(Sources{File: writeFile(t, "revisit.yaml", c.content)})
		require.Error(t, err, c.content)
		require.Contains(t, err.Error(), c.want, c.content)
		require.NotContains(t, err.Error(), "\n")
	}
}

func TestMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(Sources{File: "/nonexistent/revisit.yaml"})
	require.EqualError(t, err, "config file /nonexistent/revisit.yaml: no such file or directory")
}

func TestEnvironmentErrors(t *testing.T) {
	t.Parallel()
	_, err := Load(Sources{Environ: []string{"REVISIT_STROE=sqlite://x.db"}})
	require.ErrorContains(t, err, "unknown environment variable REVISIT_STROE (known: REVISIT_CONFIG, REVISIT_API_LISTEN, REVISIT_BROKER, REVISIT_EMBEDDED_KEEP_DONE, REVISIT_FIRST_VISITS_INTERVAL, REVISIT_JOURNAL_AUTO_OFFSET_RESET, REVISIT_JOURNAL_BATCH_SIZE, REVISIT_JOURNAL_GROUP_ID, REVISIT_JOURNAL_PREFIX, REVISIT_JOURNAL_SASL_MECHANISM, REVISIT_JOURNAL_SASL_PASSWORD, REVISIT_JOURNAL_SASL_USERNAME, REVISIT_JOURNAL_TLS_CA_FILE, REVISIT_JOURNAL_TLS_CERT_FILE, REVISIT_JOURNAL_TLS_ENABLED, REVISIT_JOURNAL_TLS_KEY_FILE, REVISIT_JOURNAL_TLS_SERVER_NAME, REVISIT_LOG_FORMAT, REVISIT_LOG_LEVEL, REVISIT_ORCHESTRATOR_GRACE_PERIOD, ")
	require.ErrorContains(t, err, ", REVISIT_STORE)")

	_, err = Load(Sources{Environ: []string{"REVISIT_LOG=debug"}})
	require.ErrorContains(t, err, "unknown environment variable REVISIT_LOG ")

	_, err = Load(Sources{Environ: []string{"REVISIT_LOG_LEVEL=loud"}})
	require.EqualError(t, err, `log.level: "loud" is not one of debug, info, warn, error (set by REVISIT_LOG_LEVEL)`)

	_, err = Load(Sources{Flags: map[string]string{"log.level": "loud"}})
	require.EqualError(t, err, `log.level: "loud" is not one of debug, info, warn, error (set by the command line)`)

	_, err = Load(Sources{Flags: map[string]string{"nope": "x"}})
	require.ErrorContains(t, err, `unknown key "nope"`)
}

func TestKeysAndEnvVars(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"store", "broker", "log.level", "log.format",
		"orchestrator.max_per_round", "orchestrator.min_free_ratio", "orchestrator.queue_full_backoff",
		"orchestrator.queue_poll_interval",
		"orchestrator.no_origins_backoff", "orchestrator.round_jitter", "orchestrator.visit_timeout",
		"orchestrator.lost_retention",
		"orchestrator.lease_ttl", "orchestrator.grace_period", "api.listen",
		"retention.older_than", "retention.interval", "retention.archive_dir", "retention.archive",
		"embedded.keep_done", "results.max_future", "first_visits.interval",
		"journal.prefix", "journal.group_id", "journal.auto_offset_reset", "journal.batch_size", "journal.sasl.mechanism",
		"journal.sasl.username", "journal.sasl.password", "journal.tls.enabled", "journal.tls.ca_file", "journal.tls.cert_file",
		"journal.tls.key_file", "journal.tls.server_name"}, Keys())
	require.Equal(t, "REVISIT_LOG_LEVEL", EnvVar("log.level"))
	// Two keys must never share a variable.
	seen := map[string]string{}
	for _, k := range Keys() {
		v := EnvVar(k)
		require.NotContains(t, seen, v, "keys %s and %s", seen[v], k)
		seen[v] = k
	}
}

func TestLogger(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	l := NewLogger(&b, Log{Level: "warn", Format: "json"})
	l.Info("hidden")
	l.Warn("shown", "k", 1)
	require.NotContains(t, b.String(), "hidden")
	require.Contains(t, b.String(), `"msg":"shown"`)
	require.NotNil(t, Logger(Default()))
}

type nested struct {
	Name     string              `yaml:"name"`
	Every    Duration            `yaml:"every"`
	Weight   int                 `yaml:"weight"`
	Ratio    float64             `yaml:"ratio"`
	On       bool                `yaml:"on"`
	Opt      *int                `yaml:"opt"`
	Policies map[string][]policy `yaml:"policies"`
}

type policy struct {
	Policy string `yaml:"policy"`
	Weight int    `yaml:"weight"`
}

func TestDecodeYAML(t *testing.T) {
	t.Parallel()
	var v nested
	v.Name = "default"
	err := DecodeYAML([]byte(`
every: 1 day, 12:00:00
weight: 3
ratio: 1
on: true
opt: 7
policies:
  git:
    - {policy: a, weight: 49}
    - {policy: b, weight: 2}
`), &v)
	require.NoError(t, err)
	require.Equal(t, "default", v.Name)
	require.Equal(t, "1d12h", v.Every.String())
	require.Equal(t, 3, v.Weight)
	require.Equal(t, 1.0, v.Ratio)
	require.True(t, v.On)
	require.Equal(t, 7, *v.Opt)
	require.Equal(t, []policy{{"a", 49}, {"b", 2}}, v.Policies["git"])

	for _, c := range []struct{ doc, want string }{
		{"weight: 1.5", `weight: want an integer, got "1.5"`},
		{"weight: x", `weight: want an integer, got "x"`},
		{"on: 1", `on: want true or false, got "1"`},
		{"ratio: x", `ratio: want a number, got "x"`},
		{"every: soon", `every: "soon" is not a duration`},
		{"policies:\n  git:\n    - {policy: a, wieght: 2}", `unknown key "policies.git[0].wieght" (line 3)`},
		{"policies:\n  git: {policy: a}", `policies.git: want a list, got a mapping`},
	} {
		var v nested
		err := DecodeYAML([]byte(c.doc), &v)
		require.ErrorContains(t, err, c.want, c.doc)
	}
}

func TestBrokerURL(t *testing.T) {
	cfg, err := Load(Sources{Environ: []string{"REVISIT_BROKER=amqp://guest:guest@127.0.0.1:5672/"}})
	require.NoError(t, err)
	require.Equal(t, "amqp://guest:guest@127.0.0.1:5672/", cfg.Broker)
	require.Equal(t, "embedded", Default().Broker, "the embedded broker is the default")
	cfg, err = Load(Sources{Flags: map[string]string{"broker": "embedded"}})
	require.NoError(t, err)
	require.Equal(t, "embedded", cfg.Broker)
	for _, bad := range []string{"redis://x:6379", "amqp://", "guest:secret@host", "", "Embedded"} {
		_, err := Load(Sources{Flags: map[string]string{"broker": bad}})
		require.ErrorContains(t, err, "broker:", bad)
		require.NotContains(t, err.Error(), "secret", "the password is redacted")
	}
}
