package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

const listerColumns = "id, name, instance_name, created, updated, current_state, last_listing_finished_at, " +
	"first_visits_queue_prefix, first_visits_scheduled_at"

// ListerInsertOrGet creates l unless its name and instance are taken, and
// reads the lister stored under them (front.ListerStatements).
func (x statements) ListerInsertOrGet(ctx context.Context, l revisit.Lister) (revisit.Lister, bool, error) {
	if _, err := x.tx.ExecContext(ctx, `INSERT INTO lister (id, name, instance_name, created, updated, current_state,
		first_visits_queue_prefix) VALUES (?1, ?2, ?3, ?4, ?4, '{}', ?5) ON CONFLICT (name, instance_name) DO NOTHING`,
		l.ID, l.Name, l.InstanceName, micro(l.Created), strPtr(l.FirstVisitsQueuePrefix)); err != nil {
		return revisit.Lister{}, false, err
	}
	return x.ListerNamed(ctx, l.Name, l.InstanceName)
}

// ListerNamed reads the lister of that name and instance
// (front.ListerStatements).
func (x statements) ListerNamed(ctx context.Context, name, instanceName string) (revisit.Lister, bool, error) {
	return first(scanListers(x.query(ctx, "SELECT "+listerColumns+
		" FROM lister WHERE name = ?1 AND instance_name = ?2", name, instanceName)))
}

// ListerUpdateIfUnchanged writes l's state if its stored updated is
// l.Updated (front.ListerStatements).
func (x statements) ListerUpdateIfUnchanged(ctx context.Context, l revisit.Lister, state []byte, updated time.Time) (revisit.Lister, bool, error) {
	return first(scanListers(x.query(ctx, `UPDATE lister
		SET current_state = ?3, last_listing_finished_at = ?4, updated = ?5,
			first_visits_queue_prefix = ?6, first_visits_scheduled_at = ?7
		WHERE id = ?1 AND updated = ?2 RETURNING `+listerColumns,
		l.ID, micro(l.Updated), string(state), microPtr(l.LastListingFinishedAt), micro(updated),
		strPtr(l.FirstVisitsQueuePrefix), microPtr(l.FirstVisitsScheduledAt))))
}

// ListersAll reads every lister (front.ListerStatements).
func (x statements) ListersAll(ctx context.Context) ([]revisit.Lister, error) {
	return scanListers(x.query(ctx, "SELECT "+listerColumns+" FROM lister ORDER BY name, instance_name"))
}

// ListersWithIDs reads the listers with those ids (front.ListerStatements).
func (x statements) ListersWithIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	return scanListers(x.query(ctx, "SELECT "+listerColumns+
		" FROM lister WHERE id IN (SELECT value FROM json_each(?)) ORDER BY name, instance_name", jsonArray(ids)))
}

// ListerWrite writes l as it is (front.ListerStatements).
func (x statements) ListerWrite(ctx context.Context, l revisit.Lister, state []byte) (bool, error) {
	_, err := x.tx.ExecContext(ctx, `INSERT INTO lister (`+listerColumns+`) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, instance_name = excluded.instance_name,
			created = excluded.created, updated = excluded.updated, current_state = excluded.current_state,
			last_listing_finished_at = excluded.last_listing_finished_at,
			first_visits_queue_prefix = excluded.first_visits_queue_prefix,
			first_visits_scheduled_at = excluded.first_visits_scheduled_at`,
		l.ID, l.Name, l.InstanceName, micro(l.Created), micro(l.Updated), state, nullMicro(l.LastListingFinishedAt),
		strPtr(l.FirstVisitsQueuePrefix), nullMicro(l.FirstVisitsScheduledAt))
	if isUniqueViolation(err) {
		return false, nil
	}
	return err == nil, err
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
