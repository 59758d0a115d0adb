package benchreport

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ChartWidth and ChartHeight are a chart's size: at 800 px across its text stays at about
// the size of the page's.
const (
	ChartWidth  = 15 * vg.Centimeter
	ChartHeight = 9 * vg.Centimeter
)

// systemColors tell the systems apart in every chart alike; Arbiter's blue and Kueue's orange
// differ for the colour-blind too.
var systemColors = map[System]color.Color{
	Arbiter:       color.RGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff},
	Kueue:         color.RGBA{R: 0xe0, G: 0x7b, B: 0x10, A: 0xff},
	KueueHarness:  color.RGBA{R: 0xf2, G: 0xc1, B: 0x80, A: 0xff},
	KubeScheduler: color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff},
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// ChartFile is the name of a chart's SVG file: the benchmark and figure, e.g.
// PeerKueue-p99-s.svg, pods/s written pods-per-s.
func ChartFile(ch Chart) string {
	name := strings.ReplaceAll(ch.Name, "/", "-per-")
	return unsafeFileChars.ReplaceAllString(ch.Benchmark+"-"+name, "_") + ".svg"
}

// chartTitle names what a chart shows and which way is better, where the unit says.
func chartTitle(ch Chart) string {
	t := ch.Benchmark + ": " + Label(ch.Name)
	if b := Better(ch.Name); b != "" {
		t += ", " + b + " is better"
	}
	return t
}

// DrawChart draws a chart as SVG: for each case a group of bars, one per system, each with
// its value written above it.
func DrawChart(ch Chart) ([]byte, error) {
	if len(ch.Cases) == 0 || len(ch.Systems) == 0 {
		return nil, fmt.Errorf("the chart of %s %s has no bars", ch.Benchmark, ch.Name)
	}
	p := plot.New()
	sans(&p.Title.TextStyle, 13)
	sans(&p.Y.Label.TextStyle, 11)
	sans(&p.X.Tick.Label, 11)
	sans(&p.Y.Tick.Label, 10)
	sans(&p.Legend.TextStyle, 11)
	p.Title.Text = chartTitle(ch)
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = Label(ch.Name)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.Padding = vg.Points(2)
	p.Y.Padding = 0
	p.Y.Tick.Marker = numberTicks{}

	cases := make([]string, len(ch.Cases))
	for i, c := range ch.Cases {
		cases[i] = strings.ReplaceAll(c, "_", " ")
		if c == "" {
			cases[i] = ch.Benchmark
		}
	}
	p.NominalX(cases...)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	n := len(ch.Systems)
	// The bars of a case share at most 70 % of the space between cases.
	groupWidth := 0.7 * float64(ChartWidth-vg.Centimeter*2) / float64(len(cases))
	width := vg.Length(math.Min(groupWidth/float64(n), float64(vg.Points(56))))
	top, bottom := 0.0, 0.0
	for i, s := range ch.Systems {
		values := make(plotter.Values, len(ch.Cases))
		var xys plotter.XYs
		var labels []string
		for ci, c := range ch.Cases {
			for _, b := range ch.Bars {
				if b.Case == c && b.System == s {
					values[ci] = b.Value
					xys = append(xys, plotter.XY{X: float64(ci), Y: b.Value})
					labels = append(labels, Number(b.Value))
					top, bottom = math.Max(top, b.Value), math.Min(bottom, b.Value)
				}
			}
		}
		bars, err := plotter.NewBarChart(values, width)
		if err != nil {
			return nil, fmt.Errorf("the chart of %s %s: %w", ch.Benchmark, ch.Name, err)
		}
		bars.Color = systemColors[s]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		p.Add(bars)
		p.Legend.Add(s.Title(), bars)
		if len(xys) == 0 {
			continue
		}
		values2, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, fmt.Errorf("the labels of %s %s: %w", ch.Benchmark, ch.Name, err)
		}
		for j := range values2.TextStyle {
			sans(&values2.TextStyle[j], 9)
			values2.TextStyle[j].XAlign = text.XCenter
		}
		values2.Offset = vg.Point{X: bars.Offset, Y: vg.Points(2)}
		p.Add(values2)
	}
	// Each case gets the same room, its bars in the middle of it.
	p.X.Min, p.X.Max = -0.5, float64(len(cases))-0.5
	// Bars start at zero; above the tallest, room for its value and the legend.
	p.Y.Min = bottom * 1.1
	p.Y.Max = top * (1.15 + 0.1*float64(n))
	if top == 0 {
		p.Y.Max = 1
	}
	c := vgsvg.New(ChartWidth, ChartHeight)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// numberTicks are gonum's default ticks labelled as the tables write numbers (25, not 25.00).
type numberTicks struct{}

func (numberTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = Number(ticks[i].Value)
		}
	}
	return ticks
}

// sans sets a text style to the sans-serif Liberation font (the plot's default is its serif),
// of size points.
func sans(s *text.Style, points float64) {
	s.Font.Variant = "Sans"
	s.Font.Size = vg.Points(points)
}
