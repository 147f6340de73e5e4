package config

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	_ "github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/sqlite"
)

// The fake driver takes fake:// URLs but fake://refused, which its Validate
// refuses: config knows of it only through the registry.
func init() {
	store.Register("fake", store.Driver{
		Validate: func(url string) error {
			if url == "fake://refused" {
				return revisit.Invalidf("store", "the fake driver refuses %q", url)
			}
			return nil
		},
		Open: func(ctx context.Context, url string, opts store.Options) (store.MigratingStore, error) {
			return nil, revisit.Errorf(revisit.CodeUnavailable, "the fake driver opens nothing")
		}})
}

// TestStoreURL checks that the store setting is valid exactly when the
// store registry takes its URL, and that a refusal is the registry's
// error, with where the setting came from.
func TestStoreURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url   string
		valid bool
	}{
		{"sqlite:///abs/revisit.db", true},
		{"sqlite://rel/revisit.db", true},
		{"postgres://revisit:secret@db/revisit?sslmode=disable", true},
		{"postgresql://db:5433/revisit", true},
		{"fake://anything", true},
		{"fake://refused", false},
		{"", false},
		{"revisit.db", false},
		{"mysql://db/revisit", false},
		{"sqlite://", false},
		{"sqlite://revisit.db?mode=ro", false},
		{"sqlite://revisit.db?_pragma=busy_timeout(1)", false},
		{"postgres://revisit:secret@db/revisit?sslmode=sometimes", false},
		{"postgres://revisit:secret@db:port/revisit", false},
	} {
		_, err := Load(Sources{Flags: map[string]string{"store": c.url}})
		want := store.ValidateURL(c.url)
		if c.valid {
			require.NoError(t, want, c.url)
			require.NoError(t, err, c.url)
			continue
		}
		require.Error(t, want, c.url)
		require.EqualError(t, err, want.Error()+" (set by the command line)", c.url)
		require.Equal(t, revisit.CodeInvalid, revisit.Code(err), c.url)
		require.NotContains(t, err.Error(), "secret", "the password is redacted")
	}
}

// TestDefaultStore checks that the default store is the file
// DefaultStoreFile, as the SQLite driver reads the URL.
func TestDefaultStore(t *testing.T) {
	t.Parallel()
	path, err := sqlite.PathFromURL(DefaultStore)
	require.NoError(t, err)
	require.Equal(t, DefaultStoreFile, path)
}
