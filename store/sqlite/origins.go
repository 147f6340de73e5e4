package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// Page sizes of ListedOriginsGet.
const (
	defaultPageSize = 1000
	maxPageSize     = 10_000
)

// upsertOrigin records one listed origin: a new row copies the stats of its
// (url, visit_type) from visit_stats; an existing one keeps first_seen and
// its stats copy. It returns the row id, so that the caller can tell an
// insert (an id above every id before the batch) from an update.
const upsertOrigin = `INSERT INTO listed_origin (lister_id, url, visit_type, extra_loader_arguments, enabled,
	first_seen, last_seen, last_update, is_fork, forked_from_url,
	last_successful, last_visit, last_visit_status, last_scheduled, next_visit_queue_position)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9,
	s.last_successful, s.last_visit, s.last_visit_status, s.last_scheduled, s.next_visit_queue_position
FROM (SELECT 1) LEFT JOIN visit_stats AS s ON s.url = ?2 AND s.visit_type = ?3
WHERE true
ON CONFLICT (lister_id, url, visit_type) DO UPDATE SET
	extra_loader_arguments = excluded.extra_loader_arguments,
	enabled = excluded.enabled,
	last_seen = excluded.last_seen,
	last_update = excluded.last_update,
	is_fork = excluded.is_fork,
	forked_from_url = excluded.forked_from_url
RETURNING id`

// ListedOriginsRecord upserts a batch on (lister_id, url, visit_type), in one
// transaction: inside the batch the last duplicate wins; a new row gets
// first_seen = last_seen = now and the stats of its origin, an existing one
// keeps first_seen and gets last_seen = now and the batch's other fields.
// Nothing is written if any origin is invalid or names an unknown lister.
func (s *Store) ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	var res revisit.RecordResult
	if len(origins) == 0 {
		return res, nil
	}
	type row struct {
		index int // in origins, for error messages
		o     revisit.ListedOrigin
		extra string
	}
	rows := make([]row, 0, len(origins))
	at := make(map[listedKey]int, len(origins)) // index in rows
	listers := make(map[uuid.UUID]int)          // first index in origins
	for i, o := range origins {
		if err := o.Validate(); err != nil {
			return res, inBatch("origins", i, err)
		}
		extra, err := extraArgs(o.ExtraLoaderArguments)
		if err != nil {
			return res, inBatch("origins", i, err)
		}
		if _, ok := listers[o.ListerID]; !ok {
			listers[o.ListerID] = i
		}
		r := row{index: i, o: o, extra: extra}
		k := listedKey{o.ListerID, o.URL, o.VisitType}
		if j, dup := at[k]; dup {
			rows[j] = r
			continue
		}
		at[k] = len(rows)
		rows = append(rows, r)
	}
	err := s.write(ctx, "record listed origins", func(tx *sql.Tx) error {
		if err := checkListers(ctx, tx, listers); err != nil {
			return err
		}
		var maxID int64
		if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM listed_origin").Scan(&maxID); err != nil {
			return err
		}
		st, err := s.stmt(ctx, tx, upsertOrigin)
		if err != nil {
			return err
		}
		now := micro(s.now())
		for _, r := range rows {
			o := r.o
			var id int64
			if err := st.QueryRowContext(ctx, o.ListerID, o.URL, o.VisitType, r.extra, o.Enabled, now,
				microPtr(o.LastUpdate), boolPtr(o.IsFork), strPtr(o.ForkedFromURL)).Scan(&id); err != nil {
				return fmt.Errorf("origins[%d]: %w", r.index, err)
			}
			if id > maxID {
				res.Inserted++
			} else {
				res.Updated++
			}
		}
		return nil
	})
	if err != nil {
		return revisit.RecordResult{}, err
	}
	return res, nil
}

// listedKey is the key of a listed origin.
type listedKey struct {
	lister         uuid.UUID
	url, visitType string
}

// checkListers returns an invalid-input error naming the first origin whose
// lister does not exist; listers maps each lister id to that index.
func checkListers(ctx context.Context, tx *sql.Tx, listers map[uuid.UUID]int) error {
	ids := make([]uuid.UUID, 0, len(listers))
	for id := range listers {
		ids = append(ids, id)
	}
	known, err := scanListers(tx.QueryContext(ctx, "SELECT "+listerColumns+
		" FROM lister WHERE id IN (SELECT value FROM json_each(?))", jsonArray(ids)))
	if err != nil {
		return err
	}
	if len(known) == len(ids) {
		return nil
	}
	for _, l := range known {
		delete(listers, l.ID)
	}
	first, firstIndex := uuid.Nil, -1
	for id, i := range listers {
		if firstIndex < 0 || i < firstIndex {
			first, firstIndex = id, i
		}
	}
	return revisit.Invalidf(fmt.Sprintf("origins[%d].lister_id", firstIndex), "unknown lister %s", first)
}

// inBatch returns err, an input error about the element i of a batch, with
// its field prefixed by the element's place ("origins[3].url").
func inBatch(batch string, i int, err error) error {
	var e *revisit.Error
	if !errors.As(err, &e) {
		return revisit.Invalidf(fmt.Sprintf("%s[%d]", batch, i), "%v", err)
	}
	field := fmt.Sprintf("%s[%d]", batch, i)
	if e.Field != "" {
		field += "." + e.Field
	}
	return &revisit.Error{Code: e.Code, Field: field, Message: e.Message}
}

