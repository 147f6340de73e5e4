package store

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/revisit-sched/revisit"
)

// MigratingStore is a Store that also manages its schema.
type MigratingStore interface {
	Store
	Migrator
}

// Driver opens the stores of some URL schemes.
type Driver struct {
	// Open connects to the store the URL names.
	Open func(ctx context.Context, url string, opts Options) (MigratingStore, error)
	// AutoMigrate is set for drivers whose Open applies pending migrations
	// itself (the embedded SQLite default).
	AutoMigrate bool
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// Register makes a driver available for a URL scheme. Driver packages call
// it from init; a program imports the drivers it supports.
func Register(scheme string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[scheme]; dup {
		panic("store: driver registered twice for scheme " + scheme)
	}
	drivers[scheme] = d
}

func driver(rawURL string) (Driver, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return Driver{}, revisit.Invalidf("store", "%q is not a store URL (postgres://… or sqlite:///path/file.db)", rawURL)
	}
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[u.Scheme]
	if !ok {
		return Driver{}, revisit.Invalidf("store", "unknown store scheme %q (known: %s)", u.Scheme, strings.Join(schemesLocked(), ", "))
	}
	return d, nil
}

// Open opens the store the URL names and checks that its schema is current:
// a PostgreSQL store whose schema is behind is an error that says to run
// `revisit db migrate`; the embedded SQLite store migrates itself.
func Open(ctx context.Context, rawURL string, opts Options) (Store, error) {
	d, err := driver(rawURL)
	if err != nil {
		return nil, err
	}
	s, err := d.Open(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	current, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	if current != latest {
		s.Close()
		return nil, revisit.Errorf(revisit.CodeUnavailable,
			"the store's schema is at version %d, this revisit needs %d: run `revisit db migrate`", current, latest)
	}
	return s, nil
}

// Migrate applies the pending migrations of the store at the URL and
// returns the schema versions before and after.
func Migrate(ctx context.Context, rawURL string) (from, to int64, err error) {
	err = withStore(ctx, rawURL, Options{}, func(s MigratingStore) error {
		if from, _, err = s.SchemaVersion(ctx); err != nil {
			return err
		}
		if err := s.Migrate(ctx); err != nil {
			return err
		}
		to, _, err = s.SchemaVersion(ctx)
		return err
	})
	return from, to, err
}

// SchemaStatus returns the applied and latest schema versions of the store
// at the URL.
func SchemaStatus(ctx context.Context, rawURL string) (current, latest int64, err error) {
	err = withStore(ctx, rawURL, Options{MustExist: true}, func(s MigratingStore) error {
		current, latest, err = s.SchemaVersion(ctx)
		return err
	})
	return current, latest, err
}

// SettingsAdvice returns what the store at the URL says of its server's
// settings (SettingsAdvisor), whatever its schema version: none for a
// store that gives no advice.
func SettingsAdvice(ctx context.Context, rawURL string) (advice []string, err error) {
	err = withStore(ctx, rawURL, Options{}, func(s MigratingStore) error {
		if adv, ok := s.(SettingsAdvisor); ok {
			advice, err = adv.SettingsAdvice(ctx)
		}
		return err
	})
	return advice, err
}

// withStore calls fn with the store at the URL, opened with opts whatever
// its schema version, and closes it.
func withStore(ctx context.Context, rawURL string, opts Options, fn func(MigratingStore) error) error {
	d, err := driver(rawURL)
	if err != nil {
		return err
	}
	s, err := d.Open(ctx, rawURL, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := fn(s); err != nil {
		return fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	return nil
}

// Redact returns the URL with any password replaced, for messages and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func schemesLocked() []string {
	s := make([]string, 0, len(drivers))
	for k := range drivers {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}
