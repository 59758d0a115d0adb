package benchreport

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMalformedOutputIsASentenceNamingTheLine(t *testing.T) {
	cases := []struct {
		name, output string
		says         []string
	}{
		{"a value that is not a number", "pkg: p\nBenchmarkA-2 \t 1\t 12 ns/op\t fast arbiter-p99-s\n", []string{"bad.txt:2", "is not a benchmark result", "parsing measurement"}},
		{"a unit naming a system and no figure", "BenchmarkA-2 \t 1\t 12 ns/op\t 0.3 arbiter-\n", []string{"bad.txt:1", `"arbiter-"`, "names the system Arbiter but no figure"}},
		{"no iteration count", "BenchmarkA-2 \t x 12 ns/op\n", []string{"bad.txt:1", "iteration count"}},
		{"no result at all", "goos: linux\n--- FAIL: BenchmarkA\nFAIL\n", []string{"bad.txt holds no benchmark result"}},
	}
	for _, c := range cases {
		var fs Figures
		err := fs.Read(strings.NewReader(c.output), "bad.txt")
		if err == nil {
			t.Errorf("%s: read without an error", c.name)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error %q does not say %q", c.name, err, s)
			}
		}
	}
}

// FuzzRead: whatever a benchmark step printed, reading it gives figures or an error, never a
// panic; every figure read splits its unit into the system and the figure name it came from,
// and the report of them can be written.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"scheduler.txt", "cluster.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("BenchmarkA/b/c-2 1 1 kueue-harness- 2 kube-scheduler-x\n")
	f.Add("BenchmarkA 1 1 arbiter--s\nBenchmark-2 1 NaN kueue-s\n")
	f.Fuzz(func(t *testing.T, output string) {
		var fs Figures
		if err := fs.Read(strings.NewReader(output), "fuzz.txt"); err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		for _, fig := range fs.List() {
			unit := fig.Name
			if fig.System != "" {
				unit = string(fig.System) + "-" + fig.Name
			}
			system, name, err := SplitUnit(unit)
			if err != nil || system != fig.System || name != fig.Name || len(fig.Values) == 0 {
				t.Fatalf("figure %+v does not split back from %q: %q, %q, %v", fig, unit, system, name, err)
			}
		}
		r := Build(fs.List())
		if err := Markdown(io.Discard, Run{}, r, 2, ChartsDir); err != nil {
			t.Fatal(err)
		}
		if _, err := HTML(Run{}, r); err != nil {
			t.Fatal(err)
		}
	})
}

func testRun() Run {
	return Run{Date: time.Date(2026, 11, 26, 14, 22, 0, 0, time.UTC), CPU: "AMD EPYC", CPUs: 2, MemoryGiB: 23.5,
		LoadStart: "0.39 1.93 3.18", LoadEnd: "1.20 1.50 2.00", Go: "go1.26.8", Kubernetes: "v1.34.4", Kwok: "v0.7.0", Kueue: "v0.19.2",
		Commit: "9515107514bc", Steps: []Step{{"Kueue build", 0}, {"cluster benchmarks", 38*time.Minute + 10*time.Second}}, Total: 44 * time.Minute}
}

// svgText is every piece of text an SVG draws.
func svgText(t *testing.T, svg []byte) []string {
	t.Helper()
	var texts []string
	d := xml.NewDecoder(bytes.NewReader(svg))
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return texts
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed SVG: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, strings.TrimSpace(string(tok)))
			}
		}
	}
}

func TestTheReportHasAChartPerComparisonNamingTheSystemsAndTheirValues(t *testing.T) {
	dir := t.TempDir()
	// A chart of an earlier report must not outlive it.
	if err := os.MkdirAll(filepath.Join(dir, ChartsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ChartsDir, "Gone-p99-s.svg"), []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Build(readTestdata(t, "scheduler.txt", "cluster.txt"))
	if err := Write(dir, testRun(), r); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, ChartsDir))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	want := []string{
		"Backlog-first-bind-s.svg", "Backlog-pods-per-s.svg", "FillCluster-pods-per-s.svg", "FillCluster-s.svg",
		"KueueScenario-cpu-s.svg", "KueueScenario-peak-MB.svg", "KueueScenario-small-avg-admit-s.svg", "KueueScenario-small-p90-admit-s.svg",
		"KueueScenario-usage-pct.svg", "KueueScenario-wall-s.svg", "PeerKueue-max-s.svg", "PeerKueue-p50-s.svg", "PeerKueue-p99-s.svg",
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("charts (-want +got):\n%s", diff)
	}
	svg, err := os.ReadFile(filepath.Join(dir, ChartsDir, "PeerKueue-p99-s.svg"))
	if err != nil {
		t.Fatal(err)
	}
	texts := svgText(t, svg)
	for _, s := range []string{"PeerKueue: p99 (s), lower is better", "Arbiter", "Kueue + kube-scheduler", "reclaim", "preemption", "0.291", "12.9", "0.171", "0.574"} {
		if !slices.Contains(texts, s) {
			t.Errorf("the p99 chart does not write %q; it writes %q", s, texts)
		}
	}
	svg, err = os.ReadFile(filepath.Join(dir, ChartsDir, "Backlog-first-bind-s.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if texts := svgText(t, svg); !slices.Contains(texts, "kube-scheduler") || slices.Contains(texts, "Kueue + kube-scheduler") {
		t.Errorf("the first-bind chart should name kube-scheduler and not Kueue; it writes %q", texts)
	}

	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		if !bytes.Contains(page, []byte(`src="charts/`+f+`"`)) {
			t.Errorf("report.html does not show %s", f)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"- **Machine:** 2 × AMD EPYC, 23.5 GiB of memory",
		"- **Load average (1, 5, 15 min):** 0.39 1.93 3.18 at the start, 1.20 1.50 2.00 at the end",
		"- **Versions:** Go 1.26.8, Kubernetes v1.34.4, kwok v0.7.0, Kueue v0.19.2",
		"- **Took:** Kueue build under 1 s, cluster benchmarks 38 min 10 s; the whole run 44 min 0 s",
		"| case | figure | Arbiter | Kueue + kube-scheduler | Arbiter ÷ Kueue |",
		"| reclaim | p99 (s) | 0.291 | 12.9 | 0.0226 |",
		"| figure | Arbiter | kube-scheduler | Arbiter ÷ kube-scheduler |",
		"| first bind (s) | 1.40 | 1.50 | 0.933 |",
		"![PeerKueue: p99 (s), lower is better](charts/PeerKueue-p99-s.svg)",
	} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("report.md lacks %q", s)
		}
	}
}

