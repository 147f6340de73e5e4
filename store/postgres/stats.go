package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/recent"
	"github.com/revisit-sched/revisit/store/internal/wake"
)

const statsColumns = "url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled, " +
	"last_snapshot, next_visit_queue_position, next_position_offset, successive_visits"

// VisitStatsGet returns the stats that exist among keys; a pending origin's
// last_scheduled is the one its grab set (docs/store.md, "Pending origins").
// The marks are looked up by index only (withIndexLookups): the pending
// table's size swings between none and millions, and statistics taken at
// one end led the planner to scan the whole table once per key at the other.
func (s *Store) VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error) {
	urls, types := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		urls[i], types[i] = k.URL, k.VisitType
	}
	var stats []revisit.VisitStats
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return s.withIndexLookups(ctx, tx, func() error {
			rows, _ := tx.Query(ctx, getStats, urls, types, revisit.DefaultNextPositionOffset,
				revisit.DefaultSuccessiveVisits)
			var err error
			stats, err = pgx.CollectRows(rows, scanStats)
			return err
		})
	})
	return stats, translate(wrap(err, "get visit stats"))
}

// getStats is VisitStatsGet's statement.
var getStats = `
	SELECT k.url, k.visit_type, vs.last_successful, vs.last_visit, vs.last_visit_status,
		GREATEST(vs.last_scheduled, m.last_scheduled), vs.last_snapshot, vs.next_visit_queue_position,
		COALESCE(vs.next_position_offset, $3), COALESCE(vs.successive_visits, $4), vs.recent
	FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS k(url, visit_type)) AS k
	LEFT JOIN visit_stats vs ON vs.url = k.url AND vs.visit_type = k.visit_type
	LEFT JOIN LATERAL (` + pendingMark("k") + `) AS m(last_scheduled) ON true
	WHERE vs.url IS NOT NULL OR m.last_scheduled IS NOT NULL
	ORDER BY k.url, k.visit_type`

// VisitStatsUpsert writes stats, never overwriting a value with null.
func (s *Store) VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error {
	writes := batch.Unguarded(stats)
	// An unguarded write is stale only when another transaction inserted
	// the origin's stats row after this one looked: written again, it
	// updates that row.
	for range 3 {
		res, err := s.VisitStatsWrite(ctx, writes)
		if err != nil || len(res.Stale) == 0 {
			return err
		}
		writes = onlyKeys(writes, res.Stale)
	}
	return revisit.Errorf(revisit.CodeConflict, "upsert %d visit stats: inserted concurrently again and again", len(writes))
}

// onlyKeys returns the writes of those keys.
func onlyKeys(writes []revisit.VisitStatsWrite, keys []revisit.OriginKey) []revisit.VisitStatsWrite {
	want := make(map[revisit.OriginKey]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	var out []revisit.VisitStatsWrite
	for _, w := range writes {
		if want[w.Stats.Key()] {
			out = append(out, w)
		}
	}
	return out
}

// VisitStatsWrite writes stats and copies them onto the listed origins, in
// one statement: a guarded write happens only if the stored last_visit is
// still the one it names (an UPDATE re-checks that on the newest row
// version; an INSERT that meets a row inserted since finds a conflict and
// does nothing); pending origins among those written come back to
// listed_origin, their grab's last_scheduled folded into the stats; the
// origins to disable are disabled with their copy.
func (s *Store) VisitStatsWrite(ctx context.Context, writes []revisit.VisitStatsWrite) (revisit.VisitStatsWriteResult, error) {
	var res revisit.VisitStatsWriteResult
	writes, err := batch.VisitStatsWrites(writes)
	if err != nil || len(writes) == 0 {
		return res, err
	}
	n := len(writes)
	var (
		urls, types                  = make([]string, n), make([]string, n)
		successful, visit, scheduled = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
		status                       = make([]pgtype.Text, n)
		snapshots                    = make([][]byte, n)
		positions                    = make([]pgtype.Int8, n)
		offsets, successive          = make([]int32, n), make([]int32, n)
		guarded, disable             = make([]bool, n), make([]bool, n)
		ifLastVisit                  = make([]pgtype.Timestamptz, n)
		recents                      = make([][]byte, n)
	)
	for i, w := range writes {
		st := w.Stats
		urls[i], types[i], snapshots[i] = st.URL, st.VisitType, st.LastSnapshot
		successful[i], visit[i], scheduled[i] = timestamptz(st.LastSuccessful), timestamptz(st.LastVisit), timestamptz(st.LastScheduled)
		if st.LastVisitStatus != nil {
			status[i] = pgtype.Text{String: string(*st.LastVisitStatus), Valid: true}
		}
		if st.NextVisitQueuePosition != nil {
			positions[i] = pgtype.Int8{Int64: *st.NextVisitQueuePosition, Valid: true}
		}
		offsets[i], successive[i] = int32(st.NextPositionOffset), int32(st.SuccessiveVisits)
		guarded[i], ifLastVisit[i], disable[i] = w.Guarded, timestamptz(w.IfLastVisit), w.Disable
		recents[i] = recent.Encode(st.Recent)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := shareGrabLocks(ctx, tx, types); err != nil {
			return err
		}
		return s.withIndexLookups(ctx, tx, func() error {
			var staleURLs, staleTypes []string
			err := tx.QueryRow(ctx, writeStats,
				urls, types, successful, visit, status, scheduled, snapshots, positions, offsets, successive,
				guarded, ifLastVisit, disable, recents).Scan(&res.Disabled, &staleURLs, &staleTypes)
			for i := range staleURLs {
				res.Stale = append(res.Stale, revisit.OriginKey{URL: staleURLs[i], VisitType: staleTypes[i]})
			}
			return err
		})
	})
	return res, translate(wrap(s.notified(err, wake.OfStats(writes)), "write %d visit stats", n))
}

