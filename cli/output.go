package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit/config"
)

// format is how commands print their results.
type format int

const (
	formatTable format = iota
	formatJSON
	formatCSV
)

func parseFormat(s string) (format, error) {
	switch s {
	case "table", "":
		return formatTable, nil
	case "json":
		return formatJSON, nil
	case "csv":
		return formatCSV, nil
	}
	return 0, fmt.Errorf("--format: %q is not one of table, json, csv", s)
}

// column is one field of printed rows.
type column struct {
	name string
	// wide columns are left out of tables (JSON and CSV have them).
	wide bool
}

func cols(names ...string) []column {
	c := make([]column, len(names))
	for i, n := range names {
		c[i] = column{name: n}
	}
	return c
}

// Values in rows are rendered by type: nil and nil pointers are null (empty
// in tables and CSV), times are RFC 3339 in UTC, durations as
// config.FormatDuration writes them, byte slices in hex, maps and slices as
// JSON (in tables and CSV) or natively (in JSON). orText prints a text in
// tables where JSON has null.
type orText struct {
	v    any
	text string
}

// timeLayout is RFC 3339 with the fraction of a second when there is one.
const timeLayout = "2006-01-02T15:04:05.999999Z07:00"

// normalize turns v into what JSON output holds: nil, string, bool,
// numbers, json.RawMessage, maps and slices.
func normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case orText:
		return normalize(x.v)
	case time.Time:
		if x.IsZero() {
			return nil
		}
		return x.UTC().Format(timeLayout)
	case *time.Time:
		if x == nil {
			return nil
		}
		return normalize(*x)
	case time.Duration:
		if x == 0 {
			return nil
		}
		return config.FormatDuration(x)
	case *string:
		if x == nil {
			return nil
		}
		return *x
	case *bool:
		if x == nil {
			return nil
		}
		return *x
	case *int64:
		if x == nil {
			return nil
		}
		return *x
	case *float64:
		if x == nil {
			return nil
		}
		return *x
	case []byte:
		if x == nil {
			return nil
		}
		return hex.EncodeToString(x)
	case json.RawMessage:
		if len(x) == 0 {
			return nil
		}
		return x
	case uuid.UUID:
		return x.String()
	case *uuid.UUID:
		if x == nil {
			return nil
		}
		return x.String()
	case fmt.Stringer:
		return x.String()
	}
	return v
}

// text renders v for tables and CSV.
func text(v any) string {
	if t, ok := v.(orText); ok && normalize(t.v) == nil {
		return t.text
	}
	switch x := normalize(v).(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.RawMessage:
		var b bytes.Buffer
		if json.Compact(&b, x) == nil {
			return b.String()
		}
		return string(x)
	case []string:
		return strings.Join(x, ",")
	default:
		if m := reflect.ValueOf(x); isCounts(m) {
			return mapText(m)
		}
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

// isCounts reports whether m is a map of numbers by text key (results by
// outcome, leases by queue); other maps (a loader's arguments) are data,
// written as JSON.
func isCounts(m reflect.Value) bool {
	if m.Kind() != reflect.Map || m.Type().Key().Kind() != reflect.String {
		return false
	}
	switch m.Type().Elem().Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
		return true
	}
	return false
}

// mapText renders a map of counts as a table cell: "key: value" pairs in
// key order, as the console writes them ("eventful: 3, failed: 1").
func mapText(m reflect.Value) string {
	keys := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + text(m.MapIndex(reflect.ValueOf(k).Convert(m.Type().Key())).Interface())
	}
	return strings.Join(parts, ", ")
}

// rowWriter prints rows of the same columns as they come: a table, a JSON
// array of objects, or CSV with a header. Close ends the output; it must be
// called even when there was no row.
type rowWriter struct {
	w      io.Writer
	format format
	cols   []column
	n      int
	tw     *tabwriter.Writer
	cw     *csv.Writer
	err    error
}

func (a *app) rows(cols []column) *rowWriter {
	rw := &rowWriter{w: a.env.Stdout, format: a.format, cols: cols}
	switch a.format {
	case formatTable:
		rw.tw = tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		var head []string
		for _, c := range cols {
			if !c.wide {
				head = append(head, strings.ToUpper(c.name))
			}
		}
		_, rw.err = fmt.Fprintln(rw.tw, strings.Join(head, "\t"))
	case formatCSV:
		rw.cw = csv.NewWriter(a.env.Stdout)
		head := make([]string, len(cols))
		for i, c := range cols {
			head[i] = c.name
		}
		rw.err = rw.cw.Write(head)
	case formatJSON:
		_, rw.err = io.WriteString(a.env.Stdout, "[")
	}
	return rw
}

