// Package benchreport turns the standard output of `go test -bench`, as `make bench` saves it,
// into a report a person reads: a table per benchmark with each system's figures side by side,
// a table of the benchmarks that measure one system alone, and a chart per comparison.
//
// It relies on the benchmarks' unit convention: a figure of one system is reported with a unit
// that starts with the system (arbiter-, kueue-, kueue-harness-, kube-scheduler-) and the rest
// names the figure and its unit (p99-s, pods/s, usage-pct). Two systems' figures with the same
// rest, in the same benchmark and case, are one comparison. A unit without a system prefix is
// a figure of the benchmark itself (speedup-x, bound-s, ns/op).
package benchreport

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// System is who a figure measures.
type System string

const (
	Arbiter System = "arbiter"
	// Kueue is Kueue admitting and kube-scheduler binding, end to end on a cluster.
	Kueue System = "kueue"
	// KueueHarness is Kueue's own scalability harness: a minimal Kueue, Workloads, no pods.
	KueueHarness  System = "kueue-harness"
	KubeScheduler System = "kube-scheduler"
)

// Systems is the order of the systems' columns and bars.
var Systems = []System{Arbiter, Kueue, KueueHarness, KubeScheduler}

// Title is the system's name as a column heading or chart legend says it.
func (s System) Title() string {
	switch s {
	case Arbiter:
		return "Arbiter"
	case Kueue:
		return "Kueue + kube-scheduler"
	case KueueHarness:
		return "Kueue's harness"
	case KubeScheduler:
		return "kube-scheduler"
	}
	return string(s)
}

// Short is the system's name where the context says the rest: "Arbiter ÷ Kueue".
func (s System) Short() string {
	if s == Kueue {
		return "Kueue"
	}
	return s.Title()
}

// prefixes are the systems by how a unit starts, longest first so that kueue-harness- is not
// read as kueue- with a figure harness-….
var prefixes = []System{KueueHarness, KubeScheduler, Arbiter, Kueue}

// SplitUnit reads a benchmark unit as the system it measures (none for a figure of the
// benchmark itself) and the figure. A unit that names a system and no figure is an error.
func SplitUnit(unit string) (System, string, error) {
	for _, s := range prefixes {
		if rest, ok := strings.CutPrefix(unit, string(s)+"-"); ok {
			if rest == "" {
				return "", "", fmt.Errorf("the unit %q names the system %s but no figure: write it as %s-<figure>-<unit>, e.g. %s-p99-s", unit, s.Title(), s, s)
			}
			return s, rest, nil
		}
	}
	if unit == "" {
		return "", "", errors.New("a measurement has no unit")
	}
	return "", unit, nil
}

// Figure is one measurement of one benchmark (and case) as the output reported it, with every
// value it had (several with -count).
type Figure struct {
	Package   string // the "pkg:" line above it: github.com/arbiterhq/arbiter/bench
	Benchmark string // the top-level benchmark without "Benchmark" and -GOMAXPROCS: PeerKueue
	Case      string // the sub-benchmark's path below it: reclaim; "" for none
	System    System // "" for a figure of the benchmark itself
	Name      string // the unit without the system: p99-s, ns/op
	Values    []float64
}

// Mean is the figure's value: the mean of its values.
func (f Figure) Mean() float64 {
	var sum float64
	for _, v := range f.Values {
		sum += v
	}
	return sum / float64(len(f.Values))
}

type figureKey struct {
	pkg, benchmark, cse string
	system              System
	name                string
}

// Figures accumulates the figures of benchmark outputs, in the order they first appear.
type Figures struct {
	list  []Figure
	index map[figureKey]int
}

// Read adds the results in r, the standard output of `go test -bench` (with -v's log lines,
// which it skips), named fileName in errors. A line that starts like a result but cannot be
// read as one is an error naming the line: a figure left out silently would mislead.
func (fs *Figures) Read(r io.Reader, fileName string) error {
	if fs.index == nil {
		fs.index = map[figureKey]int{}
	}
	br := benchfmt.NewReader(r, fileName)
	read := 0
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return fmt.Errorf("%s:%d: a line starting with \"Benchmark\" is not a benchmark result (%s); a result reads BenchmarkName-N, the iterations, then value unit pairs", rec.FileName, rec.Line, rec.Msg)
		case *benchfmt.Result:
			if err := fs.add(rec); err != nil {
				_, line := rec.Pos()
				return fmt.Errorf("%s:%d: %w", fileName, line, err)
			}
			read++
		}
	}
	if err := br.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", fileName, err)
	}
	if read == 0 {
		return fmt.Errorf("%s holds no benchmark result: was it written by go test -bench, and did the step run to the end?", fileName)
	}
	return nil
}

func (fs *Figures) add(r *benchfmt.Result) error {
	base, parts := r.Name.Parts()
	var cse []string
	for _, p := range parts {
		if s, ok := strings.CutPrefix(string(p), "/"); ok {
			cse = append(cse, s)
		}
	}
	for _, v := range r.Values {
		// The reader rescales units it knows (ns/op to sec/op); the report keeps the
		// unit the benchmark wrote, which is what its log and docs use.
		unit, value := v.Unit, v.Value
		if v.OrigUnit != "" {
			unit, value = v.OrigUnit, v.OrigValue
		}
		system, name, err := SplitUnit(unit)
		if err != nil {
			return err
		}
		k := figureKey{r.GetConfig("pkg"), string(base), strings.Join(cse, "/"), system, name}
		i, ok := fs.index[k]
		if !ok {
			i = len(fs.list)
			fs.index[k] = i
			fs.list = append(fs.list, Figure{Package: k.pkg, Benchmark: k.benchmark, Case: k.cse, System: system, Name: name})
		}
		fs.list[i].Values = append(fs.list[i].Values, value)
	}
	return nil
}

// List returns the figures read, in the order they first appeared.
func (fs *Figures) List() []Figure {
	return fs.list
}
