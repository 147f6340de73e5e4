package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

const metricsColumns = "lister_id, visit_type, last_update, origins_known, origins_enabled, " +
	"origins_never_visited, origins_with_pending_changes"

// updateMetrics computes the figures of semantics.md §9 from listed_origin
// alone (it carries the stats copy), upserts and returns them; %s is the
// lister filter.
const updateMetrics = `INSERT INTO scheduler_metrics (` + metricsColumns + `)
SELECT lister_id, visit_type, ?1, count(*),
	count(*) FILTER (WHERE enabled),
	count(*) FILTER (WHERE enabled AND last_successful IS NULL),
	count(*) FILTER (WHERE enabled AND last_update > last_successful)
FROM listed_origin WHERE %s
GROUP BY lister_id, visit_type
ON CONFLICT (lister_id, visit_type) DO UPDATE SET
	last_update = excluded.last_update,
	origins_known = excluded.origins_known,
	origins_enabled = excluded.origins_enabled,
	origins_never_visited = excluded.origins_never_visited,
	origins_with_pending_changes = excluded.origins_with_pending_changes
RETURNING ` + metricsColumns

// MetricsUpdate recomputes and stores the scheduler metrics of one lister
// (nil: all) at now, and returns them by lister id and visit type.
func (s *Store) MetricsUpdate(ctx context.Context, listerID *uuid.UUID, now time.Time) ([]revisit.SchedulerMetrics, error) {
	if now.IsZero() {
		now = s.opts.Clock.Now()
	}
	now = revisit.Microsecond(now)
	var ms []revisit.SchedulerMetrics
	err := s.write(ctx, "update metrics", func(tx *sql.Tx) error {
		where, args := metricsFilter(listerID, "", 2)
		var err error
		ms, err = scanMetrics(tx.QueryContext(ctx, fmt.Sprintf(updateMetrics, where), append([]any{micro(now)}, args...)...))
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ms, func(a, b revisit.SchedulerMetrics) int {
		return cmp.Or(strings.Compare(a.ListerID.String(), b.ListerID.String()), strings.Compare(a.VisitType, b.VisitType))
	})
	return ms, nil
}

// MetricsGet reads stored metrics by lister id and visit type, filtered by
// lister and visit type when given.
func (s *Store) MetricsGet(ctx context.Context, listerID *uuid.UUID, visitType string) ([]revisit.SchedulerMetrics, error) {
	where, args := metricsFilter(listerID, visitType, 1)
	ms, err := query(ctx, s, scanMetrics, "SELECT "+metricsColumns+" FROM scheduler_metrics WHERE "+
		where+" ORDER BY lister_id, visit_type", args...)
	return ms, translate("get metrics", err)
}

// metricsFilter returns the condition on lister_id and visit_type (true when
// neither is given) and its arguments, numbered from first.
func metricsFilter(listerID *uuid.UUID, visitType string, first int) (string, []any) {
	where, args := "true", []any{}
	if listerID != nil {
		where += " AND lister_id = ?" + strconv.Itoa(first+len(args))
		args = append(args, *listerID)
	}
	if visitType != "" {
		where += " AND visit_type = ?" + strconv.Itoa(first+len(args))
		args = append(args, visitType)
	}
	return where, args
}

// scanMetrics reads the rows of a query returning metricsColumns.
func scanMetrics(rows *sql.Rows, err error) ([]revisit.SchedulerMetrics, error) {
	return collect(rows, err, []revisit.SchedulerMetrics{}, func(rows *sql.Rows) (m revisit.SchedulerMetrics, err error) {
		err = rows.Scan(&m.ListerID, &m.VisitType, timeCol{&m.LastUpdate}, &m.OriginsKnown,
			&m.OriginsEnabled, &m.OriginsNeverVisited, &m.OriginsWithPendingChanges)
		return m, err
	})
}
