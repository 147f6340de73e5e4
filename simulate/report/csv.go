package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"time"

	"github.com/revisit-sched/revisit/simulate"
)

// metricsHeader is the header of upstream's metrics CSV.
var metricsHeader = []string{"timestamp", "known_origins", "enabled_origins", "never_visited_origins",
	"origins_with_pending_changes"}

// metricsCSV is metrics.csv: the scheduler metrics of every sample, as
// upstream's simulator writes them (Python's csv module, so CRLF line
// ends).
func metricsCSV(r simulate.Result) ([]byte, error) {
	rows := [][]string{metricsHeader}
	for _, s := range r.Samples {
		rows = append(rows, []string{pythonTime(s.Time), itoa(s.Known), itoa(s.Enabled), itoa(s.NeverVisited),
			itoa(s.PendingChanges)})
	}
	return writeCSV(rows, true)
}

// samplesCSV is samples.csv: the rest of every sample, a group of columns
// per visit type named after it.
func samplesCSV(r simulate.Result) ([]byte, error) {
	header := []string{"time", "visits"}
	for _, vt := range r.VisitTypes {
		header = append(header, vt+"_queue_depth", vt+"_utilization", vt+"_visited",
			vt+"_freshness_p50_seconds", vt+"_freshness_p90_seconds", vt+"_freshness_p99_seconds")
	}
	rows := [][]string{header}
	for _, s := range r.Samples {
		row := []string{s.Time.UTC().Format(time.RFC3339Nano), itoa(s.Visits)}
		for _, ts := range s.ByType {
			row = append(row, strconv.Itoa(ts.QueueDepth), strconv.FormatFloat(ts.Utilization, 'f', 4, 64),
				strconv.Itoa(ts.Visited), seconds(ts.Freshness.P50), seconds(ts.Freshness.P90),
				seconds(ts.Freshness.P99))
		}
		rows = append(rows, row)
	}
	return writeCSV(rows, false)
}

func writeCSV(rows [][]string, crlf bool) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = crlf
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pythonTime formats t as Python's str() does a datetime in UTC:
// "2026-01-01 00:00:00+00:00", with microseconds only when there are some.
func pythonTime(t time.Time) string {
	t = t.UTC()
	s := t.Format(time.DateTime)
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + "+00:00"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// seconds shows a duration in seconds, with a fraction only when it has one.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
