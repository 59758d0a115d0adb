package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The start estimate (EstimateStarts), case by case: each names the rule or the source of the
// expected end that decides it. The snapshot is at minute 60.

func (b *wlB) deadline(m int) *wlB { b.w.Deadline = minute(m); return b }
func (b *wlB) runtime(d string) *wlB {
	b.w.Annotations[AnnotationExpectedRuntime] = d
	return b
}

type estimateCase struct {
	name    string
	snap    *snapB
	medians map[RuntimeKey]time.Duration
	events  int
	want    map[string]time.Time // by workload name; zero: unknown
	basis   map[string]string    // by workload name: a part of the basis
}

func runEstimateCases(t *testing.T, cases []estimateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap.build()
			before := deepCopySnapshot(s)
			got := s.EstimateStarts(EstimateInput{Medians: tc.medians, MaxEvents: tc.events})
			if len(got) != len(tc.want) {
				t.Errorf("estimated %d workloads, want %d: %v", len(got), len(tc.want), got)
			}
			for name, at := range tc.want {
				e, ok := got["uid-"+name]
				if !ok {
					t.Errorf("%s: no estimate", name)
					continue
				}
				if !e.At.Equal(at) {
					t.Errorf("%s: estimated %v, want %v (basis %q)", name, e.At, at, e.Basis)
				}
				if e.Basis == "" {
					t.Errorf("%s: no basis", name)
				}
				if part := tc.basis[name]; part != "" && !strings.Contains(e.Basis, part) {
					t.Errorf("%s: basis %q does not say %q", name, e.Basis, part)
				}
			}
			if d := cmpSnapshots(before, s); d != "" {
				t.Errorf("EstimateStarts modified the snapshot:\n%s", d)
			}
		})
	}
}

var never time.Time

func TestEstimate_ExpectedEnds(t *testing.T) {
	runEstimateCases(t, []estimateCase{
		{"free capacity: it starts now",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(wl("r").in("p").on(10, "n1"), wl("w").in("p")),
			nil, 0, map[string]time.Time{"w": minute(60)}, map[string]string{"w": "now"}},
		{"activeDeadlineSeconds: it starts when the running Job's deadline runs out",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(10, "n1").deadline(100), wl("w").in("p")),
			nil, 0, map[string]time.Time{"w": minute(100)}, map[string]string{"w": "ns/r at its activeDeadlineSeconds"}},
		{"expected-runtime annotation: started plus the runtime",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(10, "n1").runtime("2h"), wl("w").in("p")),
			nil, 0, map[string]time.Time{"w": minute(130)}, map[string]string{"w": AnnotationExpectedRuntime}},
		{"the deadline wins over the annotation",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(10, "n1").runtime("2h").deadline(90), wl("w").in("p")),
			nil, 0, map[string]time.Time{"w": minute(90)}, nil},
		{"median runtime of finished workloads of the type in the project",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(30, "n1"), wl("w").in("p")),
			map[RuntimeKey]time.Duration{{"p", "Standard training"}: 45 * time.Minute, {"q", "Standard training"}: time.Minute},
			0, map[string]time.Time{"w": minute(75)}, map[string]string{"w": "median runtime of finished Standard training workloads in p"}},
		{"overdue: an expected end already past is taken as now",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(10, "n1").deadline(20), wl("w").in("p")),
			nil, 0, map[string]time.Time{"w": minute(60)}, nil},
		{"no expected end: unknown, saying what is missing",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(10, "n1"), wl("w").in("p")),
			map[RuntimeKey]time.Duration{{"other", "Standard training"}: time.Hour},
			0, map[string]time.Time{"w": never}, map[string]string{"w": "no activeDeadlineSeconds, no arbiter.dev/expected-runtime annotation"}},
		{"one running workload with no expected end: the sentence agrees with one",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(10, "n1"), wl("w").in("p")),
			nil, 0, map[string]time.Time{"w": never}, map[string]string{"w": "Unknown: 1 running workload it may wait for has no expected end: no activeDeadlineSeconds, no " + AnnotationExpectedRuntime + " annotation, and no finished workloads of its type in its project"}},
		{"two running workloads with no expected end: the sentence agrees with two",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(wl("r").in("p").on(10, "n1"), wl("s").in("p").on(10, "n1"), wl("w").in("p").gpus(2)),
			nil, 0, map[string]time.Time{"w": never}, map[string]string{"w": "Unknown: 2 running workloads it may wait for have no expected end: no activeDeadlineSeconds, no " + AnnotationExpectedRuntime + " annotation, and no finished workloads of their type in their project"}},
		{"a running workload whose end is unknown is assumed to run on; a known end still counts",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(wl("r").in("p").on(10, "n1"), wl("s").in("p").on(10, "n1").deadline(80), wl("w").in("p")),
			nil, 0, map[string]time.Time{"w": minute(80)}, map[string]string{"w": "assumed to run on"}},
	})
}

