package benchreport

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// approx compares figures computed here (ratios, means) with the expected arithmetic up to
// the last bits of a float64.
var approx = cmpopts.EquateApprox(1e-12, 0)

// readTestdata reads the saved outputs of make bench's two steps: scheduler.txt is a real run
// of two scheduler core benchmarks with -benchmem; cluster.txt is built by hand from the
// figures bench/*.go report (and the names the convention gives the Kueue comparisons), with
// -v's log lines around them.
func readTestdata(t *testing.T, names ...string) []Figure {
	t.Helper()
	var fs Figures
	for _, name := range names {
		f, err := os.Open("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		err = fs.Read(f, name)
		f.Close()
		if err != nil {
			t.Fatalf("reading %s: %v", name, err)
		}
	}
	return fs.List()
}

func compared(t *testing.T, r Report, benchmark string) Comparison {
	t.Helper()
	for _, c := range r.Compared {
		if c.Benchmark == benchmark {
			return c
		}
	}
	t.Fatalf("no comparison of %s", benchmark)
	return Comparison{}
}

func TestFiguresOfTwoSystemsWithTheSameNameAreOneComparisonRowPerCase(t *testing.T) {
	r := Build(readTestdata(t, "scheduler.txt", "cluster.txt"))
	one := func(v float64) Value { return Value{Value: v, N: 1} }
	want := Comparison{
		Package:   "github.com/arbiterhq/arbiter/bench",
		Benchmark: "PeerKueue",
		Systems:   []System{Arbiter, Kueue},
		Rows: []ComparisonRow{
			{Case: "reclaim", Name: "p50-s", Values: map[System]Value{Arbiter: one(0.138), Kueue: one(0.294)}, Ratios: []Ratio{{Kueue, 0.138 / 0.294}}},
			{Case: "reclaim", Name: "p99-s", Values: map[System]Value{Arbiter: one(0.291), Kueue: one(12.86)}, Ratios: []Ratio{{Kueue, 0.291 / 12.86}}},
			{Case: "reclaim", Name: "max-s", Values: map[System]Value{Arbiter: one(0.351), Kueue: one(17.33)}, Ratios: []Ratio{{Kueue, 0.351 / 17.33}}},
			{Case: "preemption", Name: "p50-s", Values: map[System]Value{Arbiter: one(0.079), Kueue: one(0.255)}, Ratios: []Ratio{{Kueue, 0.079 / 0.255}}},
			{Case: "preemption", Name: "p99-s", Values: map[System]Value{Arbiter: one(0.171), Kueue: one(0.574)}, Ratios: []Ratio{{Kueue, 0.171 / 0.574}}},
			{Case: "preemption", Name: "max-s", Values: map[System]Value{Arbiter: one(0.244), Kueue: one(1.32)}, Ratios: []Ratio{{Kueue, 0.244 / 1.32}}},
		},
		Own: []Value{
			{Case: "reclaim", Name: "ns/op", Value: 250131223344, N: 1},
			{Case: "reclaim", Name: "p99-ratio-x", Value: 0.02263, N: 1},
			{Case: "preemption", Name: "ns/op", Value: 240000000000, N: 1},
			{Case: "preemption", Name: "p99-ratio-x", Value: 0.2979, N: 1},
		},
		Charts: []Chart{
			{Benchmark: "PeerKueue", Name: "p50-s", Cases: []string{"reclaim", "preemption"}, Systems: []System{Arbiter, Kueue}, Bars: []Bar{
				{"reclaim", Arbiter, 0.138}, {"reclaim", Kueue, 0.294}, {"preemption", Arbiter, 0.079}, {"preemption", Kueue, 0.255}}},
			{Benchmark: "PeerKueue", Name: "p99-s", Cases: []string{"reclaim", "preemption"}, Systems: []System{Arbiter, Kueue}, Bars: []Bar{
				{"reclaim", Arbiter, 0.291}, {"reclaim", Kueue, 12.86}, {"preemption", Arbiter, 0.171}, {"preemption", Kueue, 0.574}}},
			{Benchmark: "PeerKueue", Name: "max-s", Cases: []string{"reclaim", "preemption"}, Systems: []System{Arbiter, Kueue}, Bars: []Bar{
				{"reclaim", Arbiter, 0.351}, {"reclaim", Kueue, 17.33}, {"preemption", Arbiter, 0.244}, {"preemption", Kueue, 1.32}}},
		},
	}
	if diff := cmp.Diff(want, compared(t, r, "PeerKueue"), approx); diff != "" {
		t.Errorf("PeerKueue's comparison (-want +got):\n%s", diff)
	}
}

func TestEveryBenchmarkNamingASystemIsCompared(t *testing.T) {
	r := Build(readTestdata(t, "scheduler.txt", "cluster.txt"))
	var got []string
	for _, c := range r.Compared {
		got = append(got, c.Benchmark)
	}
	want := []string{"FillCluster", "Backlog", "Failover", "PeerKueue", "KueueHarness", "KueueScenario"}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("benchmarks compared (-want +got):\n%s", diff)
	}
}

