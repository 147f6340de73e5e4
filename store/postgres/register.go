package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

func init() {
	d := store.Driver{Capabilities: (*Store)(nil).Capabilities(), Examples: []string{"postgres://user@host/db"},
		Validate: func(url string) error {
			_, err := parseConfig(url)
			return err
		},
		Open: func(ctx context.Context, url string, opts store.Options) (store.MigratingStore, error) {
			s, err := Open(ctx, url, opts)
			if err != nil {
				return nil, err
			}
			return s, nil
		}}
	store.Register("postgres", d)
	store.Register("postgresql", d)
}

// Capabilities tells that a PostgreSQL store serves any number of
// processes.
func (*Store) Capabilities() store.Capabilities {
	return store.Capabilities{}
}

// parseConfig reads the pool's configuration from a postgres:// URL, without
// connecting.
func parseConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, revisit.Invalidf("store", "bad PostgreSQL URL: %v", err)
	}
	return cfg, nil
}
