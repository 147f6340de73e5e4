package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// The switch of the search of origins by URL (store.URLSearchSwitch,
// migration 00030): origin_url_search holds its state, which recordings
// read in their statement (they append to origin_url_backlog unless it is
// off), IndexOriginURLs before it moves anything, and OriginsSearch before
// it reads. Turning it on or off locks the state's row, so that two
// switches take turns.

// URLSearchStatus returns the state of the search and the disk space of
// origin_url and origin_url_backlog, with their indexes.
func (s *Store) URLSearchStatus(ctx context.Context) (store.URLSearchStatus, error) {
	st := store.URLSearchStatus{Own: true}
	err := s.pool.QueryRow(ctx, `SELECT state,
		pg_total_relation_size('origin_url') + pg_total_relation_size('origin_url_backlog') FROM origin_url_search`).
		Scan(&st.State, &st.Bytes)
	return st, translate(wrap(err, "read the state of the URL search"))
}

// SetURLSearch turns the search on (urlSearchOn) or off (urlSearchOff).
func (s *Store) SetURLSearch(ctx context.Context, on bool) (bool, error) {
	if on {
		return s.urlSearchOn(ctx)
	}
	return s.urlSearchOff(ctx)
}

// urlSearchOff sets the state off, drops the trigram index and empties
// origin_url and its backlog, in one transaction: nothing is done, or all
// of it. TRUNCATE waits for the recordings under way and holds the next
// ones until the commit, after which they see the state off: none of them
// leaves a URL in the emptied backlog.
func (s *Store) urlSearchOff(ctx context.Context) (bool, error) {
	var changed bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		state, err := lockURLSearch(ctx, tx)
		changed = err == nil && state != store.URLSearchOff
		if !changed {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE origin_url_search SET state = 'off';
			DROP INDEX IF EXISTS origin_url_trigram;
			TRUNCATE origin_url, origin_url_backlog`)
		return err
	})
	return changed, translate(wrap(err, "turn the URL search off"))
}

// urlSearchOn turns the search on in two transactions. The first sets the
// state building once the recordings under way have committed (its lock
// on the backlog waits for them and holds the next ones until it
// commits): every recording after it appends its new URLs to the
// backlog, every one before it is seen by the copy. The second copies
// every listed URL into origin_url, builds its indexes and sets the state
// on: until then, searches are refused and the backlog waits. A search
// left building (an interrupted `on`) is finished by the next.
func (s *Store) urlSearchOn(ctx context.Context) (bool, error) {
	var changed bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		state, err := lockURLSearch(ctx, tx)
		changed = err == nil && state != store.URLSearchOn
		if !changed {
			return err
		}
		if state == store.URLSearchOff {
			_, err = tx.Exec(ctx, `LOCK TABLE origin_url_backlog IN SHARE MODE;
				UPDATE origin_url_search SET state = 'building'`)
		}
		return err
	})
	if err != nil || !changed {
		return changed, translate(wrap(err, "turn the URL search on"))
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		state, err := lockURLSearch(ctx, tx)
		switch {
		case err != nil || state == store.URLSearchOn:
			return err
		case state == store.URLSearchOff:
			return revisit.Errorf(revisit.CodeConflict, "the URL search was turned off while it was being turned on")
		}
		_, err = tx.Exec(ctx, buildOriginURL)
		return err
	})
	return changed, translate(wrap(err, "build the URL search's index"))
}

// buildOriginURL fills origin_url with every listed URL and builds its
// primary key and trigram index as migrations 00022 and 00025 left them,
// then sets the search on. origin_url holds no URL unless the search is
// on (off emptied it, and IndexOriginURLs moves nothing into it
// meanwhile), but an interrupted build leaves the rows it copied behind,
// dead: TRUNCATE gives the copy new, empty files. As in migration 00022,
// the key is built after the copy, in one pass: kept during the copy, it
// took twice as long at 100,000 URLs.
const buildOriginURL = `TRUNCATE origin_url;
	ALTER TABLE origin_url DROP CONSTRAINT origin_url_pkey;
	INSERT INTO origin_url SELECT DISTINCT url FROM listed_origin_all ORDER BY url;
	ALTER TABLE origin_url ADD PRIMARY KEY (url);
	CREATE INDEX origin_url_trigram ON origin_url USING gin (url gin_trgm_ops) WITH (gin_pending_list_limit = 131072);
	UPDATE origin_url_search SET state = 'on'`

// lockURLSearch returns the state of the search, its row locked until the
// end of tx.
func lockURLSearch(ctx context.Context, tx pgx.Tx) (store.URLSearchState, error) {
	var state store.URLSearchState
	err := tx.QueryRow(ctx, "SELECT state FROM origin_url_search FOR UPDATE").Scan(&state)
	return state, err
}

// urlSearchState returns the state of the search.
func urlSearchState(ctx context.Context, q querier) (store.URLSearchState, error) {
	var state store.URLSearchState
	err := q.QueryRow(ctx, "SELECT state FROM origin_url_search").Scan(&state)
	return state, err
}

// searchRefusal returns the error of a search when the search is not on,
// nil when it is.
func searchRefusal(state store.URLSearchState) error {
	switch state {
	case store.URLSearchOn:
		return nil
	case store.URLSearchBuilding:
		return revisit.Errorf(revisit.CodeUnavailable, "the search of origins by URL is being turned on on this store: "+
			"search again once `revisit db search on` has built its index (if that command was interrupted, run it again)")
	}
	return revisit.Errorf(revisit.CodeUnavailable, "the search of origins by URL is off on this store: "+
		"`revisit db search on` builds its index")
}
