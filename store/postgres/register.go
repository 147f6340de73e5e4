package postgres

import (
	"context"

	"github.com/revisit-sched/revisit/store"
)

func init() {
	d := store.Driver{Open: func(ctx context.Context, url string, opts store.Options) (store.MigratingStore, error) {
		s, err := Open(ctx, url, opts)
		if err != nil {
			return nil, err
		}
		return s, nil
	}}
	store.Register("postgres", d)
	store.Register("postgresql", d)
}
