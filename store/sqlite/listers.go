package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

const listerColumns = "id, name, instance_name, created, updated, current_state, last_listing_finished_at, " +
	"first_visits_queue_prefix, first_visits_scheduled_at"

// ListerGetOrCreate returns the lister of that name and instance, creating
// it if needed; it is idempotent and race-free (insert-or-ignore then read,
// in one write transaction).
func (s *Store) ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error) {
	return s.listerGetOrCreate(ctx, name, instanceName, nil)
}

// ListerGetOrCreateForFirstVisits is ListerGetOrCreate that gives a lister
// it creates that first-visits queue prefix.
func (s *Store) ListerGetOrCreateForFirstVisits(ctx context.Context, name, instanceName, queuePrefix string) (revisit.Lister, error) {
	if err := revisit.ValidateFirstVisitsQueuePrefix(&queuePrefix); err != nil {
		return revisit.Lister{}, err
	}
	return s.listerGetOrCreate(ctx, name, instanceName, &queuePrefix)
}

// listerGetOrCreate returns the lister of that name and instance, creating
// it with that first-visits queue prefix (nil: none) if needed.
func (s *Store) listerGetOrCreate(ctx context.Context, name, instanceName string, queuePrefix *string) (revisit.Lister, error) {
	if err := revisit.ValidateListerName(name, instanceName); err != nil {
		return revisit.Lister{}, err
	}
	var l revisit.Lister
	err := s.write(ctx, "get or create lister "+name, func(tx *sql.Tx) error {
		now := micro(s.now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO lister (id, name, instance_name, created, updated, current_state,
			first_visits_queue_prefix) VALUES (?1, ?2, ?3, ?4, ?4, '{}', ?5) ON CONFLICT (name, instance_name) DO NOTHING`,
			uuid.New(), name, instanceName, now, strPtr(queuePrefix)); err != nil {
			return err
		}
		ls, err := scanListers(tx.QueryContext(ctx, "SELECT "+listerColumns+
			" FROM lister WHERE name = ?1 AND instance_name = ?2", name, instanceName))
		if err != nil {
			return err
		}
		if len(ls) == 0 {
			return sql.ErrNoRows
		}
		l = ls[0]
		return nil
	})
	return l, err
}

// ListerGet returns the lister of that name and instance; ErrNotFound if
// absent.
func (s *Store) ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error) {
	ls, err := query(ctx, s, scanListers, "SELECT "+listerColumns+
		" FROM lister WHERE name = ?1 AND instance_name = ?2", name, instanceName)
	if err != nil {
		return revisit.Lister{}, translate("get lister", err)
	}
	if len(ls) == 0 {
		return revisit.Lister{}, notFound("lister %q (instance %q) not found", name, instanceName)
	}
	return ls[0], nil
}

// ListerUpdate stores CurrentState, LastListingFinishedAt,
// FirstVisitsQueuePrefix and FirstVisitsScheduledAt if the stored Updated
// equals l.Updated (to the microsecond), and returns the lister with its
// new Updated: the clock's now, or one microsecond after the old value if
// the clock has not moved past it. ErrStaleData if the lister changed since
// the caller read it, ErrNotFound if it does not exist.
func (s *Store) ListerUpdate(ctx context.Context, l revisit.Lister) (revisit.Lister, error) {
	state, err := jsonObject(l.CurrentState)
	if err != nil {
		return revisit.Lister{}, err
	}
	if err := revisit.ValidateFirstVisitsQueuePrefix(l.FirstVisitsQueuePrefix); err != nil {
		return revisit.Lister{}, err
	}
	old := revisit.Microsecond(l.Updated)
	var out revisit.Lister
	err = s.write(ctx, "update lister "+l.ID.String(), func(tx *sql.Tx) error {
		updated := s.now()
		if !updated.After(old) {
			updated = old.Add(time.Microsecond)
		}
		ls, err := scanListers(tx.QueryContext(ctx, `UPDATE lister
			SET current_state = ?3, last_listing_finished_at = ?4, updated = ?5,
				first_visits_queue_prefix = ?6, first_visits_scheduled_at = ?7
			WHERE id = ?1 AND updated = ?2 RETURNING `+listerColumns,
			l.ID, micro(old), string(state), microPtr(revisit.MicrosecondPtr(l.LastListingFinishedAt)), micro(updated),
			strPtr(l.FirstVisitsQueuePrefix), microPtr(l.FirstVisitsScheduledAt)))
		if err != nil {
			return err
		}
		if len(ls) == 1 {
			out = ls[0]
			return nil
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM lister WHERE id = ?)", l.ID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return notFound("lister %s not found", l.ID)
		}
		return revisit.Errorf(revisit.CodeStaleData,
			"lister %s was updated since %s; read it again", l.ID, old.Format(time.RFC3339Nano))
	})
	return out, err
}

// ListerList returns every lister, by name and instance name.
func (s *Store) ListerList(ctx context.Context) ([]revisit.Lister, error) {
	ls, err := query(ctx, s, scanListers, "SELECT "+listerColumns+" FROM lister ORDER BY name, instance_name")
	return ls, translate("list listers", err)
}

// ListerGetByIDs returns the listers with those ids that exist, by name and
// instance name.
func (s *Store) ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	if len(ids) == 0 {
		return []revisit.Lister{}, nil
	}
	ls, err := query(ctx, s, scanListers, "SELECT "+listerColumns+
		" FROM lister WHERE id IN (SELECT value FROM json_each(?)) ORDER BY name, instance_name", jsonArray(ids))
	return ls, translate("get listers", err)
}

// scanListers reads the rows of a query returning listerColumns.
func scanListers(rows *sql.Rows, err error) ([]revisit.Lister, error) {
	return collect(rows, err, []revisit.Lister{}, func(rows *sql.Rows) (l revisit.Lister, err error) {
		err = rows.Scan(&l.ID, &l.Name, &l.InstanceName, timeCol{&l.Created}, timeCol{&l.Updated},
			rawJSONCol{&l.CurrentState}, timePtrCol{&l.LastListingFinishedAt},
			&l.FirstVisitsQueuePrefix, timePtrCol{&l.FirstVisitsScheduledAt})
		return l, err
	})
}

// jsonObject returns the compact form of a lister state, which must be a
// JSON object; nil or empty is the empty object.
func jsonObject(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, revisit.Invalidf("current_state", "must be a JSON object")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, revisit.Invalidf("current_state", "must be a JSON object: %v", err)
	}
	return b.Bytes(), nil
}

// jsonArray returns the JSON array of vs, for json_each.
func jsonArray[T any](vs []T) string {
	b, err := json.Marshal(vs)
	if err != nil {
		// Only called with strings, uuids, integers and their arrays,
		// which always marshal.
		return "[]"
	}
	return string(b)
}

// ListersImport writes listers as they are, every field kept
// (store.Store).
func (s *Store) ListersImport(ctx context.Context, ls []revisit.Lister) error {
	if err := batch.ImportedListers(ls); err != nil {
		return err
	}
	return s.write(ctx, fmt.Sprintf("import %d listers", len(ls)), func(tx *sql.Tx) error {
		for i, l := range ls {
			state, err := jsonObject(l.CurrentState)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO lister (`+listerColumns+`) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
				ON CONFLICT (id) DO UPDATE SET name = excluded.name, instance_name = excluded.instance_name,
					created = excluded.created, updated = excluded.updated, current_state = excluded.current_state,
					last_listing_finished_at = excluded.last_listing_finished_at,
					first_visits_queue_prefix = excluded.first_visits_queue_prefix,
					first_visits_scheduled_at = excluded.first_visits_scheduled_at`,
				l.ID, l.Name, l.InstanceName, micro(l.Created), micro(l.Updated), state, nullMicro(l.LastListingFinishedAt),
				strPtr(l.FirstVisitsQueuePrefix), nullMicro(l.FirstVisitsScheduledAt))
			if isUniqueViolation(err) {
				return batch.ListerTaken(i, l)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}
