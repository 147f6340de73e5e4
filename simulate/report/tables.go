package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/revisit-sched/revisit/simulate"
)

// table is rows of text under a header, as summary.txt and the page show
// them.
type table struct {
	Columns []column
	Rows    [][]string
}

// column is a column of a table.
type column struct {
	Title string
	// Number is whether the column holds numbers, aligned right.
	Number bool
}

// text writes the table as aligned plain text, two spaces between columns.
func (t table) text(b *bytes.Buffer) {
	widths := make([]int, len(t.Columns))
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Title
	}
	lines := append([][]string{header}, t.Rows...)
	for _, row := range lines {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range lines {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				line.WriteString("  ")
			}
			if t.Columns[i].Number {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// counterNames name upstream's four counters, in its order.
var counterNames = []string{"Total visits", "Uneventful visits", "Eventful visits", "Very long running tasks"}

func counterValues(c simulate.Counters) []int64 {
	return []int64{c.Total, c.Uneventful, c.Eventful, c.VeryLong}
}

// countersTable shows the runs' counters side by side, a column a run.
func countersTable(runs []simulate.Result) table {
	t := table{Columns: []column{{Title: ""}}}
	for _, r := range runs {
		t.Columns = append(t.Columns, column{Title: r.Name, Number: true})
	}
	for i, name := range counterNames {
		row := []string{name}
		for _, r := range runs {
			row = append(row, strconv.FormatInt(counterValues(r.Counters)[i], 10))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// policyTable shows the visits each policy chose.
func policyTable(r simulate.Result) table {
	t := table{Columns: []column{{Title: "visit type"}, {Title: "policy"}, {Title: "weight", Number: true},
		{Title: "configured %", Number: true}, {Title: "visits", Number: true}, {Title: "share %", Number: true},
		{Title: "eventful", Number: true}, {Title: "eventful %", Number: true}}}
	for _, p := range r.Policies {
		t.Rows = append(t.Rows, []string{p.VisitType, string(p.Policy), strconv.Itoa(p.Weight),
			percent(p.Configured), strconv.FormatInt(p.Visits, 10), percent(p.Share),
			strconv.FormatInt(p.Eventful, 10), ratio(p.Eventful, p.Visits)})
	}
	return t
}

// latencyTable shows the first-visit latencies.
func latencyTable(r simulate.Result) table {
	t := table{Columns: []column{{Title: "visit type"}, {Title: "new origins", Number: true},
		{Title: "visited", Number: true}, {Title: "p50", Number: true}, {Title: "p90", Number: true},
		{Title: "p99", Number: true}}}
	for _, l := range r.FirstVisits {
		row := []string{l.VisitType, strconv.Itoa(l.New), strconv.Itoa(l.Visited), "-", "-", "-"}
		if l.Visited > 0 {
			row[3], row[4], row[5] = readable(l.P50), readable(l.P90), readable(l.P99)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// percent shows a fraction (0 to 1) as a percentage.
func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) }

// ratio shows n out of total as a percentage, "-" out of nothing.
func ratio(n, total int64) string {
	if total == 0 {
		return "-"
	}
	return percent(float64(n) / float64(total))
}

// readable shows a duration in the unit that reads best, to a tenth of
// it; in whole seconds below a few minutes.
func readable(d time.Duration) string {
	u := unitFor(d)
	tenths := 1
	if u.size == time.Second {
		tenths = 0
	}
	return strconv.FormatFloat(u.of(d), 'f', tenths, 64) + " " + u.abbr
}

// shortDuration shows a round duration briefly: "5m", "1h30m".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// worldsTable shows the configurations' ranks in each world they were
// compared in, a row a world and a column a configuration, then what each
// rank says.
func worldsTable(runs []simulate.Result) table {
	t := table{Columns: []column{{Title: "world"}}}
	for _, r := range runs {
		t.Columns = append(t.Columns, column{Title: r.Name, Number: true})
	}
	for k, w := range runs[0].Worlds {
		row := []string{w.World}
		for _, r := range runs {
			row = append(row, fmt.Sprintf("#%d (%d)", r.Worlds[k].Rank, r.Worlds[k].Eventful))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// robustnessLines say, a line a configuration, how its rank holds.
func robustnessLines(runs []simulate.Result) []string {
	var lines []string
	for _, r := range runs {
		lines = append(lines, r.Name+": "+r.Robustness())
	}
	return lines
}

// worldsIntro introduces the ranks across worlds.
const worldsIntro = "Rank by eventful visits among the configurations compared (eventful visits in brackets; less than 10 % apart is a tie), " +
	"in this world and in variations of it, smaller:"

// summary is summary.txt: upstream's four counters, then the policy and
// first-visit latency tables, and the rank across worlds of a
// configuration compared to others.
func summary(r simulate.Result) []byte {
	var b bytes.Buffer
	for i, name := range counterNames {
		fmt.Fprintf(&b, "%s: %d\n", name, counterValues(r.Counters)[i])
	}
	b.WriteString("\nVisits by policy:\n")
	policyTable(r).text(&b)
	b.WriteString("\nFirst-visit latency (from listing to the end of the first visit):\n")
	latencyTable(r).text(&b)
	if len(r.Worlds) > 0 {
		b.WriteString("\n" + worldsIntro + "\n")
		t := table{Columns: []column{{Title: "world"}, {Title: "rank", Number: true}, {Title: "eventful", Number: true}}}
		for _, w := range r.Worlds {
			t.Rows = append(t.Rows, []string{w.World, strconv.Itoa(w.Rank), strconv.FormatInt(w.Eventful, 10)})
		}
		t.text(&b)
		b.WriteString(r.Robustness() + "\n")
	}
	return b.Bytes()
}
