package postgres

import (
	"context"
	"fmt"
	"strings"
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

// VisitStatsGet returns the stats that exist among keys: a listed
// origin's from its listed rows, pending or not (a pending origin's
// last_scheduled is its grab's mark), the others' from visit_stats
// (docs/store.md, "Where an origin's stats live"). The rows are looked up
// by index only (withIndexLookups): the pending table's size swings
// between none and millions, and statistics taken at one end led the
// planner to scan the whole table once per key at the other.
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

// storedStats are the columns of an origin's stats, on its listed rows as
// in visit_stats, in the order scanStats reads them after the key.
const storedStats = "last_successful, last_visit, last_visit_status, last_scheduled, last_snapshot, " +
	"next_visit_queue_position, next_position_offset, successive_visits, recent"

// hasStats is the condition of a listed row that holds stats: a result
// wrote them, or a grab marked it (pendingValues).
const hasStats = "next_position_offset IS NOT NULL"

// getStats is VisitStatsGet's statement: of an origin's rows with stats,
// the one with the latest mark (they differ in nothing else).
var getStats = `
	SELECT k.url, k.visit_type, s.last_successful, s.last_visit, s.last_visit_status, s.last_scheduled,
		s.last_snapshot, s.next_visit_queue_position, COALESCE(s.next_position_offset, $3),
		COALESCE(s.successive_visits, $4), s.recent
	FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS k(url, visit_type)) AS k
	CROSS JOIN LATERAL (
		SELECT ` + storedStats + ` FROM listed_origin WHERE url = k.url AND visit_type = k.visit_type AND ` + hasStats + `
		UNION ALL
		SELECT ` + storedStats + ` FROM listed_origin_pending WHERE url = k.url AND visit_type = k.visit_type
		UNION ALL
		SELECT ` + storedStats + ` FROM visit_stats WHERE url = k.url AND visit_type = k.visit_type
		ORDER BY last_scheduled DESC NULLS LAST LIMIT 1) AS s
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

// VisitStatsWrite writes stats where they live: on the listed rows of a
// listed origin, pending ones moving back to listed_origin with them, and
// in visit_stats for an origin that no lister lists (docs/store.md,
// "Where an origin's stats live"). A guarded write happens only if the
// stored last_visit is still the one it names (an UPDATE re-checks that on
// the newest row version; an INSERT that meets a row inserted since finds
// a conflict and does nothing). The origins to disable are disabled in
// the same statement.
//
// The writes of origins that no lister lists go in a second statement,
// after the record locks of their visit types (recordLockKey): a
// recording that lists such an origin for the first time moves its
// visit_stats row onto the new rows under those locks (settleNewOrigins),
// so neither misses the other's write. An origin listed since the first
// statement looked is written on its listed rows then.
func (s *Store) VisitStatsWrite(ctx context.Context, writes []revisit.VisitStatsWrite) (revisit.VisitStatsWriteResult, error) {
	var res revisit.VisitStatsWriteResult
	writes, err := batch.VisitStatsWrites(writes)
	if err != nil || len(writes) == 0 {
		return res, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		res = revisit.VisitStatsWriteResult{}
		if err := shareGrabLocks(ctx, tx, visitTypesOf(writes)); err != nil {
			return err
		}
		return s.withIndexLookups(ctx, tx, func() error {
			unlisted, err := writeStatsWith(ctx, tx, writeListedStats, writes, &res)
			if err != nil || len(unlisted) == 0 {
				return err
			}
			todo := onlyKeys(writes, unlisted)
			if err := lockVisitTypes(ctx, tx, recordLockKey, visitTypesOf(todo)); err != nil {
				return err
			}
			relisted, err := writeStatsWith(ctx, tx, writeUnlistedStats, todo, &res)
			if err != nil || len(relisted) == 0 {
				return err
			}
			// Listed rows are never deleted: these leave nothing over.
			_, err = writeStatsWith(ctx, tx, writeListedStats, onlyKeys(writes, relisted), &res)
			return err
		})
	})
	return res, translate(wrap(s.notified(err, wake.OfStats(writes)), "write %d visit stats", len(writes)))
}

// visitTypesOf returns the visit type of each write.
func visitTypesOf(writes []revisit.VisitStatsWrite) []string {
	types := make([]string, len(writes))
	for i, w := range writes {
		types[i] = w.Stats.VisitType
	}
	return types
}

// writeStatsWith runs statement (writeListedStats or writeUnlistedStats)
// on writes, adds what it disabled and the stale keys to res, and returns
// the keys that it left to the other statement.
func writeStatsWith(ctx context.Context, tx pgx.Tx, statement string, writes []revisit.VisitStatsWrite,
	res *revisit.VisitStatsWriteResult) ([]revisit.OriginKey, error) {
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
	var (
		disabled                                   int
		staleURLs, staleTypes, urlsLeft, typesLeft []string
	)
	err := tx.QueryRow(ctx, statement, urls, types, successful, visit, status, scheduled, snapshots, positions,
		offsets, successive, guarded, ifLastVisit, disable, recents).
		Scan(&disabled, &staleURLs, &staleTypes, &urlsLeft, &typesLeft)
	res.Disabled += disabled
	for i := range staleURLs {
		res.Stale = append(res.Stale, revisit.OriginKey{URL: staleURLs[i], VisitType: staleTypes[i]})
	}
	left := make([]revisit.OriginKey, len(urlsLeft))
	for i := range urlsLeft {
		left[i] = revisit.OriginKey{URL: urlsLeft[i], VisitType: typesLeft[i]}
	}
	return left, err
}

// statsInput is the CTE "input" of the stats writes: the writes' columns
// ($1–$14) as a table.
const statsInput = `
	WITH input AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[],
			$6::timestamptz[], $7::bytea[], $8::int8[], $9::int4[], $10::int4[], $11::bool[], $12::timestamptz[],
			$13::bool[], $14::bytea[]) AS i(` + statsColumns + `, guarded, if_last_visit, disable, recent)
	)`

// keyArrays selects the URLs and the visit types of the keys that the
// query keys returns, as two arrays.
func keyArrays(keys string) string {
	return "(SELECT COALESCE(array_agg(url), '{}'), COALESCE(array_agg(visit_type), '{}') FROM (" + keys + ") k)"
}

// writtenStats renders, with format (of a column's name and its value),
// each stats column that a write from the CTE "s" leaves on a stored row
// (alias stored): the write's value, or the stored one where the write has
// none (scheduled: the write's last_scheduled); the offset and the
// successive visits, always the write's.
func writtenStats(stored, scheduled, format string) string {
	values := []struct{ column, value string }{
		{"last_successful", "s.last_successful"}, {"last_visit", "s.last_visit"},
		{"last_visit_status", "s.last_visit_status"}, {"last_scheduled", scheduled},
		{"last_snapshot", "s.last_snapshot"}, {"next_visit_queue_position", "s.next_visit_queue_position"},
		{"recent", "s.recent"},
	}
	cols := make([]string, 0, len(values)+2)
	for _, v := range values {
		cols = append(cols, fmt.Sprintf(format, v.column, "COALESCE("+v.value+", "+stored+"."+v.column+")"))
	}
	cols = append(cols, fmt.Sprintf(format, "next_position_offset", "s.next_position_offset"),
		fmt.Sprintf(format, "successive_visits", "s.successive_visits"))
	return strings.Join(cols, ", ")
}

// writeListedStats writes the stats of listed origins on their rows. The
// grab locks it holds keep grabs, and so new pending rows, out until it
// commits. A pending origin's rows come back to listed_origin, their
// grab's mark folded into the stats. It returns the listed rows it
// disabled, the keys of the stale writes and those of the origins that no
// lister lists.
var writeListedStats = statsInput + `, marks AS (
		SELECT p.url, p.visit_type, max(p.last_scheduled) AS last_scheduled
		FROM listed_origin_pending p JOIN input i ON p.url = i.url AND p.visit_type = i.visit_type
		GROUP BY p.url, p.visit_type
	), src AS (
		SELECT i.*, m.last_scheduled AS mark, GREATEST(i.last_scheduled, m.last_scheduled) AS scheduled
		FROM input i LEFT JOIN marks m ON m.url = i.url AND m.visit_type = i.visit_type
	), listed AS (
		UPDATE listed_origin lo SET
			` + writtenStats("lo", "s.scheduled", "%[1]s = %[2]s") + `,
			enabled = lo.enabled AND NOT s.disable
		FROM src s
		WHERE lo.url = s.url AND lo.visit_type = s.visit_type
			AND (NOT s.guarded OR lo.last_visit IS NOT DISTINCT FROM s.if_last_visit)
		RETURNING lo.lister_id, lo.url, lo.visit_type, s.disable
	), back AS (
		DELETE FROM listed_origin_pending p USING src s
		WHERE p.url = s.url AND p.visit_type = s.visit_type
			AND (NOT s.guarded OR p.last_visit IS NOT DISTINCT FROM s.if_last_visit)
		RETURNING p.id, p.lister_id, p.url, p.visit_type, p.extra_loader_arguments, p.enabled AND NOT s.disable AS enabled,
			p.first_seen, p.last_seen, p.last_update, p.is_fork, p.forked_from_url, p.shared,
			` + writtenStats("p", "s.scheduled", "%[2]s AS %[1]s") + `, p.enabled AND s.disable AS disabling
	), returned AS (
		INSERT INTO listed_origin (` + listedColumns + `) OVERRIDING SYSTEM VALUE
		SELECT ` + listedColumns + ` FROM back
	), disabled AS (
		SELECT count(*) AS n FROM (SELECT * FROM listed WHERE disable) u
		JOIN listed_origin lo ON lo.lister_id = u.lister_id AND lo.url = u.url AND lo.visit_type = u.visit_type
		WHERE lo.enabled
	), written AS (
		SELECT url, visit_type FROM listed UNION SELECT url, visit_type FROM back
	), unlisted AS (
		SELECT s.url, s.visit_type FROM src s
		WHERE s.mark IS NULL AND NOT EXISTS (SELECT FROM written w WHERE w.url = s.url AND w.visit_type = s.visit_type)
			AND NOT EXISTS (SELECT FROM listed_origin lo WHERE lo.url = s.url AND lo.visit_type = s.visit_type)
	)
	SELECT (SELECT n FROM disabled) + (SELECT count(*) FROM back WHERE disabling), stale.*, left_over.*
	FROM ` + keyArrays(`SELECT url, visit_type FROM input
		EXCEPT SELECT * FROM written EXCEPT SELECT * FROM unlisted`) + ` AS stale,
		` + keyArrays("SELECT * FROM unlisted") + ` AS left_over`

// writeUnlistedStats writes the stats of origins that no lister lists in
// visit_stats, under the record locks of their visit types. It returns no
// disabled row (an origin that no lister lists has none), the keys of the
// stale writes, and those of the origins listed since writeListedStats
// looked, to write on their listed rows.
var writeUnlistedStats = statsInput + `, listed AS (
		SELECT i.url, i.visit_type FROM input i
		WHERE EXISTS (SELECT FROM listed_origin lo WHERE lo.url = i.url AND lo.visit_type = i.visit_type)
			OR EXISTS (SELECT FROM listed_origin_pending p WHERE p.url = i.url AND p.visit_type = i.visit_type)
	), src AS (
		SELECT * FROM input i WHERE NOT EXISTS (SELECT FROM listed l WHERE l.url = i.url AND l.visit_type = i.visit_type)
	), updated AS (
		UPDATE visit_stats vs SET
			` + writtenStats("vs", "s.last_scheduled", "%[1]s = %[2]s") + `
		FROM src s
		WHERE vs.url = s.url AND vs.visit_type = s.visit_type
			AND (NOT s.guarded OR vs.last_visit IS NOT DISTINCT FROM s.if_last_visit)
		RETURNING vs.url, vs.visit_type
	), inserted AS (
		INSERT INTO visit_stats (` + statsColumns + `, recent)
		SELECT s.url, s.visit_type, s.last_successful, s.last_visit, s.last_visit_status, s.last_scheduled, s.last_snapshot,
			s.next_visit_queue_position, s.next_position_offset, s.successive_visits, s.recent
		FROM src s
		WHERE (NOT s.guarded OR s.if_last_visit IS NULL)
			AND NOT EXISTS (SELECT FROM updated u WHERE u.url = s.url AND u.visit_type = s.visit_type)
		ON CONFLICT (url, visit_type) DO NOTHING
		RETURNING url, visit_type
	)
	SELECT 0, stale.*, left_over.*
	FROM ` + keyArrays(`SELECT url, visit_type FROM src
		EXCEPT SELECT * FROM updated EXCEPT SELECT * FROM inserted`) + ` AS stale,
		` + keyArrays("SELECT * FROM listed") + ` AS left_over`

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
