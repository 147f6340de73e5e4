package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

const listerColumns = "id, name, instance_name, created, updated, current_state, last_listing_finished_at, " +
	"first_visits_queue_prefix, first_visits_scheduled_at"

// ListerInsertOrGet creates l unless its name and instance are taken, and
// returns the lister stored under them, in one statement
// (front.ListerStatements): a lister another writer committed after the
// statement's snapshot is not seen.
func (x statements) ListerInsertOrGet(ctx context.Context, l revisit.Lister) (revisit.Lister, bool, error) {
	rows, _ := x.q.Query(ctx, `
		WITH ins AS (
			INSERT INTO lister (id, name, instance_name, created, updated, first_visits_queue_prefix)
			VALUES ($1, $2, $3, $4, $4, $5)
			ON CONFLICT (name, instance_name) DO NOTHING
			RETURNING `+listerColumns+`)
		SELECT `+listerColumns+` FROM ins
		UNION ALL
		SELECT `+listerColumns+` FROM lister WHERE name = $2 AND instance_name = $3`,
		l.ID, l.Name, l.InstanceName, l.Created, l.FirstVisitsQueuePrefix)
	ls, err := pgx.CollectRows(rows, scanLister)
	if err != nil || len(ls) == 0 {
		return revisit.Lister{}, false, err
	}
	return ls[0], true, nil
}

// ListerNamed reads the lister of that name and instance
// (front.ListerStatements).
func (x statements) ListerNamed(ctx context.Context, name, instanceName string) (revisit.Lister, bool, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+listerColumns+" FROM lister WHERE name = $1 AND instance_name = $2",
		name, instanceName)
	return one(rows, scanLister)
}

// ListerUpdateIfUnchanged writes l's state if its stored updated is
// l.Updated (front.ListerStatements).
func (x statements) ListerUpdateIfUnchanged(ctx context.Context, l revisit.Lister, state []byte, updated time.Time) (revisit.Lister, bool, error) {
	rows, _ := x.q.Query(ctx, `
		UPDATE lister SET current_state = $2, last_listing_finished_at = $3,
			first_visits_queue_prefix = $6, first_visits_scheduled_at = $7, updated = $4
		WHERE id = $1 AND updated = $5
		RETURNING `+listerColumns,
		l.ID, json.RawMessage(state), l.LastListingFinishedAt, updated, l.Updated,
		l.FirstVisitsQueuePrefix, l.FirstVisitsScheduledAt)
	return one(rows, scanLister)
}

// ListersAll reads every lister (front.ListerStatements).
func (x statements) ListersAll(ctx context.Context) ([]revisit.Lister, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+listerColumns+" FROM lister ORDER BY name, instance_name")
	return pgx.CollectRows(rows, scanLister)
}

// ListersWithIDs reads the listers with those ids (front.ListerStatements).
func (x statements) ListersWithIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+listerColumns+" FROM lister WHERE id = ANY($1) ORDER BY name, instance_name", ids)
	return pgx.CollectRows(rows, scanLister)
}

// ListerWrite writes l as it is (front.ListerStatements). Run in a
// transaction: a lister whose name and instance are taken aborts it.
func (x statements) ListerWrite(ctx context.Context, l revisit.Lister, state []byte) (bool, error) {
	_, err := x.q.Exec(ctx, `INSERT INTO lister (`+listerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, instance_name = EXCLUDED.instance_name,
			created = EXCLUDED.created, updated = EXCLUDED.updated, current_state = EXCLUDED.current_state,
			last_listing_finished_at = EXCLUDED.last_listing_finished_at,
			first_visits_queue_prefix = EXCLUDED.first_visits_queue_prefix,
			first_visits_scheduled_at = EXCLUDED.first_visits_scheduled_at`,
		l.ID, l.Name, l.InstanceName, l.Created, l.Updated, string(state), l.LastListingFinishedAt,
		l.FirstVisitsQueuePrefix, l.FirstVisitsScheduledAt)
	if isUniqueViolation(err) {
		return false, nil
	}
	return err == nil, err
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