func TestUpdateDocsRewritesOnlyBetweenTheMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.md")
	prose := "`make bench-docs` rewrites what lies between `" + DocsBegin + "` and `" + DocsEnd + "`.\n\n"
	doc := "# Performance\n\n" + prose + "## Latest run\n\n" + DocsBegin + "\nfilled by the first full run\n" + DocsEnd + "\n\n## Method\n\nunchanged\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"| a | b |\n", "| c | d |\n"} {
		if err := UpdateDocs(path, []byte(table)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Performance\n\n" + prose + "## Latest run\n\n" + DocsBegin + "\n\n| c | d |\n\n" + DocsEnd + "\n\n## Method\n\nunchanged\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("the doc after two updates (-want +got):\n%s", diff)
	}

	for _, bad := range []string{"no markers, only `" + DocsBegin + "` in prose\n", DocsBegin + "\nno end\n", DocsBegin + "\n" + DocsEnd + "\n" + DocsBegin + "\n" + DocsEnd + "\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		err := UpdateDocs(path, []byte("| x |\n"))
		if err == nil || !strings.Contains(err.Error(), "performance.md: ") {
			t.Errorf("updating %q: %v; want an error naming the file and what is wrong with its markers", bad, err)
		}
		if after, _ := os.ReadFile(path); string(after) != bad {
			t.Errorf("a failed update changed the file to %q", after)
		}
	}
}

func TestTheRunIsReadFromProcTheStepsAndThePins(t *testing.T) {
	cpuinfo := "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
	model, cpus, mem, err := ReadMachine(strings.NewReader(cpuinfo), strings.NewReader("MemTotal:       24684096 kB\nMemFree:         7063024 kB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if model != "AMD EPYC 7B13" || cpus != 2 || mem < 23.5 || mem > 23.6 {
		t.Errorf("ReadMachine = %q, %d CPUs, %.2f GiB; want AMD EPYC 7B13, 2 CPUs, 23.54 GiB", model, cpus, mem)
	}
	if _, _, _, err := ReadMachine(strings.NewReader(cpuinfo), strings.NewReader("MemFree: 1 kB\n")); err == nil || !strings.Contains(err.Error(), "MemTotal") {
		t.Errorf("a meminfo without MemTotal: %v; want an error saying so", err)
	}

	steps, total, err := ReadSteps(strings.NewReader("Kueue build\t13\nscheduler core benchmarks\t301\ntotal\t2650\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Step{{"Kueue build", 13 * time.Second}, {"scheduler core benchmarks", 301 * time.Second}}, steps); diff != "" || total != 2650*time.Second {
		t.Errorf("steps (-want +got):\n%s\ntotal %s; want 44 min 10 s", diff, total)
	}
	if _, _, err := ReadSteps(strings.NewReader("cluster 12.5s\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a step line without a tab and whole seconds: %v; want an error naming the line", err)
	}

	root := t.TempDir()
	pins := map[string]string{
		"hack/k8s/go.mod":             "module m\n\ngo 1.24\n\nrequire (\n\tk8s.io/component-base v0.35.1\n\tk8s.io/kubernetes v1.35.1\n)\n",
		"hack/k8s/kwok/go.mod":        "module m\n\ngo 1.24\n\ntool sigs.k8s.io/kwok/cmd/kwok\n\nrequire sigs.k8s.io/kwok v0.8.0 // indirect\n",
		"hack/operators/kueue/go.mod": "module m\n\ngo 1.26\n\nrequire (\n\tcel.dev/expr v0.25.1 // indirect\n\tsigs.k8s.io/kueue v0.20.0 // indirect\n)\n",
	}
	for file, content := range pins {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, file)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k8s, kwok, kueue, err := ReadVersions(root)
	if err != nil || k8s != "v1.35.1" || kwok != "v0.8.0" || kueue != "v0.20.0" {
		t.Errorf("ReadVersions = %q, %q, %q, %v; want v1.35.1, v0.8.0, v0.20.0", k8s, kwok, kueue, err)
	}
	if err := os.WriteFile(filepath.Join(root, "hack/k8s/kwok/go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ReadVersions(root); err == nil || !strings.Contains(err.Error(), "does not require sigs.k8s.io/kwok") {
		t.Errorf("a kwok module without its pin: %v; want an error saying so", err)
	}
}
