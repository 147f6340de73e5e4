package report

import (
	"bytes"
	_ "embed"
	"html/template"
	"path"
	"strings"
	"time"

	"github.com/revisit-sched/revisit/simulate"
)

//go:embed report.html.tmpl
var pageTemplate string

var pageTmpl = template.Must(template.New("report.html").Parse(pageTemplate))

// figure is a chart as the page shows it.
type figure struct {
	Name, Caption string
	// SVG is the chart's SVG element, to inline in the page.
	SVG template.HTML
}

// runView is a run as the page shows it.
type runView struct {
	Name     string
	Settings []string
	// Files are the paths of the run's files, relative to the page.
	Files             []string
	Policies, Latency table
}

// writeChart writes the chart as SVG and PNG into dir and returns it as the
// page shows it.
func writeChart(dir string, c *chart) (figure, error) {
	svg, err := c.svg()
	if err != nil {
		return figure{}, err
	}
	png, err := c.png()
	if err != nil {
		return figure{}, err
	}
	if err := writeFile(dir, c.name+".svg", svg); err != nil {
		return figure{}, err
	}
	if err := writeFile(dir, c.name+".png", png); err != nil {
		return figure{}, err
	}
	// The page takes the svg element, without the XML prolog of a file.
	element := string(svg[bytes.Index(svg, []byte("<svg")):])
	// The element is gonum's drawing, its text escaped by it.
	return figure{Name: c.name, Caption: c.caption, SVG: template.HTML(element)}, nil
}

// html is report.html: the runs' settings, counters, tables and figures.
func html(results []simulate.Result, dirs []string, figures []figure) ([]byte, error) {
	title := "revisit simulation: " + results[0].Name
	if len(results) > 1 {
		names := make([]string, len(results))
		for i, r := range results {
			names[i] = r.Name
		}
		title = "revisit simulation: " + strings.Join(names, " vs ")
	}
	runs := make([]runView, len(results))
	for i, r := range results {
		settings := append([]string{
			"simulated: " + r.Start.UTC().Format(time.DateTime) + " to " + r.End.UTC().Format(time.DateTime) +
				" UTC (" + readable(r.End.Sub(r.Start)) + ")",
			"visit types: " + strings.Join(r.VisitTypes, ", "),
		}, r.Settings...)
		settings = append(settings, "events processed: "+itoa(r.Events))
		var files []string
		for _, f := range []string{"metrics.csv", "samples.csv", "summary.txt"} {
			files = append(files, path.Join(dirs[i], f))
		}
		runs[i] = runView{Name: r.Name, Settings: settings, Files: files, Policies: policyTable(r),
			Latency: latencyTable(r)}
	}
	var worlds *table
	if len(results[0].Worlds) > 0 {
		t := worldsTable(results)
		worlds = &t
	}
	var b bytes.Buffer
	err := pageTmpl.Execute(&b, struct {
		Title       string
		Runs        []runView
		Counters    table
		Worlds      *table
		WorldsIntro string
		Robustness  []string
		Figures     []figure
	}{title, runs, countersTable(results), worlds, worldsIntro, robustnessLines(results), figures})
	return b.Bytes(), err
}
