package benchreport

import (
	"fmt"
	"slices"
	"strings"
)

// table is a table as both the Markdown and the HTML write it: the text of every cell.
type table struct {
	Title    string // the heading above it
	Header   []string
	Rows     [][]string
	Numeric  int  // columns from this one on hold numbers (aligned right)
	TextLast bool // but the last holds text
	Own      *table
	Charts   []Chart
}

// comparisonTable is a comparison's table: a row per case and figure, a column per system,
// then Arbiter's figure divided by each peer's; and the benchmark's own figures beneath.
func comparisonTable(c Comparison) table {
	t := table{Title: fmt.Sprintf("%s (package %s)", c.Benchmark, shortPackage(c.Package)), Header: []string{"case", "figure"}, Numeric: 2, Charts: c.Charts}
	hasCase := slices.ContainsFunc(c.Rows, func(r ComparisonRow) bool { return r.Case != "" })
	if !hasCase {
		t.Header, t.Numeric = t.Header[1:], 1
	}
	for _, s := range c.Systems {
		t.Header = append(t.Header, s.Title())
	}
	var ratios []System
	if slices.Contains(c.Systems, Arbiter) {
		for _, s := range ratioAgainst {
			if slices.ContainsFunc(c.Rows, func(r ComparisonRow) bool {
				return slices.ContainsFunc(r.Ratios, func(q Ratio) bool { return q.Of == s })
			}) {
				ratios = append(ratios, s)
				t.Header = append(t.Header, "Arbiter ÷ "+s.Short())
			}
		}
	}
	for _, r := range c.Rows {
		var row []string
		if hasCase {
			row = append(row, r.Case)
		}
		row = append(row, Label(r.Name))
		for _, s := range c.Systems {
			if v, ok := r.Values[s]; ok {
				row = append(row, valueText(r.Name, v))
			} else {
				row = append(row, "—")
			}
		}
		for _, s := range ratios {
			cell := "—"
			for _, q := range r.Ratios {
				if q.Of == s {
					cell = ratioText(q.Value)
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	if len(c.Own) > 0 {
		own := &table{Title: "Figures of the benchmark as a whole", Header: []string{"case", "figure", "value"}, Numeric: 2}
		ownCase := slices.ContainsFunc(c.Own, func(v Value) bool { return v.Case != "" })
		if !ownCase {
			own.Header, own.Numeric = own.Header[1:], 1
		}
		for _, v := range c.Own {
			var row []string
			if ownCase {
				row = append(row, v.Case)
			}
			label := Label(v.Name)
			if v.Name == "ns/op" {
				// A cluster benchmark runs once (-benchtime 1x): its op is the whole benchmark.
				label = "time per iteration"
			}
			own.Rows = append(own.Rows, append(row, label, valueText(v.Name, v)))
		}
		t.Own = own
	}
	return t
}

func ratioText(r float64) string {
	if r >= 10 {
		return Number(r)
	}
	return fmt.Sprintf("%.3g", r)
}

// standardColumns are the figures go test writes with -benchmem, given columns of their own in
// the table of benchmarks alone; every other figure goes to its last column.
var standardColumns = []string{"ns/op", "B/op", "allocs/op"}

// aloneTables are the benchmarks of one system alone, a table per package.
func aloneTables(rows []AloneRow) []table {
	var out []table
	index := map[string]int{}
	for _, r := range rows {
		i, ok := index[r.Package]
		if !ok {
			i = len(out)
			index[r.Package] = i
			t := table{Title: "Package " + shortPackage(r.Package), Header: []string{"benchmark"}, Numeric: 1, TextLast: true}
			for _, c := range standardColumns {
				t.Header = append(t.Header, Label(c))
			}
			t.Header = append(t.Header, "other figures")
			out = append(out, t)
		}
		row := []string{FullName(r.Benchmark, r.Case)}
		var others []string
		for _, c := range standardColumns {
			cell := "—"
			for _, v := range r.Values {
				if v.Name == c {
					cell = valueText(c, v)
				}
			}
			row = append(row, cell)
		}
		for _, v := range r.Values {
			if !slices.Contains(standardColumns, v.Name) {
				others = append(others, Label(v.Name)+" "+valueText(v.Name, v))
			}
		}
		out[i].Rows = append(out[i].Rows, append(row, strings.Join(others, "; ")))
	}
	return out
}

// numeric says whether column i of t holds numbers.
func (t table) numeric(i int) bool {
	return i >= t.Numeric && !(t.TextLast && i == len(t.Header)-1)
}