// extraArgs returns the stored form of extra loader arguments (nil is the
// empty object).
func extraArgs(m map[string]any) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", revisit.Invalidf("extra_loader_arguments", "not representable as JSON: %v", err)
	}
	return string(b), nil
}

// ListedOriginsGet returns one page in (lister_id, url, visit_type) order.
// It reads one row more than the page to know whether another page follows.
func (s *Store) ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error) {
	var page revisit.ListedOriginPage
	limit := f.Limit
	switch {
	case limit == 0:
		limit = defaultPageSize
	case limit < 0 || limit > maxPageSize:
		return page, revisit.Invalidf("limit", "must be between 1 and %d, not %d", maxPageSize, f.Limit)
	}
	var (
		where []string
		args  []any
	)
	// cond adds a condition, numbering its placeholders after the previous.
	cond := func(sql string, vs ...any) {
		parts := strings.Split(sql, "?")
		var b strings.Builder
		for i, v := range vs {
			args = append(args, v)
			fmt.Fprintf(&b, "%s?%d", parts[i], len(args))
		}
		b.WriteString(parts[len(vs)])
		where = append(where, b.String())
	}
	if f.ListerID != nil {
		cond("lister_id = ?", *f.ListerID)
	}
	if len(f.URLs) > 0 {
		cond("url IN (SELECT value FROM json_each(?))", jsonArray(f.URLs))
	}
	if f.VisitType != "" {
		cond("visit_type = ?", f.VisitType)
	}
	switch f.Enabled {
	case revisit.OnlyEnabled:
		cond("enabled = ?", true)
	case revisit.OnlyDisabled:
		cond("enabled = ?", false)
	case revisit.AnyEnabled:
	default:
		return page, revisit.Invalidf("enabled", "unknown enabled filter %d", f.Enabled)
	}
	if f.PageToken != "" {
		k, err := decodePageToken(f.PageToken)
		if err != nil {
			return page, err
		}
		cond("(lister_id, url, visit_type) > (?, ?, ?)", k.lister, k.url, k.visitType)
	}
	q := "SELECT " + grabsql.Columns + " FROM listed_origin"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limit+1)
	q += fmt.Sprintf(" ORDER BY lister_id, url, visit_type LIMIT ?%d", len(args))
	cs, err := scanCandidates(s.r.QueryContext(ctx, q, args...))
	if err != nil {
		return page, translate("get listed origins", err)
	}
	if len(cs) > limit {
		cs = cs[:limit]
		last := cs[limit-1].Origin
		page.NextPageToken = encodePageToken(listedKey{last.ListerID, last.URL, last.VisitType})
	}
	page.Origins = make([]revisit.ListedOrigin, len(cs))
	for i, c := range cs {
		page.Origins[i] = c.Origin
	}
	return page, nil
}

// encodePageToken returns the opaque token of a page ending at k: the
// base64url form of the JSON array [lister_id, url, visit_type].
func encodePageToken(k listedKey) string {
	b, _ := json.Marshal([]string{k.lister.String(), k.url, k.visitType})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePageToken reverses encodePageToken.
func decodePageToken(token string) (listedKey, error) {
	bad := revisit.Invalidf("page_token", "malformed page token")
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return listedKey{}, bad
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) != 3 {
		return listedKey{}, bad
	}
	id, err := uuid.Parse(parts[0])
	if err != nil {
		return listedKey{}, bad
	}
	return listedKey{id, parts[1], parts[2]}, nil
}

// ListerVisitTypes returns the visit types of a lister's origins, sorted.
func (s *Store) ListerVisitTypes(ctx context.Context, listerID uuid.UUID) ([]string, error) {
	rows, err := s.r.QueryContext(ctx,
		"SELECT DISTINCT visit_type FROM listed_origin WHERE lister_id = ? ORDER BY visit_type", listerID)
	if err != nil {
		return nil, translate("get lister visit types", err)
	}
	defer rows.Close()
	vts := []string{}
	for rows.Next() {
		var vt string
		if err := rows.Scan(&vt); err != nil {
			return nil, translate("get lister visit types", err)
		}
		vts = append(vts, vt)
	}
	return vts, translate("get lister visit types", rows.Err())
}

// scanCandidates reads the rows of a query returning grabsql.Columns.
func scanCandidates(rows *sql.Rows, err error) ([]grabsql.Candidate, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cs []grabsql.Candidate
	for rows.Next() {
		var (
			c      grabsql.Candidate
			o      = &c.Origin
			isFork sql.NullBool
			forked sql.NullString
		)
		if err := rows.Scan(&c.ID, &o.ListerID, &o.URL, &o.VisitType, jsonCol{&o.ExtraLoaderArguments},
			&o.Enabled, timeCol{&o.FirstSeen}, timeCol{&o.LastSeen}, timePtrCol{&o.LastUpdate},
			&isFork, &forked, int64PtrCol{&c.QueuePosition}); err != nil {
			return nil, err
		}
		if o.ExtraLoaderArguments == nil {
			o.ExtraLoaderArguments = map[string]any{}
		}
		if isFork.Valid {
			o.IsFork = &isFork.Bool
		}
		if forked.Valid {
			o.ForkedFromURL = &forked.String
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}
