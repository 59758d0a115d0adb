package benchreport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Report is the figures arranged for reading: the benchmarks that compare systems, each as a
// table, and the benchmarks that measure one system alone.
type Report struct {
	Compared []Comparison
	Alone    []AloneRow
}

// Comparison is one benchmark that reports figures of more than one system, or of any
// system by name: a row per case and figure, a column per system that has a figure in it.
type Comparison struct {
	Package   string
	Benchmark string
	Systems   []System // the columns, in the order of Systems
	Rows      []ComparisonRow
	Own       []Value // the benchmark's own figures (no system): speedup-x, bound-s, ns/op
	Charts    []Chart // a chart per figure that two or more systems report
}

// ComparisonRow is one figure of one case, system by system.
type ComparisonRow struct {
	Case   string
	Name   string
	Values map[System]Value
	Ratios []Ratio
}

// Value is a figure's mean and how many values it is the mean of.
type Value struct {
	Case  string // set only where a list mixes cases (Comparison.Own)
	Name  string // set only where a list mixes figures (Comparison.Own, AloneRow.Values)
	Value float64
	N     int
}

// Ratio is Arbiter's figure divided by Of's, in the same case.
type Ratio struct {
	Of    System
	Value float64
}

// AloneRow is one benchmark (and case) whose figures name no system: the scheduler core's
// cycles, the API's latencies.
type AloneRow struct {
	Package   string
	Benchmark string
	Case      string
	Values    []Value
}

// Chart is a comparison drawn: a bar per system and case, the cases side by side.
type Chart struct {
	Benchmark string
	Name      string
	Cases     []string
	Systems   []System
	Bars      []Bar
}

// Bar is one system's figure in one case of a chart.
type Bar struct {
	Case   string
	System System
	Value  float64
}

// ratioAgainst are the systems Arbiter's figures are divided by. Kueue's harness runs a
// different workload (no pods, a minimal Kueue), so a ratio to it would compare unlike things.
var ratioAgainst = []System{Kueue, KubeScheduler}

// Build arranges figures (in the order they were read) into a report. A benchmark with a
// figure of some system is a comparison; the others are alone.
func Build(figures []Figure) Report {
	type benchKey struct{ pkg, name string }
	var order []benchKey
	byBench := map[benchKey][]Figure{}
	for _, f := range figures {
		k := benchKey{f.Package, f.Benchmark}
		if _, ok := byBench[k]; !ok {
			order = append(order, k)
		}
		byBench[k] = append(byBench[k], f)
	}
	var r Report
	for _, k := range order {
		fs := byBench[k]
		if slices.ContainsFunc(fs, func(f Figure) bool { return f.System != "" }) {
			r.Compared = append(r.Compared, compare(k.pkg, k.name, fs))
			continue
		}
		r.Alone = append(r.Alone, alone(k.pkg, k.name, fs)...)
	}
	return r
}

func compare(pkg, benchmark string, fs []Figure) Comparison {
	c := Comparison{Package: pkg, Benchmark: benchmark}
	type rowKey struct{ cse, name string }
	var rowOrder []rowKey
	rows := map[rowKey]*ComparisonRow{}
	present := map[System]bool{}
	for _, f := range fs {
		v := Value{Value: f.Mean(), N: len(f.Values)}
		if f.System == "" {
			v.Case, v.Name = f.Case, f.Name
			c.Own = append(c.Own, v)
			continue
		}
		present[f.System] = true
		k := rowKey{f.Case, f.Name}
		row, ok := rows[k]
		if !ok {
			row = &ComparisonRow{Case: f.Case, Name: f.Name, Values: map[System]Value{}}
			rows[k] = row
			rowOrder = append(rowOrder, k)
		}
		row.Values[f.System] = v
	}
	for _, s := range Systems {
		if present[s] {
			c.Systems = append(c.Systems, s)
		}
	}
	// Rows go case by case in the order the cases appeared, and within a case in the order
	// the benchmark reported its figures.
	var cases []string
	for _, k := range rowOrder {
		if !slices.Contains(cases, k.cse) {
			cases = append(cases, k.cse)
		}
	}
	for _, cse := range cases {
		var names []string
		for _, k := range rowOrder {
			if k.cse == cse {
				names = append(names, k.name)
			}
		}
		slices.SortStableFunc(names, func(a, b string) int { return strings.Compare(figureOrder(a), figureOrder(b)) })
		for _, name := range names {
			row := rows[rowKey{cse, name}]
			if a, ok := row.Values[Arbiter]; ok {
				for _, s := range ratioAgainst {
					if o, ok := row.Values[s]; ok && o.Value != 0 {
						row.Ratios = append(row.Ratios, Ratio{Of: s, Value: a.Value / o.Value})
					}
				}
			}
			c.Rows = append(c.Rows, *row)
		}
	}
	c.Charts = charts(benchmark, c.Rows)
	return c
}

// charts draws a chart for each figure that at least two systems report, in some case: its
// bars are every case's values of that figure.
func charts(benchmark string, rows []ComparisonRow) []Chart {
	var names []string
	for _, r := range rows {
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	var out []Chart
	for _, name := range names {
		ch := Chart{Benchmark: benchmark, Name: name}
		present := map[System]bool{}
		compared := false
		for _, r := range rows {
			if r.Name != name {
				continue
			}
			ch.Cases = append(ch.Cases, r.Case)
			compared = compared || len(r.Values) > 1
			for _, s := range Systems {
				if v, ok := r.Values[s]; ok {
					present[s] = true
					ch.Bars = append(ch.Bars, Bar{Case: r.Case, System: s, Value: v.Value})
				}
			}
		}
		if !compared {
			continue
		}
		for _, s := range Systems {
			if present[s] {
				ch.Systems = append(ch.Systems, s)
			}
		}
		out = append(out, ch)
	}
	return out
}

func alone(pkg, benchmark string, fs []Figure) []AloneRow {
	var out []AloneRow
	index := map[string]int{}
	for _, f := range fs {
		i, ok := index[f.Case]
		if !ok {
			i = len(out)
			index[f.Case] = i
			out = append(out, AloneRow{Package: pkg, Benchmark: benchmark, Case: f.Case})
		}
		out[i].Values = append(out[i].Values, Value{Name: f.Name, Value: f.Mean(), N: len(f.Values)})
	}
	return out
}

// figureOrder is the key a case's rows sort by: alphabetical, as go test writes its units,
// except that quantiles go in their order (min, p50, p90, p99, max) rather than as text.
func figureOrder(name string) string {
	parts := strings.Split(name, "-")
	for i, p := range parts {
		switch {
		case p == "min":
			parts[i] = "p000"
		case p == "max":
			parts[i] = "p100"
		case len(p) > 1 && p[0] == 'p':
			if n, err := strconv.Atoi(p[1:]); err == nil && n >= 0 && n < 100 {
				parts[i] = fmt.Sprintf("p%03d", n)
			}
		}
	}
	return strings.Join(parts, "-")
}

// FullName is a benchmark and case as go test names them: PeerKueue/reclaim.
func FullName(benchmark, cse string) string {
	if cse == "" {
		return benchmark
	}
	return benchmark + "/" + cse
}

// shortPackage is the last element of a package path: bench, scheduler.
func shortPackage(pkg string) string {
	return pkg[strings.LastIndex(pkg, "/")+1:]
}