func TestEstimate_Rules(t *testing.T) {
	runEstimateCases(t, []estimateCase{
		{"S10 the queue's order: the second waits for the first to end too",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(
				wl("r").in("p").on(10, "n1").deadline(70),
				wl("first").in("p").queued(1).runtime("30m"),
				wl("second").in("p").queued(2)),
			nil, 0, map[string]time.Time{"first": minute(70), "second": minute(100)}, nil},
		{"S5 a gang starts when enough ends free room for all of it",
			snap().gpuNodes("n", 2, 1).project(project("p", 2)).wl(
				wl("a").in("p").on(10, "n1").deadline(70), wl("b").in("p").on(10, "n2").deadline(90),
				wl("g").in("p").pods(2).gang(2)),
			nil, 0, map[string]time.Time{"g": minute(90)}, map[string]string{"g": "2 running workloads"}},
		{"S16 a higher priority preempts: it starts now",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(
				wl("r").in("p").prio("very-low").on(10, "n1"), wl("w").in("p").prio("high").preemptible()),
			nil, 0, map[string]time.Time{"w": minute(60)}, nil},
		{"S17 in-quota work reclaims borrowed GPUs: it starts now",
			snap().gpuNodes("n", 1, 1).project(project("owner", 1), project("x", 0)).wl(
				wl("x1").in("x").on(10, "n1"), wl("w").in("owner")),
			nil, 0, map[string]time.Time{"w": minute(60)}, nil},
		{"S19 waiting for its victims to terminate: it starts now",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(
				wl("v").in("p").prio("very-low").on(10, "n1").terminating("w"), wl("w").in("p").prio("high")),
			nil, 0, map[string]time.Time{"w": minute(60)}, nil},
		{"S16 its only victim is within its project's minimum runtime: it starts when that has passed",
			snap().gpuNodes("n", 1, 1).project(project("p", 1).minRuntime(15*60)).wl(
				wl("r").in("p").prio("very-low").on(55, "n1").deadline(120), wl("w").in("p").prio("high").preemptible()),
			nil, 0, map[string]time.Time{"w": minute(70)}, map[string]string{"w": "minimum runtime"}},
		{"S16 two held until the same time: each is told of its own victims' minimum runtime",
			snap().gpuNodes("n", 2, 1).project(project("p", 1).minRuntime(15*60), project("q", 1).minRuntime(15*60)).wl(
				wl("r1").in("p").prio("very-low").on(55, "n1").deadline(120), wl("w1").in("p").prio("high").preemptible(),
				wl("r2").in("q").prio("very-low").on(55, "n2").deadline(120), wl("w2").in("q").prio("high").preemptible()),
			nil, 0, map[string]time.Time{"w1": minute(70), "w2": minute(70)}, map[string]string{
				"w1": "it starts once the minimum runtime of the work it could preempt has passed",
				"w2": "it starts once the minimum runtime of the work it could preempt has passed"}},
		{"S16 another's victims within the minimum runtime: it starts when that one may evict, and the hold is that one's",
			snap().gpuNodes("n", 1, 2).project(project("p", 2).minRuntime(15*60)).wl(
				wl("r").in("p").prio("very-low").gpus(2).on(55, "n1").deadline(120),
				wl("w1").in("p").prio("high").preemptible().queued(56), wl("w2").in("p").prio("very-low").queued(57)),
			nil, 0, map[string]time.Time{"w1": minute(70), "w2": minute(70)}, map[string]string{
				"w2": "it starts when ns/w1, which waits until the minimum runtime of the work it could preempt has passed, may evict"}},
		{"S27 its project's preemption delay: it starts when the delay has passed",
			snap().gpuNodes("n", 1, 1).project(project("p", 1).preemptionDelay(10*60)).wl(
				wl("r").in("p").prio("very-low").on(10, "n1").deadline(120), wl("w").in("p").prio("high").preemptible().queued(58)),
			nil, 0, map[string]time.Time{"w": minute(68)}, map[string]string{"w": "preemption delay"}},
		{"S27 the borrowed work it could reclaim is within its reclaim minimum runtime: it starts when that has passed",
			snap().gpuNodes("n", 1, 1).project(project("owner", 1), project("x", 0).reclaimMinRuntime(15*60)).wl(
				wl("x1").in("x").on(55, "n1").deadline(120), wl("w").in("owner")),
			nil, 0, map[string]time.Time{"w": minute(70)}, map[string]string{"w": "minimum runtime"}},
		{"S13 over its limit for good: unknown even once everything ended",
			snap().gpuNodes("n", 1, 4).project(project("p", 1).limit(1)).wl(
				wl("r").in("p").on(10, "n1").deadline(70), wl("w").in("p").gpus(2)),
			nil, 0, map[string]time.Time{"w": never}, map[string]string{"w": "even once every running workload has ended"}},
		{"the simulation is bounded: beyond its ends the start is unknown",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(
				wl("r").in("p").on(10, "n1").deadline(70),
				wl("a").in("p").queued(1).runtime("10m"), wl("b").in("p").queued(2).runtime("10m"), wl("c").in("p").queued(3)),
			nil, 2, map[string]time.Time{"a": minute(70), "b": minute(80), "c": never}, map[string]string{"c": "within the next 2 ends"}},
	})
}

// TestEstimateFromTheCallersPlan: given the snapshot's own plan (EstimateInput.First, as the
// scheduler has it), the estimate is the one it makes planning the snapshot itself.
func TestEstimateFromTheCallersPlan(t *testing.T) {
	for seed := range uint64(4) {
		s := genSnapshot(seed+1, genConfig{pools: 2, nodes: 30, gpusPerNode: 8, depts: 3, projects: 10,
			running: 150, pending: 400, maxGang: 3, maxGPUs: 2, varied: true})
		for i := range s.Workloads {
			if i%3 == 0 {
				s.Workloads[i].Annotations[AnnotationExpectedRuntime] = "30m"
			}
		}
		plan := s.Plan()
		itself := s.EstimateStarts(EstimateInput{})
		given := s.EstimateStarts(EstimateInput{First: &plan})
		if len(itself) == 0 {
			t.Fatalf("seed %d: nothing estimated, the snapshot tests nothing", seed)
		}
		if d := cmp.Diff(itself, given); d != "" {
			t.Errorf("seed %d: estimates from the given plan differ (-itself +given):\n%s", seed, d)
		}
	}
}