// Row prints one row; vals follow the columns.
func (rw *rowWriter) Row(vals ...any) error {
	if rw.err != nil {
		return rw.err
	}
	if len(vals) != len(rw.cols) {
		panic(fmt.Sprintf("cli: row of %d values for %d columns", len(vals), len(rw.cols)))
	}
	rw.n++
	switch rw.format {
	case formatTable:
		var cells []string
		for i, c := range rw.cols {
			if !c.wide {
				cell := text(vals[i])
				if cell == "" {
					cell = "-"
				}
				cells = append(cells, strings.NewReplacer("\t", " ", "\n", " ").Replace(cell))
			}
		}
		_, rw.err = fmt.Fprintln(rw.tw, strings.Join(cells, "\t"))
	case formatCSV:
		rec := make([]string, len(vals))
		for i, v := range vals {
			rec[i] = text(v)
		}
		rw.err = rw.cw.Write(rec)
	case formatJSON:
		sep := ",\n"
		if rw.n == 1 {
			sep = "\n"
		}
		b, err := marshalObject(rw.cols, vals)
		if err != nil {
			rw.err = err
			return err
		}
		_, rw.err = fmt.Fprintf(rw.w, "%s  %s", sep, b)
	}
	return rw.err
}

// Flush writes out the rows so far, for output that follows a stream (a
// table is aligned anew at each flush).
func (rw *rowWriter) Flush() error {
	if rw.err != nil {
		return rw.err
	}
	switch rw.format {
	case formatTable:
		rw.err = rw.tw.Flush()
	case formatCSV:
		rw.cw.Flush()
		rw.err = rw.cw.Error()
	}
	return rw.err
}

// Close ends the output and returns the first write error.
func (rw *rowWriter) Close() error {
	if err := rw.Flush(); err != nil || rw.format != formatJSON {
		return err
	}
	end := "]\n"
	if rw.n > 0 {
		end = "\n]\n"
	}
	_, rw.err = io.WriteString(rw.w, end)
	return rw.err
}

// pageEnd ends one page of a paged listing printed to rw. With no next
// page, or with one that all does not ask for, it closes rw and says on
// stderr how to ask for the next ("revisit: more <more>: --page-token
// …"); it reports whether the caller goes on with next.
func (a *app) pageEnd(rw *rowWriter, next string, all bool, more string) (bool, error) {
	if next != "" && all {
		return true, nil
	}
	if err := rw.Close(); err != nil {
		return false, err
	}
	if next != "" {
		fmt.Fprintf(a.env.Stderr, "revisit: more %s: --page-token %s\n", more, next)
	}
	return false, nil
}

// marshalObject writes the columns and values as one JSON object, keys in
// column order.
func marshalObject(cols []column, vals []any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(c.name)
		b.Write(k)
		b.WriteString(": ")
		v, err := json.Marshal(normalize(vals[i]))
		if err != nil {
			return nil, fmt.Errorf("print %s: %w", c.name, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// printObject prints one record: "field  value" lines in a table, an object
// in JSON, a header and one row in CSV. Wide columns are shown too.
func (a *app) printObject(cols []column, vals ...any) error {
	switch a.format {
	case formatJSON:
		b, err := marshalObject(cols, vals)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
		_, err = a.env.Stdout.Write(out.Bytes())
		return err
	case formatCSV:
		rw := a.rows(cols)
		if err := rw.Row(vals...); err != nil {
			return err
		}
		return rw.Close()
	}
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
	for i, c := range cols {
		cell := text(vals[i])
		if cell == "" {
			cell = "-"
		}
		fmt.Fprintf(tw, "%s:\t%s\n", c.name, cell)
	}
	return tw.Flush()
}

// printSummary prints the outcome of a command that changes things: the
// sentence in a table, the fields as an object in JSON or a row in CSV.
func (a *app) printSummary(sentence string, cols []column, vals ...any) error {
	if a.format == formatTable {
		_, err := fmt.Fprintln(a.env.Stdout, sentence)
		return err
	}
	return a.printObject(cols, vals...)
}
