package sqlite

import (
	"context"
	"net/url"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

func init() {
	store.Register("sqlite", store.Driver{AutoMigrate: true, Capabilities: (*Store)(nil).Capabilities(),
		Examples: examples,
		Validate: func(url string) error {
			_, err := PathFromURL(url)
			return err
		},
		Open: func(ctx context.Context, url string, opts store.Options) (store.MigratingStore, error) {
			path, err := PathFromURL(url)
			if err != nil {
				return nil, err
			}
			s, err := Open(ctx, path, opts)
			if err != nil {
				return nil, err
			}
			return s, nil
		}})
}

// Capabilities tells that one process at a time serves a SQLite store.
func (*Store) Capabilities() store.Capabilities {
	return store.Capabilities{SingleProcess: true}
}

// examples are the forms of a SQLite store URL, an absolute path and a
// relative one, and forms shows them in messages.
var (
	examples = []string{"sqlite:///abs/file.db", "sqlite://rel/file.db"}
	forms    = strings.Join(examples, " or ")
)

// PathFromURL returns the file of a sqlite:// URL: sqlite:///abs/file.db is
// absolute, sqlite://file.db and sqlite://dir/file.db are relative to the
// current directory. The URL takes no parameter: one is an error naming
// it.
func PathFromURL(rawURL string) (string, error) {
	rest, ok := strings.CutPrefix(rawURL, "sqlite://")
	if !ok {
		return "", revisit.Invalidf("store", "%q is not a SQLite store URL (%s)", rawURL, forms)
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery {
		return "", unsupportedParameter(rawURL, query)
	}
	if strings.Contains(path, "#") {
		return "", revisit.Invalidf("store", "%q: a SQLite store URL has no fragment (#…) (%s)", rawURL, forms)
	}
	if path == "" {
		return "", revisit.Invalidf("store", "%q names no file (%s)", rawURL, forms)
	}
	return path, nil
}

// unsupportedParameter is the error of a SQLite store URL with a query,
// naming its first parameter: the store takes none, and opens its file
// read-write whatever a mode parameter says.
func unsupportedParameter(rawURL, query string) error {
	first, _, _ := strings.Cut(query, "&")
	name, _, _ := strings.Cut(first, "=")
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	switch name {
	case "":
		return revisit.Invalidf("store", "%q: a SQLite store URL takes no parameter (%s)", rawURL, forms)
	case "mode":
		return revisit.Invalidf("store", "%q: parameter %q is not supported: the SQLite store opens its file "+
			"read-write (the commands that only read change nothing in it) (%s)", rawURL, name, forms)
	}
	return revisit.Invalidf("store", "%q: parameter %q is not supported: a SQLite store URL takes no parameter (%s)",
		rawURL, name, forms)
}
