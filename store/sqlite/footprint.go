package sqlite

import (
	"context"
	"database/sql"

	"github.com/revisit-sched/revisit/store"
)

// footprint lists the tables and indexes of the database and the pages
// each takes (SQLite's dbstat table), largest first; the migrations'
// bookkeeping and SQLite's own schema table count too.
const footprint = `SELECT d.name, coalesce(m.tbl_name, d.name), coalesce(m.type = 'index', 0), sum(d.pgsize) AS bytes
FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name
GROUP BY d.name ORDER BY bytes DESC, d.name`

// Footprint returns the disk space of each table and index of the store,
// largest first.
func (s *Store) Footprint(ctx context.Context) ([]store.Relation, error) {
	rels, err := query(ctx, s, func(rows *sql.Rows, err error) ([]store.Relation, error) {
		return collect(rows, err, []store.Relation{}, func(r *sql.Rows) (store.Relation, error) {
			var rel store.Relation
			return rel, r.Scan(&rel.Name, &rel.Table, &rel.Index, &rel.Bytes)
		})
	}, footprint)
	return rels, translate("read the footprint", err)
}
