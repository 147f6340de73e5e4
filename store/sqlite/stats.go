package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/recent"
	"github.com/revisit-sched/revisit/store/internal/wake"
)

const statsColumns = "url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled, " +
	"last_snapshot, next_visit_queue_position, next_position_offset, successive_visits"

// upsertStats writes one stats row, a NULL never overwriting a stored value,
// and returns the five columns that listed_origin copies.
const upsertStats = `INSERT INTO visit_stats (` + statsColumns + `, recent)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT (url, visit_type) DO UPDATE SET
	last_successful = COALESCE(excluded.last_successful, visit_stats.last_successful),
	last_visit = COALESCE(excluded.last_visit, visit_stats.last_visit),
	last_visit_status = COALESCE(excluded.last_visit_status, visit_stats.last_visit_status),
	last_scheduled = COALESCE(excluded.last_scheduled, visit_stats.last_scheduled),
	last_snapshot = COALESCE(excluded.last_snapshot, visit_stats.last_snapshot),
	next_visit_queue_position = COALESCE(excluded.next_visit_queue_position, visit_stats.next_visit_queue_position),
	next_position_offset = excluded.next_position_offset,
	successive_visits = excluded.successive_visits,
	recent = COALESCE(excluded.recent, visit_stats.recent)
RETURNING last_successful, last_visit, last_visit_status, last_scheduled, next_visit_queue_position`

// copyStats sets the stats copy of every listed row of one origin.
const copyStats = `UPDATE listed_origin SET last_successful = ?3, last_visit = ?4, last_visit_status = ?5,
	last_scheduled = ?6, next_visit_queue_position = ?7
WHERE url = ?1 AND visit_type = ?2`

// VisitStatsGet returns the stats that exist among keys, in the order of
// their first occurrence in keys; a pending origin's last_scheduled is its
// mark (docs/store.md, "Pending marks (SQLite)").
func (s *Store) VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error) {
	if len(keys) == 0 {
		return []revisit.VisitStats{}, nil
	}
	pairs := make([][2]string, 0, len(keys))
	seen := make(map[revisit.OriginKey]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			pairs = append(pairs, [2]string{k.URL, k.VisitType})
		}
	}
	// The key list is the outer loop (LEFT JOIN): one primary-key lookup
	// per key in each table. A pending mark is the origin's last_scheduled.
	out, err := query(ctx, s, scanVisitStats, `SELECT k.value ->> 0, k.value ->> 1, s.last_successful, s.last_visit,
		s.last_visit_status,
		max(COALESCE(s.last_scheduled, k.mark), COALESCE(k.mark, s.last_scheduled)),
		s.last_snapshot, s.next_visit_queue_position,
		COALESCE(s.next_position_offset, ?2), COALESCE(s.successive_visits, ?3), s.recent
		FROM (SELECT key, value, (SELECT max(m.last_scheduled) FROM listed_origin AS lo
			JOIN listed_origin_mark AS m ON m.id = lo.id
			WHERE lo.url = value ->> 0 AND lo.visit_type = value ->> 1) AS mark FROM json_each(?1)) AS k
		LEFT JOIN visit_stats AS s ON s.url = k.value ->> 0 AND s.visit_type = k.value ->> 1
		WHERE s.url IS NOT NULL OR k.mark IS NOT NULL
		ORDER BY k.key`, jsonArray(pairs), revisit.DefaultNextPositionOffset, revisit.DefaultSuccessiveVisits)
	return out, translate("get visit stats", err)
}

// scanVisitStats reads the rows of VisitStatsGet's query.
func scanVisitStats(rows *sql.Rows, err error) ([]revisit.VisitStats, error) {
	return collect(rows, err, []revisit.VisitStats{}, func(rows *sql.Rows) (revisit.VisitStats, error) {
		var (
			v             revisit.VisitStats
			status        sql.NullString
			recentResults []byte
		)
		if err := rows.Scan(&v.URL, &v.VisitType, timePtrCol{&v.LastSuccessful}, timePtrCol{&v.LastVisit},
			&status, timePtrCol{&v.LastScheduled}, &v.LastSnapshot, int64PtrCol{&v.NextVisitQueuePosition},
			&v.NextPositionOffset, &v.SuccessiveVisits, &recentResults); err != nil {
			return v, err
		}
		if status.Valid {
			st := revisit.VisitStatus(status.String)
			v.LastVisitStatus = &st
		}
		return v, recent.Into(&v, recentResults)
	})
}

// VisitStatsUpsert writes stats in one transaction; a null (nil) field never
// overwrites a stored value, the integer fields always do.
func (s *Store) VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error {
	_, err := s.VisitStatsWrite(ctx, batch.Unguarded(stats))
	return err
}

