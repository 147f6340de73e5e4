package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

const statsColumns = "url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled, " +
	"last_snapshot, next_visit_queue_position, next_position_offset, successive_visits"

// VisitStatsGet returns the stats that exist among keys; a pending origin's
// last_scheduled is the one its grab set (docs/store.md, "Pending origins").
func (s *Store) VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error) {
	urls, types := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		urls[i], types[i] = k.URL, k.VisitType
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT k.url, k.visit_type, vs.last_successful, vs.last_visit, vs.last_visit_status,
			GREATEST(vs.last_scheduled, m.last_scheduled), vs.last_snapshot, vs.next_visit_queue_position,
			COALESCE(vs.next_position_offset, $3), COALESCE(vs.successive_visits, $4)
		FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS k(url, visit_type)) AS k
		LEFT JOIN visit_stats vs ON vs.url = k.url AND vs.visit_type = k.visit_type
		LEFT JOIN LATERAL (`+pendingMark("k")+`) AS m(last_scheduled) ON true
		WHERE vs.url IS NOT NULL OR m.last_scheduled IS NOT NULL
		ORDER BY k.url, k.visit_type`,
		urls, types, revisit.DefaultNextPositionOffset, revisit.DefaultSuccessiveVisits)
	stats, err := pgx.CollectRows(rows, scanStats)
	return stats, translate(wrap(err, "get visit stats"))
}

// VisitStatsUpsert writes stats, never overwriting a value with null, and
// copies them onto the listed origins in the same statement; pending
// origins among them come back to listed_origin, their grab's
// last_scheduled folded into the stats.
func (s *Store) VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error {
	stats, err := batch.VisitStats(stats)
	if err != nil || len(stats) == 0 {
		return err
	}
	n := len(stats)
	var (
		urls, types                  = make([]string, n), make([]string, n)
		successful, visit, scheduled = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
		status                       = make([]pgtype.Text, n)
		snapshots                    = make([][]byte, n)
		positions                    = make([]pgtype.Int8, n)
		offsets, successive          = make([]int32, n), make([]int32, n)
	)
	for i, st := range stats {
		urls[i], types[i], snapshots[i] = st.URL, st.VisitType, st.LastSnapshot
		successful[i], visit[i], scheduled[i] = timestamptz(st.LastSuccessful), timestamptz(st.LastVisit), timestamptz(st.LastScheduled)
		if st.LastVisitStatus != nil {
			status[i] = pgtype.Text{String: string(*st.LastVisitStatus), Valid: true}
		}
		if st.NextVisitQueuePosition != nil {
			positions[i] = pgtype.Int8{Int64: *st.NextVisitQueuePosition, Valid: true}
		}
		offsets[i], successive[i] = int32(st.NextPositionOffset), int32(st.SuccessiveVisits)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := shareGrabLocks(ctx, tx, types); err != nil {
			return err
		}
		return withIndexScans(ctx, tx, func() error {
			_, err := tx.Exec(ctx, `
			WITH input AS (
				SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[],
					$6::timestamptz[], $7::bytea[], $8::int8[], $9::int4[], $10::int4[])
					AS i(`+statsColumns+`)
			), back AS (
				DELETE FROM listed_origin_pending p USING input i
				WHERE p.url = i.url AND p.visit_type = i.visit_type RETURNING p.*
			), marks AS (
				SELECT url, visit_type, max(last_scheduled) AS last_scheduled FROM back GROUP BY url, visit_type
			), up AS (
				INSERT INTO visit_stats AS vs (`+statsColumns+`)
				SELECT i.url, i.visit_type, i.last_successful, i.last_visit, i.last_visit_status,
					GREATEST(i.last_scheduled, m.last_scheduled), i.last_snapshot, i.next_visit_queue_position,
					i.next_position_offset, i.successive_visits
				FROM input i LEFT JOIN marks m ON m.url = i.url AND m.visit_type = i.visit_type
				ON CONFLICT (url, visit_type) DO UPDATE SET
					last_successful = COALESCE(EXCLUDED.last_successful, vs.last_successful),
					last_visit = COALESCE(EXCLUDED.last_visit, vs.last_visit),
					last_visit_status = COALESCE(EXCLUDED.last_visit_status, vs.last_visit_status),
					last_scheduled = COALESCE(EXCLUDED.last_scheduled, vs.last_scheduled),
					last_snapshot = COALESCE(EXCLUDED.last_snapshot, vs.last_snapshot),
					next_visit_queue_position = COALESCE(EXCLUDED.next_visit_queue_position, vs.next_visit_queue_position),
					next_position_offset = EXCLUDED.next_position_offset,
					successive_visits = EXCLUDED.successive_visits
				RETURNING url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled, next_visit_queue_position
			), returned AS (
				INSERT INTO listed_origin (`+listedColumns+`) OVERRIDING SYSTEM VALUE
				SELECT b.id, b.lister_id, b.url, b.visit_type, b.extra_loader_arguments, b.enabled, b.first_seen,
					b.last_seen, b.last_update, b.is_fork, b.forked_from_url, up.last_successful, up.last_visit,
					up.last_visit_status, up.last_scheduled, up.next_visit_queue_position, b.shared
				FROM back b JOIN up ON up.url = b.url AND up.visit_type = b.visit_type
			)
			UPDATE listed_origin lo SET last_successful = up.last_successful, last_visit = up.last_visit,
				last_visit_status = up.last_visit_status, last_scheduled = up.last_scheduled,
				next_visit_queue_position = up.next_visit_queue_position
			FROM up
			WHERE lo.url = up.url AND lo.visit_type = up.visit_type
				AND (lo.last_successful, lo.last_visit, lo.last_visit_status, lo.last_scheduled, lo.next_visit_queue_position)
				IS DISTINCT FROM (up.last_successful, up.last_visit, up.last_visit_status, up.last_scheduled, up.next_visit_queue_position)`,
				urls, types, successful, visit, status, scheduled, snapshots, positions, offsets, successive)
			return err
		})
	})
	return translate(wrap(err, "upsert %d visit stats", n))
}

func scanStats(row pgx.CollectableRow) (revisit.VisitStats, error) {
	var st revisit.VisitStats
	err := row.Scan(&st.URL, &st.VisitType, &st.LastSuccessful, &st.LastVisit, &st.LastVisitStatus, &st.LastScheduled,
		&st.LastSnapshot, &st.NextVisitQueuePosition, &st.NextPositionOffset, &st.SuccessiveVisits)
	st.LastSuccessful, st.LastVisit, st.LastScheduled = utcPtr(st.LastSuccessful), utcPtr(st.LastVisit), utcPtr(st.LastScheduled)
	return st, err
}

func timestamptz(t *time.Time) pgtype.Timestamptz {
	if t == nil {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: *t, Valid: true}
}

// QueuePositionGet returns the visit type's queue position, 0 if unset.
func (s *Store) QueuePositionGet(ctx context.Context, visitType string) (int64, error) {
	var pos int64
	err := s.pool.QueryRow(ctx, "SELECT position FROM queue_position WHERE visit_type = $1", visitType).Scan(&pos)
	if err == pgx.ErrNoRows {
		return 0, nil
	}
	return pos, translate(wrap(err, "get queue position of %s", visitType))
}

// QueuePositionSet sets the visit type's queue position.
func (s *Store) QueuePositionSet(ctx context.Context, visitType string, position int64) error {
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO queue_position (visit_type, position) VALUES ($1, $2)
		ON CONFLICT (visit_type) DO UPDATE SET position = EXCLUDED.position`, visitType, position)
	return translate(wrap(err, "set queue position of %s", visitType))
}
