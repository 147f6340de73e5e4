package sqlite

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"

	"github.com/revisit-sched/revisit/internal/kit/jsonobj"
)

// Values as SQLite stores them: times and durations are INTEGER
// microseconds (times since the Unix epoch, UTC), JSON is TEXT.

// micro returns the stored form of t.
func micro(t time.Time) int64 { return t.UnixMicro() }

// microPtr returns the stored form of an optional time (NULL for nil).
func microPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// nullMicro returns the stored form of an optional time, NULL for nil.
func nullMicro(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromMicro returns the time stored as v, in UTC.
func fromMicro(v int64) time.Time { return time.UnixMicro(v).UTC() }

// durationOrNull returns the stored form of a duration, NULL when zero
// ("not set").
func durationOrNull(d time.Duration) any {
	if d == 0 {
		return nil
	}
	return d.Microseconds()
}

// timeCol scans a NOT NULL time column.
type timeCol struct{ dst *time.Time }

func (c timeCol) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("time column holds %T, not an integer", src)
	}
	*c.dst = fromMicro(v)
	return nil
}

// timePtrCol scans a nullable time column (nil for NULL).
type timePtrCol struct{ dst **time.Time }

func (c timePtrCol) Scan(src any) error {
	if src == nil {
		*c.dst = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).Scan(src); err != nil {
		return err
	}
	*c.dst = &t
	return nil
}

// durationCol scans a nullable duration column (0 for NULL).
type durationCol struct{ dst *time.Duration }

func (c durationCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.dst = 0
	case int64:
		*c.dst = time.Duration(v) * time.Microsecond
	default:
		return fmt.Errorf("duration column holds %T, not an integer", src)
	}
	return nil
}

// int64PtrCol scans a nullable integer column (nil for NULL).
type int64PtrCol struct{ dst **int64 }

func (c int64PtrCol) Scan(src any) error {
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*c.dst = nil
	if n.Valid {
		*c.dst = &n.Int64
	}
	return nil
}

// objectCol scans a JSON object TEXT column into a map as jsonobj.Stored
// decodes it (never nil; "{}" without the JSON decoder).
type objectCol struct{ m *map[string]any }

func (c objectCol) Scan(src any) error {
	var data []byte
	switch v := src.(type) {
	case string:
		data = []byte(v)
	case []byte:
		data = v
	case nil:
	default:
		return fmt.Errorf("JSON column holds %T", src)
	}
	m, err := jsonobj.Stored(data)
	*c.m = m
	return err
}

// rawJSONCol scans a JSON TEXT column as raw JSON.
type rawJSONCol struct{ dst *json.RawMessage }

func (c rawJSONCol) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*c.dst = json.RawMessage(v)
	case []byte:
		*c.dst = bytes.Clone(v)
	case nil:
		*c.dst = nil
	default:
		return fmt.Errorf("JSON column holds %T", src)
	}
	return nil
}

// strPtr returns the stored form of an optional string (NULL for nil).
func strPtr[T ~string](s *T) any {
	if s == nil {
		return nil
	}
	return string(*s)
}

// boolPtr returns the stored form of an optional bool (NULL for nil).
func boolPtr(b *bool) driver.Value {
	if b == nil {
		return nil
	}
	return *b
}

// int64Ptr returns the stored form of an optional integer (NULL for nil).
func int64Ptr(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

// jsonArray returns the JSON array of vs, for json_each.
func jsonArray[T any](vs []T) string {
	b, err := json.Marshal(vs)
	if err != nil {
		// Only called with strings, uuids, integers and their arrays,
		// which always marshal.
		return "[]"
	}
	return string(b)
}