// VisitStatsWrite writes stats in one transaction as VisitStatsUpsert does,
// skipping the guarded writes whose stored last_visit has changed (the
// single writer connection serializes the check and the write). The stats
// copy of every listed row of each origin written is updated, an origin's
// pending mark is folded into the last_scheduled written, and the origins
// to disable are disabled, in the same transaction.
func (s *Store) VisitStatsWrite(ctx context.Context, writes []revisit.VisitStatsWrite) (revisit.VisitStatsWriteResult, error) {
	var res revisit.VisitStatsWriteResult
	writes, err := batch.VisitStatsWrites(writes)
	if err != nil || len(writes) == 0 {
		return res, err
	}
	err = s.write(ctx, "write visit stats", func(tx *sql.Tx) error {
		s.wroteListed()
		res = revisit.VisitStatsWriteResult{}
		var stmts [5]*sql.Stmt
		for i, q := range []string{guardHolds, upsertStats, copyStats, takeMark, disableOrigin} {
			if stmts[i], err = s.stmt(ctx, tx, q); err != nil {
				return err
			}
		}
		guard, up, cp, take, disable := stmts[0], stmts[1], stmts[2], stmts[3], stmts[4]
		for _, w := range writes {
			v := w.Stats
			if w.Guarded {
				var holds bool
				if err := guard.QueryRowContext(ctx, v.URL, v.VisitType, microPtr(w.IfLastVisit)).Scan(&holds); err != nil {
					return err
				}
				if !holds {
					res.Stale = append(res.Stale, v.Key())
					continue
				}
			}
			var snapshot, recentResults any
			if v.LastSnapshot != nil {
				snapshot = v.LastSnapshot
			}
			if b := recent.Encode(v.Recent); b != nil {
				recentResults = b
			}
			mark, err := takenMark(ctx, take, v.URL, v.VisitType)
			if err != nil {
				return err
			}
			var c [5]any // the copied columns, as stored
			if err := up.QueryRowContext(ctx, v.URL, v.VisitType,
				microPtr(v.LastSuccessful), microPtr(v.LastVisit), strPtr(v.LastVisitStatus),
				laterMicro(v.LastScheduled, mark), snapshot, int64Ptr(v.NextVisitQueuePosition),
				v.NextPositionOffset, v.SuccessiveVisits, recentResults).Scan(&c[0], &c[1], &c[2], &c[3], &c[4]); err != nil {
				return err
			}
			if _, err := cp.ExecContext(ctx, v.URL, v.VisitType, c[0], c[1], c[2], c[3], c[4]); err != nil {
				return err
			}
			if w.Disable {
				r, err := disable.ExecContext(ctx, v.URL, v.VisitType)
				if err != nil {
					return err
				}
				n, err := r.RowsAffected()
				if err != nil {
					return err
				}
				res.Disabled += int(n)
			}
		}
		return nil
	})
	return res, s.notified(err, wake.OfStats(writes))
}

// disableOrigin disables the listed rows of one (url, visit_type).
const disableOrigin = `UPDATE listed_origin SET enabled = 0 WHERE url = ?1 AND visit_type = ?2 AND enabled`

// guardHolds reports whether an origin's stored last_visit is ?3 (NULL: no
// stats row, or no visit).
const guardHolds = `SELECT (SELECT last_visit FROM visit_stats WHERE url = ?1 AND visit_type = ?2) IS ?3`

// QueuePositionOf reads a visit type's queue position
// (front.QueuePositionStatements).
func (x statements) QueuePositionOf(ctx context.Context, visitType string) (int64, bool, error) {
	var pos int64
	err := x.queryRow(ctx, "SELECT position FROM queue_position WHERE visit_type = ?", []any{visitType}, &pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return pos, err == nil, err
}

// QueuePositionWrite sets a visit type's queue position
// (front.QueuePositionStatements).
func (x statements) QueuePositionWrite(ctx context.Context, visitType string, position int64) error {
	_, err := x.tx.ExecContext(ctx, `INSERT INTO queue_position (visit_type, position) VALUES (?1, ?2)
		ON CONFLICT (visit_type) DO UPDATE SET position = excluded.position`, visitType, position)
	return err
}

// QueuePositionsAll reads every queue position
// (front.QueuePositionStatements).
func (x statements) QueuePositionsAll(ctx context.Context) (map[string]int64, error) {
	return scanPositions(x.query(ctx, "SELECT visit_type, position FROM queue_position"))
}

// scanPositions reads the rows of visit types and their queue positions.
func scanPositions(rows *sql.Rows, err error) (map[string]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	positions := map[string]int64{}
	for rows.Next() {
		var (
			visitType string
			position  int64
		)
		if err := rows.Scan(&visitType, &position); err != nil {
			return nil, err
		}
		positions[visitType] = position
	}
	return positions, rows.Err()
}
