package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations returns the embedded migrations of the SQLite schema, named
// like their PostgreSQL counterparts (same version numbers).
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		// The directory is embedded at build time; Sub cannot fail on it.
		panic(err)
	}
	return sub
}

// provider returns the goose provider of the embedded migrations, on the
// writer.
func (s *Store) provider() (*goose.Provider, error) {
	p, err := goose.NewProvider(goose.DialectSQLite3, s.w, Migrations(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrations: %w", err)
	}
	return p, nil
}

// Migrate applies every pending migration.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return translate("migrate", err)
	}
	return nil
}

// SchemaVersion returns the applied version and the newest known one.
func (s *Store) SchemaVersion(ctx context.Context) (current, latest int64, err error) {
	p, err := s.provider()
	if err != nil {
		return 0, 0, err
	}
	current, latest, err = p.GetVersions(ctx)
	if err != nil {
		return 0, 0, translate("schema version", err)
	}
	return current, latest, nil
}