func TestFirstBindIsComparedWithKubeSchedulerAndTheSpeedupIsTheBenchmarksOwn(t *testing.T) {
	c := compared(t, Build(readTestdata(t, "cluster.txt")), "Backlog")
	want := []ComparisonRow{
		{Name: "first-bind-s", Values: map[System]Value{Arbiter: {Value: 1.4, N: 1}, KubeScheduler: {Value: 1.5, N: 1}}, Ratios: []Ratio{{KubeScheduler, 1.4 / 1.5}}},
		{Name: "pods/s", Values: map[System]Value{Arbiter: {Value: 318.5, N: 1}, KubeScheduler: {Value: 92.85, N: 1}}, Ratios: []Ratio{{KubeScheduler, 318.5 / 92.85}}},
	}
	if diff := cmp.Diff(want, c.Rows, approx); diff != "" {
		t.Errorf("Backlog's rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Value{{Name: "ns/op", Value: 611023344551, N: 1}, {Name: "speedup-x", Value: 3.43, N: 1}}, c.Own, approx); diff != "" {
		t.Errorf("Backlog's own figures (-want +got):\n%s", diff)
	}
}

func TestOneSystemsFiguresGetATableRowAndNoChart(t *testing.T) {
	r := Build(readTestdata(t, "cluster.txt"))
	harness := compared(t, r, "KueueHarness")
	if diff := cmp.Diff([]System{KueueHarness}, harness.Systems, approx); diff != "" {
		t.Errorf("the harness's columns (-want +got):\n%s", diff)
	}
	if len(harness.Rows) != 4 || len(harness.Charts) != 0 {
		t.Errorf("the harness has %d rows and %d charts; want its 4 figures as rows and no chart (nothing to compare them with)", len(harness.Rows), len(harness.Charts))
	}
	scenario := compared(t, r, "KueueScenario")
	if diff := cmp.Diff([]Value{{Name: "ns/op", Value: 1.3e12, N: 1}, {Name: "bound-s", Value: 380, N: 1}}, scenario.Own, approx); diff != "" {
		t.Errorf("the scenario's own figures (-want +got):\n%s", diff)
	}
	// The scenario's peak memory stays in MB, as the benchmark wrote it (benchfmt's reader
	// would make it bytes).
	for _, row := range scenario.Rows {
		if row.Name == "peak-MB" && row.Values[Arbiter].Value != 212 {
			t.Errorf("Arbiter's peak memory reads %v; want 212 (MB)", row.Values[Arbiter].Value)
		}
	}
}

func TestBenchmarksNamingNoSystemStandAloneWithTheirBenchmemColumns(t *testing.T) {
	r := Build(readTestdata(t, "scheduler.txt", "cluster.txt"))
	v := func(name string, value float64) Value { return Value{Name: name, Value: value, N: 1} }
	want := []AloneRow{
		{Package: "github.com/arbiterhq/arbiter/scheduler", Benchmark: "CycleTenTimes", Values: []Value{
			v("ns/op", 222709455), v("binds", 31570), v("cpu-ms/op", 169.7), v("evictions", 3524), v("max-ms", 259.8), v("p50-ms", 204.5), v("B/op", 31435933), v("allocs/op", 50520)}},
		{Package: "github.com/arbiterhq/arbiter/scheduler", Benchmark: "Reclaim", Values: []Value{
			v("ns/op", 2828142), v("binds", 0), v("cpu-ms/op", 2.806), v("evictions", 8), v("max-ms", 3.367), v("p50-ms", 2.658), v("B/op", 1159557), v("allocs/op", 644)}},
		{Package: "github.com/arbiterhq/arbiter/bench", Benchmark: "ReclaimLatency", Values: []Value{
			v("ns/op", 190233112000), v("p50-s", 0.142), v("p99-s", 0.301), v("max-s", 0.33)}},
	}
	if diff := cmp.Diff(want, r.Alone, approx); diff != "" {
		t.Errorf("benchmarks alone (-want +got):\n%s", diff)
	}
	tables := aloneTables(r.Alone)
	wantRow := []string{"CycleTenTimes", "223 ms", "31,435,933", "50,520", "binds 31,570; cpu (ms per op) 170; evictions 3,524; max (ms) 260; p50 (ms) 204"}
	if diff := cmp.Diff(wantRow, tables[0].Rows[0], approx); diff != "" {
		t.Errorf("the scheduler core's row (-want +got):\n%s", diff)
	}
}

func TestRunsOfOneBenchmarkAreAveragedAndCounted(t *testing.T) {
	out := "pkg: example.com/bench\n" +
		"BenchmarkGrowth/1k-2 \t 3\t 100 ns/op\t 2.0 arbiter-p50-ms\t 4.0 kueue-p50-ms\n" +
		"BenchmarkGrowth/1k-2 \t 3\t 300 ns/op\t 4.0 arbiter-p50-ms\t 6.0 kueue-p50-ms\n" +
		"BenchmarkGrowth/10k-2 \t 3\t 900 ns/op\t 8.0 arbiter-p50-ms\n"
	var fs Figures
	if err := fs.Read(strings.NewReader(out), "growth.txt"); err != nil {
		t.Fatal(err)
	}
	c := Build(fs.List()).Compared[0]
	want := []ComparisonRow{
		{Case: "1k", Name: "p50-ms", Values: map[System]Value{Arbiter: {Value: 3, N: 2}, Kueue: {Value: 5, N: 2}}, Ratios: []Ratio{{Kueue, 0.6}}},
		{Case: "10k", Name: "p50-ms", Values: map[System]Value{Arbiter: {Value: 8, N: 1}}},
	}
	if diff := cmp.Diff(want, c.Rows, approx); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if got := comparisonTable(c).Rows[0][2]; got != "3 (mean of 2)" {
		t.Errorf("Arbiter's 1k cell reads %q; want the mean and how many runs it is of", got)
	}
}

func TestSplitUnit(t *testing.T) {
	cases := []struct {
		unit   string
		system System
		name   string
	}{
		{"arbiter-p99-s", Arbiter, "p99-s"},
		{"kueue-p99-s", Kueue, "p99-s"},
		{"kueue-harness-wall-s", KueueHarness, "wall-s"},
		{"kube-scheduler-pods/s", KubeScheduler, "pods/s"},
		{"arbiter-small-avg-admit-s", Arbiter, "small-avg-admit-s"},
		{"speedup-x", "", "speedup-x"},
		{"ns/op", "", "ns/op"},
		{"kueuex-s", "", "kueuex-s"},
	}
	for _, c := range cases {
		system, name, err := SplitUnit(c.unit)
		if err != nil || system != c.system || name != c.name {
			t.Errorf("SplitUnit(%q) = %q, %q, %v; want %q, %q", c.unit, system, name, err, c.system, c.name)
		}
	}
}

func TestLabelsAndNumbersReadAsAPersonWritesThem(t *testing.T) {
	labels := map[string]string{"p99-s": "p99 (s)", "first-bind-s": "first bind (s)", "s": "time (s)", "usage-pct": "usage (%)",
		"peak-MB": "peak (MB)", "cpu-ms/op": "cpu (ms per op)", "speedup-x": "speedup (×)", "pods/s": "pods/s", "ns/op": "time per op", "p50-ms": "p50 (ms)"}
	for name, want := range labels {
		if got := Label(name); got != want {
			t.Errorf("Label(%q) = %q; want %q", name, got, want)
		}
	}
	numbers := map[float64]string{0: "0", 8: "8", 0.02263: "0.0226", 1.4: "1.40", 12.86: "12.9", 318.5: "318", 31435933: "31,435,933", -1234.4: "-1,234"}
	for v, want := range numbers {
		if got := Number(v); got != want {
			t.Errorf("Number(%v) = %q; want %q", v, got, want)
		}
	}
}
