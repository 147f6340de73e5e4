package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// chart is one figure of the report: a plot, its legend drawn at its
// right, and the caption the page shows under it.
type chart struct {
	// name is the figure's file name in plots/, without extension.
	name    string
	caption string
	plot    *plot.Plot
	legend  plot.Legend
	// height is the figure's height; its width is chartWidth.
	height vg.Length
	// horizontal is whether bars lie along the x axis, their categories
	// on the y axis.
	horizontal bool
}

const (
	chartWidth  = 8 * vg.Inch
	chartHeight = 4 * vg.Inch
	// pngDPI makes PNGs sharp enough to paste in a ticket.
	pngDPI = 144
)

// palette holds the colours of the series: the Okabe-Ito colours, which
// colour-blind readers tell apart, the yellow left out for white paper.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xb2, 0xff}, // blue
	color.RGBA{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9e, 0x73, 0xff}, // bluish green
	color.RGBA{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	color.RGBA{0xe6, 0x9f, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	color.Black,
}

// dashes tell apart the series of one colour: solid, dashed, dotted.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}}

func colour(i int) color.Color { return palette[i%len(palette)] }

// tint mixes c with white: the lighter bars of a pair.
func tint(c color.Color, white float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8) + (255-float64(v>>8))*white) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}

// sans is the figures' typeface at a size in points.
func sans(size float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(size)}
}

// newChart makes a chart of the standard size with its title and axis
// labels.
func newChart(name, title, xLabel, yLabel, caption string) *chart {
	p := plot.New()
	p.Title.Text = "revisit simulation: " + title
	p.Title.TextStyle.Font = sans(13)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11)
		a.Tick.Label.Font = sans(10)
		a.Tick.Marker = numberTicks{}
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	leg := plot.NewLegend()
	leg.TextStyle.Font = sans(10)
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(3)
	return &chart{name: name, caption: caption, plot: p, legend: leg, height: chartHeight}
}

// grid adds grid lines at the x axis's labels, the y axis's, or both.
func (ch *chart) grid(x, y bool) {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = nil, nil
	if x {
		g.Vertical.Color = color.Gray{Y: 210}
	}
	if y {
		g.Horizontal.Color = color.Gray{Y: 210}
	}
	ch.plot.Add(g)
}

// draw draws the chart on c: a white background, the plot, and the legend
// in a column at the plot's right, level with its top.
func (ch *chart) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	r := ch.legend.Rectangle(c)
	legendWidth := r.Max.X - r.Min.X
	if legendWidth > 0 {
		legendWidth += vg.Points(12)
	}
	ch.plot.Draw(draw.Crop(c, 0, -legendWidth, 0, 0))
	title := ch.plot.Title.TextStyle.Rectangle(ch.plot.Title.Text).Size().Y + ch.plot.Title.Padding
	ch.legend.Draw(draw.Crop(c, c.Size().X-legendWidth+vg.Points(6), 0, 0, -title))
}

// svg renders the chart as an SVG document.
func (ch *chart) svg() ([]byte, error) {
	c := vgsvg.New(chartWidth, ch.height)
	ch.draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("drawing %s.svg: %w", ch.name, err)
	}
	// The SVG names the font the figure was measured with; Arial has the
	// same metrics, then any sans-serif font does, where it is missing.
	return bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,sans-serif;")), nil
}

// png renders the chart as a PNG image.
func (ch *chart) png() ([]byte, error) {
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartWidth, ch.height), vgimg.UseDPI(pngDPI))}
	ch.draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("drawing %s.png: %w", ch.name, err)
	}
	return b.Bytes(), nil
}

// line adds a line of points to the chart, and to its legend as label.
func (ch *chart) line(label string, xys plotter.XYs, c color.Color, dash []vg.Length) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", ch.name, label, err)
	}
	l.Color, l.Dashes, l.Width = c, dash, vg.Points(1.5)
	ch.plot.Add(l)
	ch.legend.Add(label, l)
	return nil
}

// bars adds bars, one a category, to the chart and to its legend as label;
// the group's ith bar of n sits at its place in the category.
func (ch *chart) bars(label string, values []float64, c color.Color, i, n int, width vg.Length) error {
	b, err := plotter.NewBarChart(plotter.Values(values), width)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", ch.name, label, err)
	}
	b.Color = c
	b.LineStyle.Width = 0
	b.Offset = (vg.Length(i) - vg.Length(n-1)/2) * width
	b.Horizontal = ch.horizontal
	ch.plot.Add(b)
	ch.legend.Add(label, b)
	return nil
}

// categories names the categories of a bar chart on its category axis,
// the y axis when its bars are horizontal, the x axis else; each takes an
// equal room.
func (ch *chart) categories(names []string) {
	a := &ch.plot.X
	if ch.horizontal {
		ch.plot.NominalY(names...)
		a = &ch.plot.Y
	} else {
		ch.plot.NominalX(names...)
	}
	a.Min, a.Max = -0.5, float64(len(names))-0.5
}

// numberTicks are gonum's default ticks without the zero decimals it
// pads its labels with: "25", not "25.00".
type numberTicks struct{}

func (numberTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if strings.Contains(t.Label, ".") && !strings.Contains(t.Label, "e") {
			ticks[i].Label = strings.TrimSuffix(strings.TrimRight(t.Label, "0"), ".")
		}
	}
	return ticks
}

// timeAxis makes the chart's x axis the simulated time from start to end,
// labelled at round hours or days.
func (ch *chart) timeAxis(start, end time.Time) {
	p := ch.plot
	p.X.Min, p.X.Max = unix(start), unix(end)
	step := tickStep(end.Sub(start))
	format := "Jan 2"
	if step < 24*time.Hour {
		format = "Jan 2 15:04"
	}
	p.X.Tick.Marker = plot.TimeTicks{Ticker: timeTicker(step), Format: format}
}

// unix is t as the x coordinate of the time axis.
func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// tickStep is the round interval that puts at most 6 labels on a time axis
// spanning span, so that they fit beside a legend.
func tickStep(span time.Duration) time.Duration {
	const day = 24 * time.Hour
	for _, s := range []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
		day, 2 * day, 7 * day, 14 * day} {
		if span <= 5*s {
			return s
		}
	}
	weeks := math.Ceil(span.Hours() / (5 * 7 * 24))
	return time.Duration(weeks) * 7 * day
}

// timeTicker marks a time axis every step, aligned on UTC midnight, with
// a minor mark at each fourth of a step. Its labels are placeholders that
// plot.TimeTicks turns into dates.
func timeTicker(step time.Duration) plot.Ticker {
	minor := step.Seconds() / 4
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ticks []plot.Tick
		for v := math.Ceil(min/minor) * minor; v <= max; v += minor {
			t := plot.Tick{Value: v}
			if math.Mod(v, step.Seconds()) == 0 {
				t.Label = "major"
			}
			ticks = append(ticks, t)
		}
		return ticks
	})
}

// durationUnit is the unit of an axis or a table cell of durations.
type durationUnit struct {
	name, abbr string
	size       time.Duration
}

// unitFor is the unit that shows durations up to max readably.
func unitFor(max time.Duration) durationUnit {
	switch {
	case max >= 72*time.Hour:
		return durationUnit{"days", "d", 24 * time.Hour}
	case max >= 3*time.Hour:
		return durationUnit{"hours", "h", time.Hour}
	case max >= 3*time.Minute:
		return durationUnit{"minutes", "min", time.Minute}
	}
	return durationUnit{"seconds", "s", time.Second}
}

func (u durationUnit) of(d time.Duration) float64 { return float64(d) / float64(u.size) }