// writeStats is VisitStatsWrite's statement. The grab locks it holds keep
// grabs, and so new pending rows, out until it commits: the pending origins
// that marks finds are all there are, and only those are probed again to
// move them back (most results are of origins that are not pending).
var writeStats = `
	WITH input AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[],
			$6::timestamptz[], $7::bytea[], $8::int8[], $9::int4[], $10::int4[], $11::bool[], $12::timestamptz[],
			$13::bool[], $14::bytea[]) AS i(` + statsColumns + `, guarded, if_last_visit, disable, recent)
	), marks AS (
		SELECT p.url, p.visit_type, max(p.last_scheduled) AS last_scheduled
		FROM listed_origin_pending p JOIN input i ON p.url = i.url AND p.visit_type = i.visit_type
		GROUP BY p.url, p.visit_type
	), src AS (
		SELECT i.*, GREATEST(i.last_scheduled, m.last_scheduled) AS scheduled
		FROM input i LEFT JOIN marks m ON m.url = i.url AND m.visit_type = i.visit_type
	), updated AS (
		UPDATE visit_stats vs SET
			last_successful = COALESCE(s.last_successful, vs.last_successful),
			last_visit = COALESCE(s.last_visit, vs.last_visit),
			last_visit_status = COALESCE(s.last_visit_status, vs.last_visit_status),
			last_scheduled = COALESCE(s.scheduled, vs.last_scheduled),
			last_snapshot = COALESCE(s.last_snapshot, vs.last_snapshot),
			next_visit_queue_position = COALESCE(s.next_visit_queue_position, vs.next_visit_queue_position),
			next_position_offset = s.next_position_offset,
			successive_visits = s.successive_visits,
			recent = COALESCE(s.recent, vs.recent)
		FROM src s
		WHERE vs.url = s.url AND vs.visit_type = s.visit_type
			AND (NOT s.guarded OR vs.last_visit IS NOT DISTINCT FROM s.if_last_visit)
		RETURNING vs.url, vs.visit_type, vs.last_successful, vs.last_visit, vs.last_visit_status, vs.last_scheduled,
			vs.next_visit_queue_position
	), inserted AS (
		INSERT INTO visit_stats (` + statsColumns + `, recent)
		SELECT s.url, s.visit_type, s.last_successful, s.last_visit, s.last_visit_status, s.scheduled, s.last_snapshot,
			s.next_visit_queue_position, s.next_position_offset, s.successive_visits, s.recent
		FROM src s
		WHERE (NOT s.guarded OR s.if_last_visit IS NULL)
			AND NOT EXISTS (SELECT FROM updated u WHERE u.url = s.url AND u.visit_type = s.visit_type)
		ON CONFLICT (url, visit_type) DO NOTHING
		RETURNING url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled, next_visit_queue_position
	), up AS (
		SELECT w.*, i.disable
		FROM (SELECT * FROM updated UNION ALL SELECT * FROM inserted) w
		JOIN input i ON i.url = w.url AND i.visit_type = w.visit_type
	), back AS (
		DELETE FROM listed_origin_pending p USING up JOIN marks m ON m.url = up.url AND m.visit_type = up.visit_type
		WHERE p.url = up.url AND p.visit_type = up.visit_type RETURNING p.*
	), returned AS (
		INSERT INTO listed_origin (` + listedColumns + `) OVERRIDING SYSTEM VALUE
		SELECT b.id, b.lister_id, b.url, b.visit_type, b.extra_loader_arguments, b.enabled AND NOT up.disable, b.first_seen,
			b.last_seen, b.last_update, b.is_fork, b.forked_from_url, up.last_successful, up.last_visit,
			up.last_visit_status, up.last_scheduled, up.next_visit_queue_position, b.shared
		FROM back b JOIN up ON up.url = b.url AND up.visit_type = b.visit_type
		RETURNING 1
	), disabling AS (
		SELECT count(*) AS n FROM listed_origin lo JOIN up ON lo.url = up.url AND lo.visit_type = up.visit_type
		WHERE up.disable AND lo.enabled
	), copied AS (
		UPDATE listed_origin lo SET last_successful = up.last_successful, last_visit = up.last_visit,
			last_visit_status = up.last_visit_status, last_scheduled = up.last_scheduled,
			next_visit_queue_position = up.next_visit_queue_position, enabled = lo.enabled AND NOT up.disable
		FROM up
		WHERE lo.url = up.url AND lo.visit_type = up.visit_type
			AND ((lo.last_successful, lo.last_visit, lo.last_visit_status, lo.last_scheduled, lo.next_visit_queue_position)
				IS DISTINCT FROM (up.last_successful, up.last_visit, up.last_visit_status, up.last_scheduled,
					up.next_visit_queue_position)
				OR (up.disable AND lo.enabled))
		RETURNING 1
	)
	SELECT (SELECT n FROM disabling) + (SELECT count(*) FROM back b JOIN up ON up.url = b.url AND up.visit_type = b.visit_type
			WHERE up.disable AND b.enabled),
		stale.urls, stale.types
	FROM (SELECT COALESCE(array_agg(i.url), '{}') AS urls, COALESCE(array_agg(i.visit_type), '{}') AS types FROM input i
		WHERE NOT EXISTS (SELECT FROM up WHERE up.url = i.url AND up.visit_type = i.visit_type)) AS stale`

