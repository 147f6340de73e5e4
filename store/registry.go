package store

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
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

// Driver opens, checks and describes the stores of some URL schemes. It is
// the only interpreter of its schemes' URLs: a program asks the registry
// (ValidateURL, CapabilitiesOf, Open), never the URL's text.
type Driver struct {
	// Validate checks a URL of the driver's scheme without connecting: it
	// returns the error Open would give for a URL that names no store.
	Validate func(url string) error
	// Open connects to the store the URL names.
	Open func(ctx context.Context, url string, opts Options) (MigratingStore, error)
	// AutoMigrate is set for drivers whose Open applies pending migrations
	// itself (the embedded SQLite default).
	AutoMigrate bool
	// Capabilities are those of the driver's stores (Store.Capabilities).
	Capabilities Capabilities
	// Examples are URLs of the driver's forms, for messages.
	Examples []string
}

// Capabilities are what a store's engine can do that its users adapt to.
type Capabilities struct {
	// SingleProcess is set for an engine whose store one process at a time
	// serves (the embedded SQLite file): a second process standing by waits
	// for the first to stop.
	SingleProcess bool
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
	if d.Validate == nil || d.Open == nil {
		panic("store: driver for scheme " + scheme + " without Validate or Open")
	}
	drivers[scheme] = d
}

// ValidateURL checks a store URL without opening it: a driver is
// registered for its scheme and finds nothing wrong in the rest. Its error,
// ErrInvalid naming the field "store", is the one Open would give.
func ValidateURL(rawURL string) error {
	_, err := driver(rawURL)
	return err
}

// CapabilitiesOf returns the capabilities of the store a valid URL names.
func CapabilitiesOf(rawURL string) (Capabilities, error) {
	d, err := driver(rawURL)
	return d.Capabilities, err
}

// driver returns the driver of the URL's scheme once it has validated the
// URL.
func driver(rawURL string) (Driver, error) {
	if rawURL == "" {
		return Driver{}, revisit.Invalidf("store", "missing: a store URL (%s)", examples())
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return Driver{}, revisit.Invalidf("store", "%q is not a store URL (%s)", Redact(rawURL), examples())
	}
	driversMu.RLock()
	d, ok := drivers[u.Scheme]
	driversMu.RUnlock()
	if !ok {
		return Driver{}, revisit.Invalidf("store", "unknown store scheme %q in %q (%s)", u.Scheme, Redact(rawURL), examples())
	}
	if err := d.Validate(rawURL); err != nil {
		return Driver{}, err
	}
	return d, nil
}

// examples lists the registered drivers' example URLs, by scheme.
func examples() string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	schemes := make([]string, 0, len(drivers))
	for k := range drivers {
		schemes = append(schemes, k)
	}
	slices.Sort(schemes)
	var urls []string
	for _, k := range schemes {
		for _, e := range drivers[k].Examples {
			if !slices.Contains(urls, e) {
				urls = append(urls, e)
			}
		}
	}
	return strings.Join(urls, " or ")
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

// Redact returns the URL with its credentials masked, for messages and
// logs: its user's password and the value of a password or sslpassword
// parameter. Of a text that does not parse as a URL with a user where it
// has an @ (guest:secret@host), whatever stands between the scheme and the
// last @ is masked. It serves every URL revisit shows (stores, brokers,
// servers).
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || (u.User == nil && strings.Contains(rawURL, "@")) {
		return redactUnparsed(rawURL)
	}
	q, masking := u.Query(), false
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, masked)
			masking = true
		}
	}
	if masking {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// masked stands for a credential in a redacted URL (as in
// url.URL.Redacted).
const masked = "xxxxx"

// passwordParameter matches a password or sslpassword parameter and its
// value.
var passwordParameter = regexp.MustCompile(`(password=)[^&#]*`)

// redactUnparsed masks, in a text that is not a URL with a user, the values
// of password parameters and whatever stands between the scheme and the
// last @.
func redactUnparsed(s string) string {
	s = passwordParameter.ReplaceAllString(s, "${1}"+masked)
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && i < at {
		start = i + len("://")
	}
	return s[:start] + masked + s[at:]
}
