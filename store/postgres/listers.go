package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

const listerColumns = "id, name, instance_name, created, updated, current_state, last_listing_finished_at, " +
	"first_visits_queue_prefix, first_visits_scheduled_at"

// ListerGetOrCreate returns the lister of that name and instance, creating it
// if needed.
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
	now := s.now()
	rows, _ := s.pool.Query(ctx, `
		WITH ins AS (
			INSERT INTO lister (id, name, instance_name, created, updated, first_visits_queue_prefix)
			VALUES ($1, $2, $3, $4, $4, $5)
			ON CONFLICT (name, instance_name) DO NOTHING
			RETURNING `+listerColumns+`)
		SELECT `+listerColumns+` FROM ins
		UNION ALL
		SELECT `+listerColumns+` FROM lister WHERE name = $2 AND instance_name = $3`,
		uuid.New(), name, instanceName, now, queuePrefix)
	ls, err := pgx.CollectRows(rows, scanLister)
	if err == nil && len(ls) == 0 {
		// A concurrent insert committed after our snapshot: read it now.
		return s.ListerGet(ctx, name, instanceName)
	}
	if err != nil {
		return revisit.Lister{}, translate(wrap(err, "get or create lister %s/%s", name, instanceName))
	}
	return ls[0], nil
}

// ListerGet returns the lister of that name and instance.
func (s *Store) ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error) {
	rows, _ := s.pool.Query(ctx, "SELECT "+listerColumns+" FROM lister WHERE name = $1 AND instance_name = $2",
		name, instanceName)
	l, err := pgx.CollectExactlyOneRow(rows, scanLister)
	if err == pgx.ErrNoRows {
		return l, revisit.Errorf(revisit.CodeNotFound, "lister %s/%s not found", name, instanceName)
	}
	return l, translate(wrap(err, "get lister %s/%s", name, instanceName))
}

// ListerUpdate stores the lister's state if nobody updated it since l.Updated.
func (s *Store) ListerUpdate(ctx context.Context, l revisit.Lister) (revisit.Lister, error) {
	state, err := listerState(l.CurrentState)
	if err != nil {
		return l, err
	}
	if err := revisit.ValidateFirstVisitsQueuePrefix(l.FirstVisitsQueuePrefix); err != nil {
		return l, err
	}
	rows, _ := s.pool.Query(ctx, `
		UPDATE lister SET current_state = $2, last_listing_finished_at = $3,
			first_visits_queue_prefix = $6, first_visits_scheduled_at = $7,
			updated = GREATEST($4, updated + interval '1 microsecond')
		WHERE id = $1 AND updated = $5
		RETURNING `+listerColumns,
		l.ID, state, revisit.MicrosecondPtr(l.LastListingFinishedAt), s.now(), revisit.Microsecond(l.Updated),
		l.FirstVisitsQueuePrefix, revisit.MicrosecondPtr(l.FirstVisitsScheduledAt))
	updated, err := pgx.CollectExactlyOneRow(rows, scanLister)
	if err != pgx.ErrNoRows {
		return updated, translate(wrap(err, "update lister %s", l.ID))
	}
	found, err := s.ListerGetByIDs(ctx, []uuid.UUID{l.ID})
	if err != nil {
		return l, err
	}
	if len(found) == 0 {
		return l, revisit.Errorf(revisit.CodeNotFound, "lister %s not found", l.ID)
	}
	return l, revisit.Errorf(revisit.CodeStaleData, "lister %s was updated at %s, after the caller's copy (%s)",
		l.ID, found[0].Updated.Format(time.RFC3339Nano), l.Updated.Format(time.RFC3339Nano))
}

// ListerList returns every lister, by name and instance name.
func (s *Store) ListerList(ctx context.Context) ([]revisit.Lister, error) {
	rows, _ := s.pool.Query(ctx, "SELECT "+listerColumns+" FROM lister ORDER BY name, instance_name")
	ls, err := pgx.CollectRows(rows, scanLister)
	return ls, translate(wrap(err, "list listers"))
}

// ListerGetByIDs returns the listers with those ids that exist.
func (s *Store) ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	rows, _ := s.pool.Query(ctx, "SELECT "+listerColumns+" FROM lister WHERE id = ANY($1) ORDER BY name, instance_name", ids)
	ls, err := pgx.CollectRows(rows, scanLister)
	return ls, translate(wrap(err, "get listers"))
}

// listerState checks that a lister state is a JSON object; empty means {}.
func listerState(state json.RawMessage) (json.RawMessage, error) {
	if len(state) == 0 {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]any
	if json.Unmarshal(state, &obj) != nil || obj == nil {
		return nil, revisit.Invalidf("current_state", "must be a JSON object")
	}
	return state, nil
}

func scanLister(row pgx.CollectableRow) (revisit.Lister, error) {
	var l revisit.Lister
	err := row.Scan(&l.ID, &l.Name, &l.InstanceName, &l.Created, &l.Updated, &l.CurrentState, &l.LastListingFinishedAt,
		&l.FirstVisitsQueuePrefix, &l.FirstVisitsScheduledAt)
	l.Created, l.Updated = l.Created.UTC(), l.Updated.UTC()
	l.LastListingFinishedAt, l.FirstVisitsScheduledAt = utcPtr(l.LastListingFinishedAt), utcPtr(l.FirstVisitsScheduledAt)
	return l, err
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ListersImport writes listers as they are, every field kept
// (store.Store).
func (s *Store) ListersImport(ctx context.Context, ls []revisit.Lister) error {
	if err := batch.ImportedListers(ls); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for i, l := range ls {
			_, err := tx.Exec(ctx, `INSERT INTO lister (`+listerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
				ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, instance_name = EXCLUDED.instance_name,
					created = EXCLUDED.created, updated = EXCLUDED.updated, current_state = EXCLUDED.current_state,
					last_listing_finished_at = EXCLUDED.last_listing_finished_at,
					first_visits_queue_prefix = EXCLUDED.first_visits_queue_prefix,
					first_visits_scheduled_at = EXCLUDED.first_visits_scheduled_at`,
				l.ID, l.Name, l.InstanceName, l.Created, l.Updated, string(l.CurrentState), l.LastListingFinishedAt,
				l.FirstVisitsQueuePrefix, l.FirstVisitsScheduledAt)
			if isUniqueViolation(err) {
				return batch.ListerTaken(i, l)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return translate(wrap(err, "import %d listers", len(ls)))
}
