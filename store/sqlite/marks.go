package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/revisit-sched/revisit"
)

// releasedMarks renders the query of the marks (url, visit_type,
// last_scheduled) of a visit type that the scheduled and absolute cooldowns
// c at now would let a grab return (all of them when both are off), and its
// arguments: the grab folds them before its candidate query. A mark passes
// the scheduled cooldown when it is older than now − scheduled, or than the
// origin's last visit; each branch of the union walks one index of
// listed_origin_mark.
func releasedMarks(visitType string, now time.Time, c revisit.Cooldowns) (string, []any) {
	const (
		marks   = "SELECT url, visit_type, last_scheduled FROM listed_origin_mark WHERE visit_type = ?1"
		visited = " UNION ALL SELECT url, visit_type, last_scheduled FROM listed_origin_mark " +
			"INDEXED BY listed_origin_mark_visited WHERE visit_type = ?1 AND last_scheduled < last_visit"
	)
	switch {
	case c.Scheduled <= 0 && c.Absolute <= 0:
		return marks, []any{visitType}
	case c.Scheduled <= 0:
		return marks + " AND last_scheduled < ?2", []any{visitType, micro(now.Add(-c.Absolute))}
	case c.Absolute <= 0:
		return marks + " AND last_scheduled < ?2" + visited, []any{visitType, micro(now.Add(-c.Scheduled))}
	default:
		absolute := micro(now.Add(-c.Absolute))
		return marks + " AND last_scheduled < ?2" + visited + " AND last_scheduled < ?3",
			[]any{visitType, min(micro(now.Add(-c.Scheduled)), absolute), absolute}
	}
}

// foldMarks drops the marks that query selects, with the other marks of
// their origins, and writes each into visit_stats and onto every listed row
// of its origin (last_scheduled = the later of the two), and returns how
// many it folded.
func (s *Store) foldMarks(ctx context.Context, tx *sql.Tx, query string, args ...any) (int, error) {
	type mark struct {
		url, visitType string
		scheduled      int64
	}
	sel, err := s.stmt(ctx, tx, query)
	if err != nil {
		return 0, err
	}
	rows, err := sel.QueryContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	var marks []mark
	for rows.Next() {
		var m mark
		if err := rows.Scan(&m.url, &m.visitType, &m.scheduled); err != nil {
			rows.Close()
			return 0, err
		}
		marks = append(marks, m)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil || len(marks) == 0 {
		return 0, err
	}
	s.wroteListed()
	for _, q := range []string{dropMark, foldStats, foldListed} {
		st, err := s.stmt(ctx, tx, q)
		if err != nil {
			return 0, err
		}
		for _, m := range marks {
			if _, err := st.ExecContext(ctx, m.url, m.visitType, m.scheduled); err != nil {
				return 0, err
			}
		}
	}
	return len(marks), nil
}

// foldStats and foldListed write a mark (?1 url, ?2 visit type, ?3
// last_scheduled) into visit_stats and onto the origin's listed rows.
const (
	foldStats = `INSERT INTO visit_stats (url, visit_type, last_scheduled) VALUES (?1, ?2, ?3)
		ON CONFLICT (url, visit_type) DO UPDATE SET last_scheduled =
			max(COALESCE(visit_stats.last_scheduled, excluded.last_scheduled), excluded.last_scheduled)`
	foldListed = `UPDATE listed_origin SET last_scheduled = max(COALESCE(last_scheduled, ?3), ?3)
		WHERE url = ?1 AND visit_type = ?2`
)

// takeMark drops an origin's marks and returns them: a result folds the
// mark into the stats it writes.
const takeMark = `DELETE FROM listed_origin_mark WHERE id IN (
	SELECT id FROM listed_origin WHERE url = ?1 AND visit_type = ?2) RETURNING last_scheduled`

// takenMark runs takeMark, prepared as st: the latest mark, or nil.
func takenMark(ctx context.Context, st *sql.Stmt, url, visitType string) (*int64, error) {
	rows, err := st.QueryContext(ctx, url, visitType)
	if err != nil {
		return nil, err
	}
	var latest *int64
	for rows.Next() {
		var mark int64
		if err := rows.Scan(&mark); err != nil {
			rows.Close()
			return nil, err
		}
		if latest == nil || mark > *latest {
			latest = &mark
		}
	}
	return latest, errors.Join(rows.Err(), rows.Close())
}

// laterMicro returns, as stored, the later of an optional time and an
// optional mark in microseconds.
func laterMicro(t *time.Time, mark *int64) any {
	switch {
	case t == nil && mark == nil:
		return nil
	case t == nil:
		return *mark
	case mark == nil:
		return micro(*t)
	default:
		return max(micro(*t), *mark)
	}
}

// dropMark drops the marks a visit set (?1 url, ?2 visit type, ?3 the
// visit's scheduled_at), unless a later grab marked the origin again.
const dropMark = `DELETE FROM listed_origin_mark WHERE id IN (
	SELECT id FROM listed_origin WHERE url = ?1 AND visit_type = ?2) AND last_scheduled = ?3`

// ensureStats gives an origin whose mark was dropped the stats row a grab
// leaves, as on PostgreSQL: ?1 url, ?2 visit type, ?3 the last_scheduled of
// before the visit.
const ensureStats = `INSERT INTO visit_stats (url, visit_type, last_scheduled) VALUES (?1, ?2, ?3)
ON CONFLICT (url, visit_type) DO NOTHING`
