package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

// activityQuery counts by minute what the store keeps of [$1, $2): the
// visits in flight by policy, when scheduled and when lost (their indexes
// lead with the visit type, so this reads the table, whose size is the
// visits in flight and those lost within the retention); and from the
// visit stats, read once, each origin's last schedule whose visit has ended
// and its last result. visit_stats has no index on those times (results
// keep its updates in place, docs/store.md): its scan is the cost, once
// per process start.
const activityQuery = `
	WITH recent AS MATERIALIZED (
		SELECT visit_type, last_scheduled, last_visit, last_visit_status FROM visit_stats
		WHERE (last_scheduled >= $1 AND last_scheduled < $2) OR (last_visit >= $1 AND last_visit < $2))
	SELECT visit_type, 'scheduled', policy, date_trunc('minute', scheduled_at, 'UTC') AS m, count(*)
		FROM visit_in_flight WHERE scheduled_at >= $1 AND scheduled_at < $2 GROUP BY 1, 3, 4
	UNION ALL
	SELECT visit_type, 'scheduled', '', date_trunc('minute', last_scheduled, 'UTC') AS m, count(*)
		FROM recent WHERE last_scheduled >= $1 AND last_scheduled < $2 GROUP BY 1, 4
	UNION ALL
	SELECT visit_type, 'result', last_visit_status, date_trunc('minute', last_visit, 'UTC') AS m, count(*)
		FROM recent WHERE last_visit >= $1 AND last_visit < $2 AND last_visit_status IS NOT NULL GROUP BY 1, 3, 4
	UNION ALL
	SELECT visit_type, 'lost', '', date_trunc('minute', lost_at, 'UTC') AS m, count(*)
		FROM visit_in_flight WHERE lost_at >= $1 AND lost_at < $2 GROUP BY 1, 4
	ORDER BY 1, 2, 3, 4`

// ActivityByMinute counts, by visit type and minute of [since, until),
// the visits scheduled, the results and the visits lost that the store
// keeps a trace of (store.Store).
func (s *Store) ActivityByMinute(ctx context.Context, since, until time.Time) ([]revisit.MinuteCount, error) {
	if err := revisit.ValidateActivityWindow(since, until); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, activityQuery, revisit.Microsecond(since), revisit.Microsecond(until))
	counts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.MinuteCount, error) {
		var c revisit.MinuteCount
		err := row.Scan(&c.VisitType, &c.Kind, &c.Label, &c.Minute, &c.Count)
		c.Minute = c.Minute.UTC()
		return c, err
	})
	return counts, translate(wrap(err, "count the activity by minute"))
}
