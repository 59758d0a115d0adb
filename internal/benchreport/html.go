package benchreport

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
)

// ChartsDir is where Write puts the charts, beside the report.
const ChartsDir = "charts"

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"chartFile":  func(ch Chart) string { return ChartsDir + "/" + ChartFile(ch) },
	"chartTitle": chartTitle,
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Arbiter benchmarks, {{.When}}</title>
<style>
body { font: 15px/1.45 "Liberation Sans", Arial, Helvetica, sans-serif; color: #1d1d1f; margin: 0 auto; padding: 1rem 1.25rem 3rem; max-width: 1200px; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.3rem; margin: 2rem 0 .5rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
h3 { font-size: 1.1rem; margin: 1.6rem 0 .4rem; }
dl.run { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dl.run dt { font-weight: bold; }
dl.run dd { margin: 0; }
p.note { color: #444; max-width: 60rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .4rem 0 .8rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d0d0; padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: #f3f4f6; }
td.num, th.num { text-align: right; white-space: nowrap; }
p.caption { color: #444; margin: .6rem 0 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 1rem; }
.charts figure { margin: 0; }
.charts img { width: 100%; height: auto; border: 1px solid #e5e5e5; padding-top: .4rem; box-sizing: border-box; }
@media (max-width: 700px) { .charts { grid-template-columns: 1fr; } }
</style>
</head>
<body>
<h1>Arbiter benchmarks</h1>
<dl class="run">
{{range .Run}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
{{if .Compared}}
<h2 id="side-by-side">Side by side</h2>
<p class="note">{{.RatioNote}}</p>
{{range .Compared}}
<h3 id="{{.ID}}">{{.Title}}</h3>
{{template "table" .}}
{{with .Own}}{{template "table" .}}{{end}}
{{if .Charts}}<div class="charts">
{{range .Charts}}<figure><img src="{{chartFile .}}" alt="{{chartTitle .}}"></figure>
{{end}}</div>{{end}}
{{end}}
{{end}}
{{if .Alone}}
<h2 id="alone">One system alone</h2>
<p class="note">Benchmarks whose figures name no system: Arbiter's scheduler core and API unless the benchmark says otherwise.</p>
{{range .Alone}}<h3>{{.Title}}</h3>
{{template "table" .}}
{{end}}
{{end}}
</body>
</html>
{{define "table"}}{{if .Caption}}<p class="caption">{{.Caption}}:</p>{{end}}<div class="scroll"><table>
<tr>{{range .Header}}<th{{if .Numeric}} class="num"{{end}}>{{.Text}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Numeric}} class="num"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
`))

type htmlCell struct {
	Text    string
	Numeric bool
}

type htmlTable struct {
	ID, Title, Caption string
	Header             []htmlCell
	Rows               [][]htmlCell
	Own                *htmlTable
	Charts             []Chart
}

func toHTML(t table) htmlTable {
	h := htmlTable{Title: t.Title, Charts: t.Charts}
	for i, c := range t.Header {
		h.Header = append(h.Header, htmlCell{c, t.numeric(i)})
	}
	for _, row := range t.Rows {
		var r []htmlCell
		for i, c := range row {
			r = append(r, htmlCell{c, t.numeric(i)})
		}
		h.Rows = append(h.Rows, r)
	}
	if t.Own != nil {
		own := toHTML(*t.Own)
		own.Caption = t.Own.Title
		h.Own = &own
	}
	return h
}

// HTML writes the report as a page whose charts are the SVG files in ChartsDir beside it.
func HTML(run Run, r Report) ([]byte, error) {
	data := struct {
		When      string
		Run       [][2]string
		RatioNote string
		Compared  []htmlTable
		Alone     []htmlTable
	}{When: run.Date.UTC().Format("2006-01-02 15:04 UTC"), Run: runLines(run), RatioNote: ratioNote}
	for _, c := range r.Compared {
		t := toHTML(comparisonTable(c))
		t.ID = c.Benchmark
		data.Compared = append(data.Compared, t)
	}
	for _, t := range aloneTables(r.Alone) {
		data.Alone = append(data.Alone, toHTML(t))
	}
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write writes the report into dir: report.md, report.html and a chart per comparison in
// dir/charts (the charts of an earlier report removed first, so that none outlives its run).
func Write(dir string, run Run, r Report) error {
	charts := filepath.Join(dir, ChartsDir)
	if err := os.RemoveAll(charts); err != nil {
		return err
	}
	if err := os.MkdirAll(charts, 0o755); err != nil {
		return err
	}
	for _, c := range r.Compared {
		for _, ch := range c.Charts {
			svg, err := DrawChart(ch)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(charts, ChartFile(ch)), svg, 0o644); err != nil {
				return err
			}
		}
	}
	var md bytes.Buffer
	md.WriteString("# Arbiter benchmarks\n\n")
	if err := Markdown(&md, run, r, 2, ChartsDir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	doc, err := HTML(run, r)
	if err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "report.html"), doc, 0o644)
}
