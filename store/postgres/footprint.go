package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit/store"
)

// footprint lists the tables of the store's schema and their indexes: a
// table's size counts its heap, TOAST, free-space and visibility maps, an
// index's its own pages.
const footprint = `SELECT c.relname, coalesce(t.relname, c.relname), c.relkind = 'i',
	CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END AS bytes
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_index i ON i.indexrelid = c.oid
LEFT JOIN pg_class t ON t.oid = i.indrelid
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i')
ORDER BY bytes DESC, c.relname`

// Footprint returns the disk space of each table and index of the store,
// largest first.
func (s *Store) Footprint(ctx context.Context) ([]store.Relation, error) {
	rows, _ := s.pool.Query(ctx, footprint)
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Relation, error) {
		var rel store.Relation
		return rel, r.Scan(&rel.Name, &rel.Table, &rel.Index, &rel.Bytes)
	})
	return rels, translate(wrap(err, "read the footprint"))
}

// WALBytes returns the bytes the server has written to its write-ahead
// log since it was created: every database of the server counts.
func (s *Store) WALBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint").Scan(&n)
	return n, translate(wrap(err, "read the write-ahead log position"))
}
