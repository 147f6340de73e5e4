package sqlite

import (
	"context"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// URLSearchStatus says that the search of origins by URL is on, and keeps
// nothing of its own: it reads listed_origin's B-tree on (url,
// visit_type), which the listed origins need anyway.
func (s *Store) URLSearchStatus(context.Context) (store.URLSearchStatus, error) {
	return store.URLSearchStatus{State: store.URLSearchOn}, nil
}

// SetURLSearch leaves the search on: turning it on changes nothing, and
// turning it off is refused, there being no index of its own to drop.
func (s *Store) SetURLSearch(_ context.Context, on bool) (bool, error) {
	if on {
		return false, nil
	}
	return false, revisit.Errorf(revisit.CodeInvalid, "the embedded SQLite store searches origins by URL in the listed "+
		"origins' own index on (url, visit_type), which they need anyway: there is no search index to turn off")
}
