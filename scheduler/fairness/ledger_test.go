package fairness

import (
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/purity"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var t0 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

func at(hours float64) time.Time { return t0.Add(time.Duration(hours * float64(time.Hour))) }

// hour is one hour-long sample of pool "a".
func hour(h float64, s Sample) Sample {
	s.At, s.Span = at(h), time.Hour
	if s.NodePool == "" {
		s.NodePool = "a"
	}
	return s
}

func pool(h float64, capacity, allocated, nonPreemptible float64) Pool {
	return Pool{At: at(h), NodePool: "a", CapacityGPUs: capacity, AllocatedGPUs: allocated, NonPreemptibleGPUs: nonPreemptible}
}

var approx = cmpopts.EquateApprox(0, 1e-9)

func ledgerOf(t *testing.T, in Input) PoolLedger {
	t.Helper()
	if in.To.IsZero() {
		in.From, in.To = at(0), at(24)
	}
	l := Compute(in)
	if len(l.Pools) != 1 {
		t.Fatalf("pools in the ledger: %d, want 1: %+v", len(l.Pools), l.Pools)
	}
	return l.Pools[0]
}

func TestLedger_EntitledIsFairShareCappedByDemand(t *testing.T) {
	got := ledgerOf(t, Input{Samples: []Sample{
		// asks for more than its fair share: entitled to the fair share
		hour(0, Sample{Preemptible: 4, Pending: 8, Deserved: 4, FairShare: 6}),
		// asks for less: entitled to what it asks for, the rest of its fair share unused
		hour(1, Sample{Preemptible: 2, Pending: 1, Deserved: 4, FairShare: 6}),
	}})
	want := Figures{Deserved: 8, FairShare: 12, Entitled: 6 + 3, Received: 4 + 2, Shortfall: 2 + 1, NoDemand: 3, RecordedHours: 2}
	if diff := cmp.Diff(want, got.Figures, approx); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

func TestLedger_NoDemandIsNotAShortfall(t *testing.T) {
	got := ledgerOf(t, Input{Samples: []Sample{hour(0, Sample{Preemptible: 1, Deserved: 8, FairShare: 8})}})
	if got.Shortfall != 0 || len(got.Shortfalls) != 0 {
		t.Errorf("shortfall %v %+v, want none: it received all it asked for", got.Shortfall, got.Shortfalls)
	}
	if diff := cmp.Diff(7.0, got.NoDemand, approx); diff != "" {
		t.Errorf("fair share not asked for (-want +got):\n%s", diff)
	}
}

func TestLedger_ReceivingMoreInOneHourDoesNotPayForAShortfallInAnother(t *testing.T) {
	got := ledgerOf(t, Input{Samples: []Sample{
		hour(0, Sample{Borrowed: 4, Preemptible: 4, Deserved: 4, FairShare: 4}),
		hour(1, Sample{Preemptible: 2, Pending: 2, Deserved: 4, FairShare: 4}),
	}})
	if diff := cmp.Diff(2.0, got.Shortfall, approx); diff != "" {
		t.Errorf("shortfall (-want +got):\n%s", diff)
	}
}

func TestLedger_WorkReclaimedWaitsUnderTheReclaimersName(t *testing.T) {
	train := Workload{Name: "train", QueuedAt: at(-1), GPUs: 4, Gang: 1, Events: []Event{
		{At: at(-1), Kind: "Admitted"},
		{At: at(0), Kind: "Reclaimed", By: "beta"},
		{At: at(2), Kind: "Admitted"},
	}}
	got := ledgerOf(t, Input{
		Samples: []Sample{
			hour(0, Sample{Pending: 4, Deserved: 4, FairShare: 4}),
			hour(1, Sample{Pending: 4, Deserved: 4, FairShare: 4}),
			hour(2, Sample{Preemptible: 4, Deserved: 4, FairShare: 4}),
		},
		Pools:     []Pool{pool(0, 8, 8, 0), pool(1, 8, 8, 0), pool(2, 8, 8, 0)},
		Workloads: []Workload{train},
	})
	want := []Shortfall{{Cause: ReclaimedBy, By: "beta", GPUHours: 8}}
	if diff := cmp.Diff(want, got.Shortfalls, approx); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
	if w := got.Shortfalls[0].Words(); w != "reclaimed by beta (within its deserved quota)" {
		t.Errorf("words %q", w)
	}
}

func TestLedger_WaitingOnItsOwnLimit(t *testing.T) {
	big := Workload{Name: "big", QueuedAt: at(0), GPUs: 2, Gang: 1, Reason: "OverLimit"}
	got := ledgerOf(t, Input{
		Samples:   []Sample{hour(0, Sample{Preemptible: 4, Pending: 2, Deserved: 4, FairShare: 6})},
		Pools:     []Pool{pool(0, 16, 4, 0)},
		Workloads: []Workload{big},
	})
	want := []Shortfall{{Cause: OwnLimit, GPUHours: 2}}
	if diff := cmp.Diff(want, got.Shortfalls, approx); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}

func TestLedger_PoolFullOfNonPreemptibleWork(t *testing.T) {
	// 8 GPUs, 7 held by non-preemptible work: a 2-GPU workload could take nothing back
	wait := Workload{Name: "w", QueuedAt: at(0), GPUs: 2, Gang: 1, Reason: "InsufficientCapacity"}
	got := ledgerOf(t, Input{
		Samples:   []Sample{hour(0, Sample{Preemptible: 1, Pending: 2, Deserved: 4, FairShare: 4})},
		Pools:     []Pool{pool(0, 8, 8, 7)},
		Workloads: []Workload{wait},
	})
	want := []Shortfall{{Cause: PoolFullOfNonPreemptible, GPUHours: 2}}
	if diff := cmp.Diff(want, got.Shortfalls, approx); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}

func TestLedger_GangDidNotFitWhenThePoolHadTheFreeGPUs(t *testing.T) {
	// 4 GPUs free in the pool, a gang of 4 one-GPU pods that waited: the free GPUs were not
	// where its pods could go together
	gang := Workload{Name: "ddp", QueuedAt: at(0), GPUs: 4, Gang: 4, Events: []Event{{At: at(1), Kind: "Admitted"}}}
	got := ledgerOf(t, Input{
		Samples:   []Sample{hour(0, Sample{Pending: 4, Deserved: 4, FairShare: 4})},
		Pools:     []Pool{pool(0, 16, 12, 0)},
		Workloads: []Workload{gang},
	})
	want := []Shortfall{{Cause: GangDidNotFit, GPUHours: 4}}
	if diff := cmp.Diff(want, got.Shortfalls, approx); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}

func TestLedger_AShortfallIsSharedByWaitingGPUHours(t *testing.T) {
	// over one hour: 3 GPUs reclaimed by beta for the whole hour, 1 GPU on its own limit for
	// the whole hour; a 4 GPU shortfall splits 3 : 1
	reclaimed := Workload{Name: "r", QueuedAt: at(-2), GPUs: 3, Gang: 1, Events: []Event{
		{At: at(-2), Kind: "Admitted"}, {At: at(-1), Kind: "Reclaimed", By: "beta"}}}
	limited := Workload{Name: "l", QueuedAt: at(-1), GPUs: 1, Gang: 1, Reason: "OverLimit"}
	got := ledgerOf(t, Input{
		Samples:   []Sample{hour(0, Sample{Pending: 4, Deserved: 4, FairShare: 4})},
		Pools:     []Pool{pool(0, 8, 8, 0)},
		Workloads: []Workload{limited, reclaimed},
	})
	want := []Shortfall{{Cause: ReclaimedBy, By: "beta", GPUHours: 3}, {Cause: OwnLimit, GPUHours: 1}}
	if diff := cmp.Diff(want, got.Shortfalls, approx); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}

func TestLedger_AShortfallWithNoRecordedWaitIsUnexplained(t *testing.T) {
	got := ledgerOf(t, Input{
		Samples: []Sample{hour(0, Sample{Pending: 2, Deserved: 4, FairShare: 4})},
		Pools:   []Pool{pool(0, 8, 6, 0)},
	})
	want := []Shortfall{{Cause: Unexplained, GPUHours: 2}}
	if diff := cmp.Diff(want, got.Shortfalls, approx); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}

func TestLedger_OnlyThePeriodCounts(t *testing.T) {
	l := Compute(Input{From: at(1), To: at(2), Samples: []Sample{
		hour(0, Sample{Preemptible: 5, Deserved: 5, FairShare: 5}),
		hour(1, Sample{Preemptible: 1, Deserved: 5, FairShare: 5}),
		hour(2, Sample{Preemptible: 5, Deserved: 5, FairShare: 5}),
	}})
	if len(l.Pools) != 1 || l.Total.Received != 1 || l.Total.RecordedHours != 1 {
		t.Errorf("ledger over the second hour: %+v", l)
	}
}

func TestLedger_EachPoolHasItsOwnAccountAndTheTotalAddsThem(t *testing.T) {
	l := Compute(Input{From: at(0), To: at(1), Samples: []Sample{
		hour(0, Sample{NodePool: "b", NonPreemptible: 2, Deserved: 2, FairShare: 2}),
		hour(0, Sample{NodePool: "a", Borrowed: 3, Preemptible: 1, Deserved: 1, FairShare: 1}),
	}})
	var pools []string
	for _, p := range l.Pools {
		pools = append(pools, p.NodePool)
	}
	if diff := cmp.Diff([]string{"a", "b"}, pools); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
	want := Figures{Deserved: 3, FairShare: 3, Entitled: 3, Received: 6, NonPreemptible: 2, Borrowed: 3, RecordedHours: 1}
	if diff := cmp.Diff(want, l.Total, approx); diff != "" {
		t.Errorf("total (-want +got):\n%s", diff)
	}
}

func TestWaits_FromQueuedToAdmittedAndFromEachEvictionToTheNextAdmission(t *testing.T) {
	w := Workload{Name: "w", QueuedAt: at(0), FinishedAt: at(10), GPUs: 2, Gang: 2, Reason: "", Events: []Event{
		{At: at(1), Kind: "Admitted"},
		{At: at(3), Kind: "Preempted", By: "ops"},
		{At: at(4), Kind: "Admitted"},
		{At: at(8), Kind: "Reclaimed", By: "beta"},
	}}
	got := Waits([]Workload{w}, at(24))
	want := []Wait{
		{Workload: "w", From: at(0), To: at(1), GPUs: 2, Gang: 2},
		{Workload: "w", From: at(3), To: at(4), GPUs: 2, Gang: 2, Reason: "Preempted", By: "ops"},
		{Workload: "w", From: at(8), To: at(10), GPUs: 2, Gang: 2, Reason: "Reclaimed", By: "beta"}, // until it finished
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

func TestWaits_AWorkloadNeverAdmittedWaitsForItsReasonNow(t *testing.T) {
	got := Waits([]Workload{{Name: "w", QueuedAt: at(0), GPUs: 1, Gang: 1, Reason: "OverLimit"}}, at(5))
	want := []Wait{{Workload: "w", From: at(0), To: at(5), GPUs: 1, Gang: 1, Reason: "OverLimit"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// The ledger is computed as purely as the core: it reads what was recorded and does no I/O.
func TestPureDependencies(t *testing.T) {
	deps, err := purity.Deps()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, d := range purity.Impure(deps, []string{"github.com/arbiterhq/arbiter/scheduler/fairness"}) {
		t.Errorf("package fairness must not depend on %s (it reads what was recorded; web reads the store)", d)
	}
}

func TestLedger_AWaitCountsAnywhereInItsBucketNotOnlyInItsFirstRecordedMinutes(t *testing.T) {
	// an hour's bucket of which the history recorded the last 20 minutes, when a workload of
	// 4 GPUs waited after beta reclaimed it: the shortfall is beta's, not unexplained
	reclaimed := Workload{Name: "r", QueuedAt: at(-1), GPUs: 4, Gang: 1, Events: []Event{
		{At: at(-1), Kind: "Admitted"}, {At: at(40.0 / 60), Kind: "Reclaimed", By: "beta"}}}
	s := hour(0, Sample{Pending: 4, Deserved: 4, FairShare: 4})
	s.Span, s.Width = 20*time.Minute, time.Hour
	got := ledgerOf(t, Input{Samples: []Sample{s}, Pools: []Pool{pool(0, 8, 8, 0)}, Workloads: []Workload{reclaimed}})
	want := []Shortfall{{Cause: ReclaimedBy, By: "beta", GPUHours: 4.0 / 3}}
	if diff := cmp.Diff(want, got.Shortfalls, approx); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}
