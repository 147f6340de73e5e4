package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

const metricsColumns = "lister_id, visit_type, last_update, origins_known, origins_enabled, " +
	"origins_never_visited, origins_with_pending_changes"

// MetricsUpdate recomputes the scheduler metrics from listed_origin_all (which
// carries the stats the figures need) and stores them.
func (s *Store) MetricsUpdate(ctx context.Context, listerID *uuid.UUID, now time.Time) ([]revisit.SchedulerMetrics, error) {
	rows, _ := s.pool.Query(ctx, `
		WITH up AS (
		INSERT INTO scheduler_metrics AS m (`+metricsColumns+`)
		SELECT lister_id, visit_type, $2, count(*),
			count(*) FILTER (WHERE enabled),
			count(*) FILTER (WHERE enabled AND last_successful IS NULL),
			count(*) FILTER (WHERE enabled AND last_update > last_successful)
		FROM listed_origin_all WHERE $1::uuid IS NULL OR lister_id = $1
		GROUP BY lister_id, visit_type
		ON CONFLICT (lister_id, visit_type) DO UPDATE SET last_update = EXCLUDED.last_update,
			origins_known = EXCLUDED.origins_known, origins_enabled = EXCLUDED.origins_enabled,
			origins_never_visited = EXCLUDED.origins_never_visited,
			origins_with_pending_changes = EXCLUDED.origins_with_pending_changes
		RETURNING `+metricsColumns+`)
		SELECT * FROM up ORDER BY lister_id, visit_type`, listerID, revisit.Microsecond(now))
	ms, err := pgx.CollectRows(rows, scanMetrics)
	return ms, translate(wrap(err, "update metrics"))
}

// MetricsGet reads stored metrics.
func (s *Store) MetricsGet(ctx context.Context, listerID *uuid.UUID, visitType string) ([]revisit.SchedulerMetrics, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+metricsColumns+` FROM scheduler_metrics
		WHERE ($1::uuid IS NULL OR lister_id = $1) AND ($2 = '' OR visit_type = $2)
		ORDER BY lister_id, visit_type`, listerID, visitType)
	ms, err := pgx.CollectRows(rows, scanMetrics)
	return ms, translate(wrap(err, "get metrics"))
}

func scanMetrics(row pgx.CollectableRow) (revisit.SchedulerMetrics, error) {
	var m revisit.SchedulerMetrics
	err := row.Scan(&m.ListerID, &m.VisitType, &m.LastUpdate, &m.OriginsKnown, &m.OriginsEnabled,
		&m.OriginsNeverVisited, &m.OriginsWithPendingChanges)
	m.LastUpdate = m.LastUpdate.UTC()
	return m, err
}
