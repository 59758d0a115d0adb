package bench

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
)

// harnessScenarioName is the scenario of Kueue's harness the benchmark runs: the one Kueue's
// CI checks and publishes figures for (15,000 Workloads in 5 cohorts × 6 ClusterQueues).
const harnessScenarioName = "baseline"

// harnessRecordTimeout bounds how long the runner records (its --timeout), harnessDeadline
// the whole run: Kueue's limit is 425 s on its CI's machines, and a run on 2 cores shared with
// other work takes a few times longer.
const (
	harnessRecordTimeout = 30 * time.Minute
	harnessDeadline      = harnessRecordTimeout + 5*time.Minute
)

// BenchmarkKueueHarness runs Kueue's own scalability harness as Kueue runs it (its Makefile's
// run-performance-scheduler target: the runner with minimalkueue, on envtest's kube-apiserver
// and etcd, the baseline scenario unchanged, minimalkueue's logs to files and its metrics
// scraped every 5 s), once, with this project's control-plane binaries, to calibrate this
// machine against Kueue's published figures. What it runs is Workload objects admitted by
// Kueue's core controllers and scheduler against a bare API server: no Job, pod, node or
// kube-scheduler; each admitted Workload is marked finished after its runtime by the runner.
// The runner's output (summary, per-queue and per-workload CSVs, minimalkueue's logs and
// metrics) is kept under artifacts/bench/kueue-harness.
func BenchmarkKueueHarness(b *testing.B) {
	ctx := context.Background()
	h, err := devcluster.EnsureKueueHarness(ctx, os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	bins, err := devcluster.EnsureBinaries(ctx, os.Stderr, devcluster.Etcd, devcluster.KubeAPIServer)
	if err != nil {
		b.Fatal(err)
	}
	generator := filepath.Join(h.Scenario(harnessScenarioName), "generator.yaml")
	scenario, err := readHarnessScenario(generator)
	if err != nil {
		b.Fatal(err)
	}
	bound, err := scenario.bound()
	if err != nil {
		b.Fatal(err)
	}
	var limits harnessRangeSpec
	if err := readStrictYAML(filepath.Join(h.Scenario(harnessScenarioName), "rangespec.yaml"), &limits); err != nil {
		b.Fatal(err)
	}
	b.Logf("Kueue %s harness, scenario %s: %d workloads, %.0f quota-seconds of work on %.0f of nominal quota: physical bound %s (the last workload is created at %s)",
		h.Version, harnessScenarioName, bound.Workloads, bound.Work, bound.Capacity, bound.Bound.Round(100*time.Millisecond), bound.LastCreated)

	out := harnessArtifacts(b)
	for b.Loop() {
		loadBefore := loadAverage()
		cpuBefore := readCPU(nil)["total"]
		start := time.Now()
		harnessCPU := runHarness(b, h, bins, generator, out)
		took := time.Since(start)
		machineCPU := readCPU(nil)["total"] - cpuBefore
		b.Logf("the harness ran in %s (envtest's start and stop included), using %.0f CPU-s (runner, kube-apiserver, etcd, minimalkueue) while the machine's cores were busy %.0f CPU-s; load average before %s, after %s",
			took.Round(time.Second), harnessCPU.Seconds(), machineCPU.Seconds(), loadBefore, loadAverage())

		unfinished, total, err := harnessUnfinished(filepath.Join(out, "wlStates.csv"))
		if err != nil {
			b.Fatal(err)
		}
		if unfinished > 0 || total != bound.Workloads {
			b.Fatalf("the harness recorded %d of the scenario's %d workloads, %d of them unfinished: its figures would count those as admitted at once", total, bound.Workloads, unfinished)
		}
		var summary harnessSummary
		if err := readStrictYAML(filepath.Join(out, "summary.yaml"), &summary); err != nil {
			b.Fatal(err)
		}
		var stats harnessCmdStats
		if err := readStrictYAML(filepath.Join(out, "minimalkueue.stats.yaml"), &stats); err != nil {
			b.Fatal(err)
		}
		reportHarness(b, summary, stats, limits, bound)
	}
}

// reportHarness reports a run's figures and compares each with Kueue's published average and
// its checker's limit.
func reportHarness(b *testing.B, summary harnessSummary, stats harnessCmdStats, limits harnessRangeSpec, bound harnessBound) {
	wall := time.Duration(stats.WallMs) * time.Millisecond
	maxWall := time.Duration(limits.Cmd.MaxWallMs) * time.Millisecond
	b.ReportMetric(wall.Seconds(), "kueue-harness-wall-s")
	b.ReportMetric(bound.Bound.Seconds(), "bound-s")
	b.Logf("wall time (minimalkueue's process) %s, %.1f× the physical bound %s; Kueue published %s, limit %s: %s",
		wall.Round(100*time.Millisecond), wall.Seconds()/bound.Bound.Seconds(), bound.Bound.Round(100*time.Millisecond),
		harnessPublished.Wall.Round(100*time.Millisecond), maxWall, within(wall <= maxWall, "within the limit", "over the limit"))

	cpu := time.Duration(stats.UserMs+stats.SysMs) * time.Millisecond
	b.ReportMetric(cpu.Seconds(), "kueue-harness-cpu-s")
	peakMB := float64(stats.Maxrss) * 1024 / 1e6 // ru_maxrss is in KiB
	b.ReportMetric(peakMB, "kueue-harness-peak-MB")
	b.Logf("minimalkueue used %s of CPU (%.2f cores over its wall time) and %.0f MB of memory at its peak",
		cpu.Round(100*time.Millisecond), cpu.Seconds()/wall.Seconds(), peakMB)

	for _, class := range slices.Sorted(maps.Keys(summary.ClusterQueueClasses)) {
		usage, err := summary.ClusterQueueClasses[class].UsagePct()
		if err != nil {
			b.Fatalf("queue class %s: %v", class, err)
		}
		if class == "cq" { // the baseline's one class; a unit names no class
			b.ReportMetric(usage, "kueue-harness-usage-pct")
		}
		minUsage, limited := limits.ClusterQueueClassesMinUsage[class]
		// Usage is quota held by admitted workloads until their finish reaches the queue's
		// status, not work done: the held CPU-seconds beside the scenario's work show the lag.
		b.Logf("usage of queue class %s %.1f %% (%.0f CPU-s of quota held, for %.0f CPU-s of work in the scenario); Kueue published %.1f %%, minimum %.0f %%: %s",
			class, usage, float64(summary.ClusterQueueClasses[class].CPUUsed)/1e6, bound.Work, harnessPublished.UsagePct[class], minUsage,
			within(limited && usage >= minUsage, "at or above the minimum", "below the minimum"))
	}
	for _, class := range slices.Sorted(maps.Keys(summary.WorkloadClasses)) {
		wc := summary.WorkloadClasses[class]
		avg := time.Duration(wc.AverageTimeToAdmissionMs) * time.Millisecond
		maxAvg := time.Duration(limits.WlClassesMaxAvgTimeToAdmissionMs[class]) * time.Millisecond
		b.ReportMetric(avg.Seconds(), "kueue-harness-"+class+"-avg-admit-s")
		b.Logf("%d %s workloads, %d evictions: average time to admission %s; Kueue published %s, limit %s: %s",
			wc.Count, class, wc.TotalEvictions, avg.Round(100*time.Millisecond), harnessPublished.AvgAdmitted[class].Round(100*time.Millisecond),
			maxAvg, within(maxAvg > 0 && avg <= maxAvg, "within the limit", "over the limit"))
	}
	if summary.DroppedWorkloadEvents > 0 {
		b.Logf("the runner's recorder dropped %d workload events (its channel was full): some times to admission are missing", summary.DroppedWorkloadEvents)
	}
}

// runHarness runs Kueue's runner with minimalkueue on envtest's control plane made of bins,
// writing into out, and returns the CPU the runner and the processes it waited for used.
func runHarness(b *testing.B, h *devcluster.KueueHarness, bins *devcluster.Binaries, generator, out string) time.Duration {
	b.Helper()
	// envtest finds its kube-apiserver and etcd in KUBEBUILDER_ASSETS, by those names.
	assets := b.TempDir()
	for _, name := range []string{devcluster.KubeAPIServer, devcluster.Etcd} {
		if err := os.Symlink(bins.Path(name), filepath.Join(assets, name)); err != nil {
			b.Fatal(err)
		}
	}
	// A runner that fails exits without stopping envtest's processes (each in a process group
	// of its own): end those started from this run's assets directory.
	defer killStartedFrom(assets)
	logPath := filepath.Join(out, "runner.log")
	log, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(context.Background(), harnessDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Runner(),
		"--o", out,
		"--crds", h.CRDDir(),
		"--generatorConfig", generator,
		"--minimalKueue", h.MinimalKueue(),
		// Kueue's Makefile's defaults for this target.
		"--withLogs=true", "--logToFile=true", "--metricsScrapeInterval=5s",
		// Not the default 10 min: the runner gives up recording then and writes no summary,
		// and a run on 2 shared cores takes longer than on Kueue's CI.
		"--timeout", harnessRecordTimeout.String(),
	)
	// Kueue's test utilities, linked into the runner, panic at start-up without a checkout of
	// Kueue (PROJECT_DIR, set by its Makefile); they read nothing from it in this run.
	cmd.Env = append(os.Environ(), "KUBEBUILDER_ASSETS="+assets, "PROJECT_DIR="+h.Dir)
	cmd.Stdout, cmd.Stderr = log, log
	// Interrupted, the runner stops minimalkueue and envtest's processes before it exits.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 2 * time.Minute
	if err := cmd.Run(); err != nil || ctx.Err() != nil {
		b.Fatalf("Kueue's harness failed (%v, %v): its log %s ends:\n%s", err, ctx.Err(), logPath, tail(logPath))
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// killStartedFrom kills the processes whose executable was started from dir.
func killStartedFrom(dir string) {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, path := range cmdlines {
		cmdline, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		exe, _, _ := strings.Cut(string(cmdline), "\x00")
		if filepath.Dir(exe) != dir {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// harnessArtifacts returns an empty artifacts/bench/kueue-harness (under ARBITER_ARTIFACTS
// when set), so that no file of an earlier run is read as this run's.
func harnessArtifacts(b *testing.B) string {
	root := os.Getenv("ARBITER_ARTIFACTS")
	if root == "" {
		root = filepath.Join("..", "artifacts")
	}
	dir, err := filepath.Abs(filepath.Join(root, "bench", "kueue-harness"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, as /proc/loadavg has them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return fmt.Sprintf("%s %s %s", f[0], f[1], f[2])
}

func within(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// Kueue's baseline scenario asks 30 ClusterQueues of 20 CPUs each for 1,320 CPU-seconds of
// work apiece (350 × 1 CPU × 0.2 s, 100 × 5 × 0.5 s, 50 × 20 × 1 s): no scheduler can finish
// it in less than 66 s, and its last Workload is created at 60 s (50 large ones 1.2 s apart).
func TestKueueHarnessBaselineIsBoundBy66Seconds(t *testing.T) {
	scenario, err := readHarnessScenario(filepath.Join("testdata", "kueue-harness", "generator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := scenario.bound()
	if err != nil {
		t.Fatal(err)
	}
	want := harnessBound{Workloads: 15000, Work: 39600, Capacity: 600, Bound: 66 * time.Second, LastCreated: 60 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound of Kueue's baseline scenario (-want +got):\n%s", diff)
	}
}

// A ClusterQueue borrows only within its cohort, so the busiest cohort bounds the run, not the
// whole scenario's work over its whole quota; a workload's pods each take its request.
func TestKueueHarnessBoundIsTheBusiestCohorts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "generator.yaml")
	scenario := `
cohorts:
- className: idle          # 10 CPU-s on 10 CPUs: 1 s
  count: 1
  queuesSets:
  - {className: a, count: 1, nominalQuota: 10, borrowingLimit: 0, workloadsSets: [{count: 10, creationIntervalMs: 100, workloads: [{className: one, runtimeMs: 1000, request: 1}]}]}
- className: busy          # each: 4 × 2 pods × 0.5 CPU × 1.5 s = 6 CPU-s on 2 CPUs: 3 s
  count: 2
  queuesSets:
  - {className: b, count: 1, nominalQuota: 2, borrowingLimit: 0, workloadsSets: [{count: 4, creationIntervalMs: 500, workloads: [{className: two, runtimeMs: 1500, request: 500m, podCount: 2}]}]}
`
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := readHarnessScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.bound()
	if err != nil {
		t.Fatal(err)
	}
	want := harnessBound{Workloads: 18, Work: 22, Capacity: 14, Bound: 3 * time.Second, LastCreated: 2 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound (-want +got):\n%s", diff)
	}
}

// A field the runner's summary gains is an error, not a figure silently left out.
func TestKueueHarnessSummaryRefusesAnUnknownField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.yaml")
	if err := os.WriteFile(path, []byte("clusterQueueClasses: {}\nworkloadClasses: {}\ndroppedWorkloadEvents: 0\nnewFigure: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s harnessSummary
	if err := readStrictYAML(path, &s); err == nil || !strings.Contains(err.Error(), "newFigure") {
		t.Errorf("reading a summary with a field Kueue's runner does not write: err = %v, want one naming newFigure", err)
	}
}

// Usage is Kueue's checker's: CPU used (mCPU × ms) over nominal quota × the time from the
// class's first event to its last.
func TestKueueHarnessUsageIsTheCheckers(t *testing.T) {
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	half := harnessQueueClass{CPUUsed: 300_000 * 100_000, NominalQuota: 600_000, FirstEventTime: first, LastEventTime: first.Add(100 * time.Second)}
	if got, err := half.UsagePct(); err != nil || got != 50 {
		t.Errorf("usage of 300 CPUs used for 100 s of 600: %v, %v; want 50 %%", got, err)
	}
	if _, err := (harnessQueueClass{NominalQuota: 600_000, FirstEventTime: first, LastEventTime: first}).UsagePct(); err == nil {
		t.Error("usage over no time: no error")
	}
}

// An interrupted run still writes a summary, counting the workloads it never admitted as
// admitted at once; its wlStates.csv tells: their time to finish is 0.
func TestKueueHarnessCountsTheWorkloadsARunLeftUnfinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wlStates.csv")
	states := "id,class name,namespace,name,ms to admitted,ms to finish,num evictions\n" +
		"0,large,cq-0-0-cohort-0,large-2-0-0,1200,2300,0\n" +
		"1,small,cq-0-0-cohort-0,small-0-0-0,0,0,0\n" +
		"2,medium,cq-0-0-cohort-0,medium-1-0-0,5100,0,1\n"
	if err := os.WriteFile(path, []byte(states), 0o644); err != nil {
		t.Fatal(err)
	}
	unfinished, total, err := harnessUnfinished(path)
	if err != nil || unfinished != 2 || total != 3 {
		t.Errorf("harnessUnfinished = %d of %d, %v; want 2 of 3", unfinished, total, err)
	}
	if err := os.WriteFile(path, []byte("id,class name,namespace,name,ms to admitted,ms to finish\n0,large,ns,l,1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := harnessUnfinished(path); err == nil {
		t.Error("a wlStates.csv without the runner's header: no error")
	}
}

// What Kueue's runner wrote in a run on this machine (Kueue's baseline scenario with one cohort
// of its five) reads strictly, with the figures its checker sees.
func TestKueueHarnessReadsTheRunnersOutput(t *testing.T) {
	var summary harnessSummary
	if err := readStrictYAML(filepath.Join("testdata", "kueue-harness", "summary.yaml"), &summary); err != nil {
		t.Fatal(err)
	}
	wantClasses := map[string]harnessWorkloadClass{
		"large":  {Count: 300, AverageTimeToAdmissionMs: 69919, AverageTimeToFinishMs: 71952},
		"medium": {Count: 600, TotalEvictions: 18, AverageTimeToAdmissionMs: 177382, AverageTimeToFinishMs: 180017},
		"small":  {Count: 2100, TotalEvictions: 36, AverageTimeToAdmissionMs: 344616, AverageTimeToFinishMs: 350738},
	}
	if diff := cmp.Diff(wantClasses, summary.WorkloadClasses); diff != "" {
		t.Errorf("workload classes (-want +got):\n%s", diff)
	}
	// 47,079,891,000 mCPU·ms used of 120,000 mCPU over 548,773 ms.
	usage, err := summary.ClusterQueueClasses["cq"].UsagePct()
	if err != nil || math.Abs(usage-71.4926) > 0.0001 {
		t.Errorf("usage of class cq = %.4f %%, %v; want 71.4926 %%", usage, err)
	}
	var stats harnessCmdStats
	if err := readStrictYAML(filepath.Join("testdata", "kueue-harness", "minimalkueue.stats.yaml"), &stats); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(harnessCmdStats{WallMs: 551208, UserMs: 17138, SysMs: 2011, Maxrss: 146668}, stats); diff != "" {
		t.Errorf("minimalkueue's stats (-want +got):\n%s", diff)
	}
}

// After a failed run the benchmark ends the processes started from the run's assets directory
// (envtest's, which the runner leaves behind), and no other.
func TestKueueHarnessKillsOnlyWhatItsAssetsStarted(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(sleep, filepath.Join(dir, "sleep")); err != nil {
		t.Fatal(err)
	}
	fromAssets := exec.Command(filepath.Join(dir, "sleep"), "60")
	other := exec.Command(sleep, "60")
	for _, cmd := range []*exec.Cmd{fromAssets, other} {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	killStartedFrom(dir)
	if err := fromAssets.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the process started from the assets directory ended with %v, want killed", err)
	}
	// Both would have had their SIGKILL before the first was reaped; a killed process stays a
	// zombie ("Z") until its parent, this test, waits for it.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", other.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if _, after, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(after, "Z") {
		t.Error("a process started elsewhere was ended too")
	}
}
