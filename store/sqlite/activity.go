package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/recent"
)

// inFlightActivity is PostgreSQL's (store/postgres/activity.go) on times
// in microseconds: ?1 and ?2 bound the window, a minute is 60,000,000.
const inFlightActivity = `
	SELECT visit_type, 'scheduled', policy, scheduled_at / 60000000 * 60000000 AS m, count(*)
		FROM visit_in_flight WHERE scheduled_at >= ?1 AND scheduled_at < ?2 GROUP BY 1, 3, 4
	UNION ALL
	SELECT visit_type, 'lost', '', lost_at / 60000000 * 60000000 AS m, count(*)
		FROM visit_in_flight WHERE lost_at >= ?1 AND lost_at < ?2 GROUP BY 1, 4`

// statsActivity is PostgreSQL's on times in microseconds.
const statsActivity = `
	SELECT visit_type, last_scheduled, last_visit, last_visit_status, recent FROM visit_stats
	WHERE (last_scheduled >= ?1 AND last_scheduled < ?2) OR last_visit >= ?1`

// ActivityByMinute counts, by visit type and minute of [since, until),
// the visits scheduled, the results and the visits lost that the store
// keeps a trace of (store.Store).
func (s *Store) ActivityByMinute(ctx context.Context, since, until time.Time) ([]revisit.MinuteCount, error) {
	if err := revisit.ValidateActivityWindow(since, until); err != nil {
		return nil, err
	}
	inFlight, err := query(ctx, s, func(rows *sql.Rows, err error) ([]revisit.MinuteCount, error) {
		return collect(rows, err, nil, func(rows *sql.Rows) (c revisit.MinuteCount, err error) {
			var minute int64
			err = rows.Scan(&c.VisitType, &c.Kind, &c.Label, &minute, &c.Count)
			c.Minute = fromMicro(minute)
			return c, err
		})
	}, inFlightActivity, micro(since), micro(until))
	if err != nil {
		return nil, translate("count the activity by minute", err)
	}
	activity := recent.NewActivity(fromMicro(micro(since)), fromMicro(micro(until)))
	_, err = query(ctx, s, func(rows *sql.Rows, err error) (struct{}, error) {
		if err != nil {
			return struct{}{}, err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				visitType                string
				lastScheduled, lastVisit *time.Time
				status                   sql.NullString
				stored                   []byte
			)
			if err := rows.Scan(&visitType, timePtrCol{&lastScheduled}, timePtrCol{&lastVisit}, &status,
				&stored); err != nil {
				return struct{}{}, err
			}
			var lastStatus *revisit.VisitStatus
			if status.Valid {
				st := revisit.VisitStatus(status.String)
				lastStatus = &st
			}
			activity.Add(visitType, lastScheduled, lastVisit, lastStatus, stored)
		}
		return struct{}{}, rows.Err()
	}, statsActivity, micro(since), micro(until))
	if err != nil {
		return nil, translate("count the activity by minute", err)
	}
	return activity.Counts(inFlight), nil
}
