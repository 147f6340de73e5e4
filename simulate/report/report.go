// Package report writes what simulated runs measured (simulate.Result) as
// files: upstream-compatible metrics.csv, the other measures per sample,
// a plain-text summary, SVG and PNG plots, and one self-contained HTML
// page with everything. The same results give the same bytes.
package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/revisit-sched/revisit/simulate"
)

// plotsDir is the folder of the plots in the report's folder.
const plotsDir = "plots"

// Write writes the report of results into dir, creating it if missing.
// With one result its metrics.csv, samples.csv and summary.txt go in dir
// itself; with several, each result's go in a folder named after it.
// plots/ and report.html show them all.
func Write(dir string, results []simulate.Result) error {
	if len(results) == 0 {
		return errors.New("simulation report: no run to report on")
	}
	for _, r := range results {
		if err := check(r); err != nil {
			return fmt.Errorf("simulation report: run %q: %w", r.Name, err)
		}
	}
	if err := write(dir, results); err != nil {
		return fmt.Errorf("simulation report: %w", err)
	}
	return nil
}

func write(dir string, results []simulate.Result) error {
	dirs := runDirs(results)
	for i, r := range results {
		if err := writeRun(filepath.Join(dir, dirs[i]), r); err != nil {
			return err
		}
	}
	charts, err := newFigures(results).charts()
	if err != nil {
		return err
	}
	figures := make([]figure, len(charts))
	for i, c := range charts {
		if figures[i], err = writeChart(filepath.Join(dir, plotsDir), c); err != nil {
			return err
		}
	}
	page, err := html(results, dirs, figures)
	if err != nil {
		return err
	}
	return writeFile(dir, "report.html", page)
}

// check reports what in r would make a wrong report.
func check(r simulate.Result) error {
	for _, s := range r.Samples {
		if len(s.ByType) != len(r.VisitTypes) {
			return fmt.Errorf("the sample of %s has %d visit types, the run %d (%s)",
				s.Time.UTC().Format("2006-01-02 15:04:05"), len(s.ByType), len(r.VisitTypes),
				strings.Join(r.VisitTypes, ", "))
		}
	}
	h := r.Runtimes
	if len(h.Counts) > 0 && len(h.Counts) != len(h.Bounds)+1 {
		return fmt.Errorf("the runtime histogram has %d bounds and %d counts: it needs a count more than bounds",
			len(h.Bounds), len(h.Counts))
	}
	return nil
}

// runDirs are the folders of the runs' files, relative to the report's:
// the report's own with one run, else one a run named after it.
func runDirs(results []simulate.Result) []string {
	if len(results) == 1 {
		return []string{""}
	}
	names := make([]string, len(results))
	for i, r := range results {
		names[i] = r.Name
	}
	return slugs(names, "run", plotsDir)
}

// writeRun writes the files of one run into dir.
func writeRun(dir string, r simulate.Result) error {
	metrics, err := metricsCSV(r)
	if err != nil {
		return err
	}
	samples, err := samplesCSV(r)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"metrics.csv", metrics}, {"samples.csv", samples}, {"summary.txt", summary(r)}} {
		if err := writeFile(dir, f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes data to the file name in dir, creating dir if missing.
func writeFile(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// slugs are file names for names: lower-case letters, digits and dashes,
// fallback for a name with none, each different from the others and from
// taken.
func slugs(names []string, fallback string, taken ...string) []string {
	used := make(map[string]bool)
	for _, t := range taken {
		used[t] = true
	}
	out := make([]string, len(names))
	for i, name := range names {
		base := slug(name)
		if base == "" {
			base = fallback
		}
		s := base
		for n := 2; used[s]; n++ {
			s = fmt.Sprintf("%s-%d", base, n)
		}
		used[s] = true
		out[i] = s
	}
	return out
}

// slug lower-cases name and turns each run of other characters than
// letters a to z and digits into a dash.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