func scanStats(row pgx.CollectableRow) (revisit.VisitStats, error) {
	var (
		st     revisit.VisitStats
		stored []byte
	)
	if err := row.Scan(&st.URL, &st.VisitType, &st.LastSuccessful, &st.LastVisit, &st.LastVisitStatus, &st.LastScheduled,
		&st.LastSnapshot, &st.NextVisitQueuePosition, &st.NextPositionOffset, &st.SuccessiveVisits, &stored); err != nil {
		return st, err
	}
	st.LastSuccessful, st.LastVisit, st.LastScheduled = utcPtr(st.LastSuccessful), utcPtr(st.LastVisit), utcPtr(st.LastScheduled)
	return st, recent.Into(&st, stored)
}

func timestamptz(t *time.Time) pgtype.Timestamptz {
	if t == nil {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: *t, Valid: true}
}

// QueuePositionOf reads a visit type's queue position
// (front.QueuePositionStatements).
func (x statements) QueuePositionOf(ctx context.Context, visitType string) (int64, bool, error) {
	rows, _ := x.q.Query(ctx, "SELECT position FROM queue_position WHERE visit_type = $1", visitType)
	return one(rows, pgx.RowTo[int64])
}

// QueuePositionWrite sets a visit type's queue position
// (front.QueuePositionStatements).
func (x statements) QueuePositionWrite(ctx context.Context, visitType string, position int64) error {
	_, err := x.q.Exec(ctx, `INSERT INTO queue_position (visit_type, position) VALUES ($1, $2)
		ON CONFLICT (visit_type) DO UPDATE SET position = EXCLUDED.position`, visitType, position)
	return err
}

// QueuePositionsAll reads every queue position
// (front.QueuePositionStatements).
func (x statements) QueuePositionsAll(ctx context.Context) (map[string]int64, error) {
	rows, _ := x.q.Query(ctx, "SELECT visit_type, position FROM queue_position")
	return pairs[string, int64](rows)
}
