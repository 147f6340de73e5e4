package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/recent"
)

// inFlightActivity counts by minute what visit_in_flight keeps of [$1,
// $2): the visits by policy and minute scheduled, and the lost ones by
// minute lost. Its indexes lead with the visit type, so this reads the
// table, whose size is the visits in flight and those lost within the
// retention.
const inFlightActivity = `
	SELECT visit_type, 'scheduled', policy, date_trunc('minute', scheduled_at, 'UTC') AS m, count(*)
		FROM visit_in_flight WHERE scheduled_at >= $1 AND scheduled_at < $2 GROUP BY 1, 3, 4
	UNION ALL
	SELECT visit_type, 'lost', '', date_trunc('minute', lost_at, 'UTC') AS m, count(*)
		FROM visit_in_flight WHERE lost_at >= $1 AND lost_at < $2 GROUP BY 1, 4`

// statsActivity reads the visit stats that recall a schedule in [$1, $2)
// or results since $1 (recent.Activity counts them), once an origin:
// those of listed origins from one of their listed rows (a pending one's
// schedule from before its grab: visit_in_flight counts the grab's), those
// of the others from visit_stats. No index
// holds those times: the scan of the tables is the cost, once per process
// start.
const statsActivity = `
	SELECT DISTINCT ON (url, visit_type) visit_type, last_scheduled, last_visit, last_visit_status, recent
	FROM listed_origin WHERE (last_scheduled >= $1 AND last_scheduled < $2) OR last_visit >= $1
	UNION ALL
	SELECT DISTINCT ON (url, visit_type) visit_type, stats_scheduled, last_visit, last_visit_status, recent
	FROM listed_origin_pending p WHERE ((stats_scheduled >= $1 AND stats_scheduled < $2) OR last_visit >= $1)
		AND NOT EXISTS (SELECT FROM listed_origin l WHERE l.url = p.url AND l.visit_type = p.visit_type)
	UNION ALL
	SELECT visit_type, last_scheduled, last_visit, last_visit_status, recent FROM visit_stats
	WHERE (last_scheduled >= $1 AND last_scheduled < $2) OR last_visit >= $1`

// ActivityByMinute counts, by visit type and minute of [since, until),
// the visits scheduled, the results and the visits lost that the store
// keeps a trace of (store.Store).
func (s *Store) ActivityByMinute(ctx context.Context, since, until time.Time) ([]revisit.MinuteCount, error) {
	if err := revisit.ValidateActivityWindow(since, until); err != nil {
		return nil, err
	}
	from, to := revisit.Microsecond(since), revisit.Microsecond(until)
	rows, _ := s.pool.Query(ctx, inFlightActivity, from, to)
	inFlight, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.MinuteCount, error) {
		var c revisit.MinuteCount
		err := row.Scan(&c.VisitType, &c.Kind, &c.Label, &c.Minute, &c.Count)
		c.Minute = c.Minute.UTC()
		return c, err
	})
	if err != nil {
		return nil, translate(wrap(err, "count the activity by minute"))
	}
	activity := recent.NewActivity(from, to)
	var (
		visitType                string
		lastScheduled, lastVisit *time.Time
		lastStatus               *revisit.VisitStatus
		stored                   []byte
	)
	rows, _ = s.pool.Query(ctx, statsActivity, from, to)
	_, err = pgx.ForEachRow(rows, []any{&visitType, &lastScheduled, &lastVisit, &lastStatus, &stored}, func() error {
		activity.Add(visitType, lastScheduled, lastVisit, lastStatus, stored)
		return nil
	})
	if err != nil {
		return nil, translate(wrap(err, "count the activity by minute"))
	}
	return activity.Counts(inFlight), nil
}
