package sqlite

import (
	"context"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

func init() {
	store.Register("sqlite", store.Driver{AutoMigrate: true,
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

// PathFromURL returns the file of a sqlite:// URL: sqlite:///abs/file.db is
// absolute, sqlite://file.db and sqlite://dir/file.db are relative to the
// current directory.
func PathFromURL(url string) (string, error) {
	path, ok := strings.CutPrefix(url, "sqlite://")
	if !ok || path == "" || strings.ContainsAny(path, "?#") {
		return "", revisit.Invalidf("store", "%q is not a SQLite store URL (sqlite:///abs/file.db or sqlite://file.db)", url)
	}
	return path, nil
}
