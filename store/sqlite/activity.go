package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/revisit-sched/revisit"
)

// activityQuery is PostgreSQL's (store/postgres/activity.go) on times in
// microseconds: ?1 and ?2 bound the window, a minute is 60,000,000.
const activityQuery = `
	WITH recent AS MATERIALIZED (
		SELECT visit_type, last_scheduled, last_visit, last_visit_status FROM visit_stats
		WHERE (last_scheduled >= ?1 AND last_scheduled < ?2) OR (last_visit >= ?1 AND last_visit < ?2))
	SELECT visit_type, 'scheduled', policy, scheduled_at / 60000000 * 60000000 AS m, count(*)
		FROM visit_in_flight WHERE scheduled_at >= ?1 AND scheduled_at < ?2 GROUP BY 1, 3, 4
	UNION ALL
	SELECT visit_type, 'scheduled', '', last_scheduled / 60000000 * 60000000 AS m, count(*)
		FROM recent WHERE last_scheduled >= ?1 AND last_scheduled < ?2 GROUP BY 1, 4
	UNION ALL
	SELECT visit_type, 'result', last_visit_status, last_visit / 60000000 * 60000000 AS m, count(*)
		FROM recent WHERE last_visit >= ?1 AND last_visit < ?2 AND last_visit_status IS NOT NULL GROUP BY 1, 3, 4
	UNION ALL
	SELECT visit_type, 'lost', '', lost_at / 60000000 * 60000000 AS m, count(*)
		FROM visit_in_flight WHERE lost_at >= ?1 AND lost_at < ?2 GROUP BY 1, 4
	ORDER BY 1, 2, 3, 4`

// ActivityByMinute counts, by visit type and minute of [since, until),
// the visits scheduled, the results and the visits lost that the store
// keeps a trace of (store.Store).
func (s *Store) ActivityByMinute(ctx context.Context, since, until time.Time) ([]revisit.MinuteCount, error) {
	if err := revisit.ValidateActivityWindow(since, until); err != nil {
		return nil, err
	}
	counts, err := query(ctx, s, func(rows *sql.Rows, err error) ([]revisit.MinuteCount, error) {
		return collect(rows, err, nil, func(rows *sql.Rows) (c revisit.MinuteCount, err error) {
			var minute int64
			err = rows.Scan(&c.VisitType, &c.Kind, &c.Label, &minute, &c.Count)
			c.Minute = fromMicro(minute)
			return c, err
		})
	}, activityQuery, micro(since), micro(until))
	return counts, translate("count the activity by minute", err)
}
