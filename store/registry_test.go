package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	_ "github.com/revisit-sched/revisit/store/postgres"
	_ "github.com/revisit-sched/revisit/store/sqlite"
)

// TestValidateURL checks each driver's verdict on store URLs, and that
// opening a URL it refuses gives the same error, connecting to nothing.
func TestValidateURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ url, want string }{
		{url: "sqlite:///abs/revisit.db"},
		{url: "sqlite://rel/revisit.db"},
		{url: "postgres://revisit:secret@db.example.org/revisit?sslmode=verify-full"},
		{url: "postgresql://db.example.org:5433/revisit?connect_timeout=5"},
		{"", `store: missing: a store URL (postgres://user@host/db or sqlite:///abs/file.db or sqlite://rel/file.db)`},
		{"revisit.db", `store: "revisit.db" is not a store URL`},
		{"postgres://revisit:secret@db:port/revisit", `store: "postgres://xxxxx@db:port/revisit" is not a store URL`},
		{"mysql://db/revisit", `store: unknown store scheme "mysql" in "mysql://db/revisit" (postgres://user@host/db or sqlite://`},
		{"sqlite://", `store: "sqlite://" names no file (sqlite:///abs/file.db or sqlite://rel/file.db)`},
		{"sqlite:///abs/revisit.db#main", `store: "sqlite:///abs/revisit.db#main": a SQLite store URL has no fragment`},
		{"sqlite://revisit.db?mode=ro", `store: "sqlite://revisit.db?mode=ro": parameter "mode" is not supported: ` +
			`the SQLite store opens its file read-write`},
		{"sqlite://revisit.db?cache=shared&mode=rw", `store: "sqlite://revisit.db?cache=shared&mode=rw": ` +
			`parameter "cache" is not supported: a SQLite store URL takes no parameter`},
		{"sqlite://revisit.db?", `store: "sqlite://revisit.db?": a SQLite store URL takes no parameter`},
		{"postgres://revisit:secret@db/revisit?sslmode=sometimes", "store: bad PostgreSQL URL: cannot parse " +
			"`postgres://revisit:xxxxx@db/revisit?sslmode=sometimes`: failed to configure TLS (sslmode is invalid)"},
		{"postgresql://db/revisit?connect_timeout=soon", "store: bad PostgreSQL URL: cannot parse " +
			"`postgresql://db/revisit?connect_timeout=soon`: invalid connect_timeout"},
	} {
		err := store.ValidateURL(c.url)
		if c.want == "" {
			require.NoError(t, err, c.url)
			continue
		}
		require.ErrorContains(t, err, c.want, c.url)
		require.Equal(t, revisit.CodeInvalid, revisit.Code(err), c.url)
		require.NotContains(t, err.Error(), "secret", "the password is redacted")
		_, openErr := store.Open(context.Background(), c.url, store.Options{})
		require.EqualError(t, openErr, err.Error(), "Open gives ValidateURL's error: %s", c.url)
	}
}

// TestCapabilities checks that the registry and the stores it opens tell
// the same capabilities: the SQLite store serves a single process.
func TestCapabilities(t *testing.T) {
	t.Parallel()
	url := "sqlite://" + filepath.Join(t.TempDir(), "revisit.db")
	caps, err := store.CapabilitiesOf(url)
	require.NoError(t, err)
	require.True(t, caps.SingleProcess)
	st, err := store.Open(context.Background(), url, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	require.Equal(t, caps, st.Capabilities())

	caps, err = store.CapabilitiesOf("postgres://db.example.org/revisit")
	require.NoError(t, err)
	require.False(t, caps.SingleProcess)

	_, err = store.CapabilitiesOf("sqlite://revisit.db?mode=ro")
	require.ErrorContains(t, err, `parameter "mode"`)
}

// TestRedact checks that the one redactor masks every password of the
// store and broker URLs, also of a URL that does not parse, and leaves the
// rest as written.
func TestRedact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ url, want string }{
		{"postgres://revisit:secret@db/revisit?sslmode=disable", "postgres://revisit:xxxxx@db/revisit?sslmode=disable"},
		{"postgresql://revisit@db/revisit?password=secret&sslmode=disable",
			"postgresql://revisit@db/revisit?password=xxxxx&sslmode=disable"},
		{"postgres://db/revisit?sslpassword=secret", "postgres://db/revisit?sslpassword=xxxxx"},
		{"postgres://revisit:secret@db:port/revisit", "postgres://xxxxx@db:port/revisit"},
		{"postgres://db:port/revisit?password=secret", "postgres://db:port/revisit?password=xxxxx"},
		{"sqlite://user:secret@revisit.db", "sqlite://user:xxxxx@revisit.db"},
		{"amqp://guest:secret@rabbitmq:5672/", "amqp://guest:xxxxx@rabbitmq:5672/"},
		{"guest:secret@host", "xxxxx@host"},
		{"sqlite:///abs/revisit.db", "sqlite:///abs/revisit.db"},
		{"postgres://revisit@db/revisit?sslmode=disable", "postgres://revisit@db/revisit?sslmode=disable"},
		{"embedded", "embedded"},
	} {
		require.Equal(t, c.want, store.Redact(c.url), c.url)
	}
}
