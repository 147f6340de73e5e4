package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit/store"
)

// IndexOriginURLs moves up to max of the URLs that recordings appended to
// origin_url_backlog into origin_url, where searches find them, and
// returns how many it moved (migration 00025). The move inserts them in
// order, then merges the trigram index's pending list in one pass, in the
// same transaction: a search sees a URL once it is in the index's body.
// Concurrent moves take different URLs (SKIP LOCKED). A move that empties
// the backlog vacuums it, so that the next ones do not read its dead rows.
//
// Unless the search is on (urlsearch.go), nothing is moved: the state is
// read first, so that a move does not wait for the index that `revisit db
// search on` builds, and again by the move's statement, whose snapshot
// follows the locks it waits for, so that what a switch did meanwhile is
// seen.
func (s *Store) IndexOriginURLs(ctx context.Context, max int) (int, error) {
	if max <= 0 {
		return 0, nil
	}
	var moved int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if state, err := urlSearchState(ctx, tx); err != nil || state != store.URLSearchOn {
			return err
		}
		if err := tx.QueryRow(ctx, indexOriginURLs, max).Scan(&moved); err != nil || moved == 0 {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT gin_clean_pending_list('origin_url_trigram')")
		return err
	})
	if err != nil {
		return 0, translate(wrap(err, "index recorded URLs for search"))
	}
	if moved > 0 && moved < max {
		_, err = s.pool.Exec(ctx, "VACUUM origin_url_backlog")
	}
	return moved, translate(wrap(err, "vacuum the URLs indexed for search"))
}

// indexOriginURLs is IndexOriginURLs' move of $1 URLs at most.
const indexOriginURLs = `
	WITH moved AS (
		DELETE FROM origin_url_backlog
		WHERE (SELECT state FROM origin_url_search) = 'on'
			AND ctid = ANY(ARRAY(SELECT ctid FROM origin_url_backlog LIMIT $1 FOR UPDATE SKIP LOCKED))
		RETURNING url
	), indexed AS (
		INSERT INTO origin_url (url) SELECT DISTINCT url FROM moved ORDER BY url ON CONFLICT DO NOTHING
	)
	SELECT count(*) FROM moved`
