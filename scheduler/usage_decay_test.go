package scheduler

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// poolPlan is a plan that leaves the pool's GPUs allocated to projects as given.
func poolPlan(pool string, gpus int64, allocated map[string]int64) *Plan {
	p := &Plan{NodePools: []NodePoolStatus{{Name: pool, GPUs: gpus, ReadyGPUs: gpus}}}
	for name, n := range allocated {
		p.Projects = append(p.Projects, QueueStatus{Name: name, NodePool: pool, Allocated: n})
	}
	return p
}

// hold observes the plan every minute over [from, to).
func hold(u *UsageDecay, pools []NodePool, from, to time.Time, plan *Plan) {
	for at := from; at.Before(to); at = at.Add(time.Minute) {
		u.Observe(at, plan, pools)
	}
}

func fairPools(window, halfLife time.Duration) []NodePool {
	return []NodePool{{Name: "default", TimeBasedFairness: TimeBasedFairness{Enabled: true, Window: window, HalfLife: halfLife, KValue: 1}}}
}

var approx = cmpopts.EquateApprox(0, 0.01)

func TestS28_UsageIsAFractionOfWhatThePoolCouldGive(t *testing.T) {
	pools := fairPools(8*time.Hour, 0)
	u := NewUsageDecay(pools)
	hold(u, pools, t0, t0.Add(8*time.Hour), poolPlan("default", 10, map[string]int64{"a": 5, "b": 2}))
	got := u.Value(t0.Add(8*time.Hour), pools)
	want := map[string]map[string]float64{"default": {"a": 0.5, "b": 0.2}}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("past use (-want +got):\n%s", diff)
	}
}

func TestS28_UsageDecaysWithTheHalfLife(t *testing.T) {
	// a held the whole pool in the first half of the window, b in the second
	for _, tc := range []struct {
		halfLife time.Duration
		a, b     float64
	}{
		{0, 0.5, 0.5},
		// b: ∫₀⁴ 2^-t dt / ∫₀⁸ 2^-t dt = (1 - 2^-4) / (1 - 2^-8)
		{time.Hour, 1 - (1-math.Exp2(-4))/(1-math.Exp2(-8)), (1 - math.Exp2(-4)) / (1 - math.Exp2(-8))},
	} {
		pools := fairPools(8*time.Hour, tc.halfLife)
		u := NewUsageDecay(pools)
		hold(u, pools, t0, t0.Add(4*time.Hour), poolPlan("default", 8, map[string]int64{"a": 8}))
		hold(u, pools, t0.Add(4*time.Hour), t0.Add(8*time.Hour), poolPlan("default", 8, map[string]int64{"b": 8}))
		got := u.Value(t0.Add(8*time.Hour), pools)
		want := map[string]map[string]float64{"default": {"a": tc.a, "b": tc.b}}
		if diff := cmp.Diff(want, got, approx); diff != "" {
			t.Errorf("half-life %s: past use (-want +got):\n%s", tc.halfLife, diff)
		}
	}
}

func TestS28_UseOutsideTheWindowIsForgotten(t *testing.T) {
	pools := fairPools(time.Hour, 0)
	u := NewUsageDecay(pools)
	hold(u, pools, t0, t0.Add(time.Hour), poolPlan("default", 4, map[string]int64{"a": 4}))
	hold(u, pools, t0.Add(time.Hour), t0.Add(3*time.Hour), poolPlan("default", 4, map[string]int64{"b": 1}))
	got := u.Value(t0.Add(3*time.Hour), pools)
	if diff := cmp.Diff(map[string]map[string]float64{"default": {"b": 0.25}}, got, approx); diff != "" {
		t.Errorf("past use (-want +got):\n%s", diff)
	}
	if n := len(u.pools["default"].projects); n != 1 {
		t.Errorf("the account keeps %d projects; a, which used nothing within the window, should be forgotten", n)
	}
}

func TestS28_TimeNotWatchedIsNotCounted(t *testing.T) {
	pools := fairPools(8*time.Hour, 0)
	u := NewUsageDecay(pools)
	hold(u, pools, t0, t0.Add(time.Hour), poolPlan("default", 4, map[string]int64{"a": 4}))
	u.Interrupt() // the replica stopped leading for three hours
	hold(u, pools, t0.Add(4*time.Hour), t0.Add(5*time.Hour), poolPlan("default", 4, map[string]int64{"b": 4}))
	got := u.Value(t0.Add(5*time.Hour), pools)
	if diff := cmp.Diff(map[string]map[string]float64{"default": {"a": 0.5, "b": 0.5}}, got, approx); diff != "" {
		t.Errorf("past use (-want +got):\n%s", diff)
	}
}

func TestS28_AnAccountSeededFromHistoryReadsAsOneObserved(t *testing.T) {
	pools := fairPools(8*time.Hour, 2*time.Hour)
	observed, seeded := NewUsageDecay(pools), NewUsageDecay(pools)
	hold(observed, pools, t0, t0.Add(3*time.Hour), poolPlan("default", 8, map[string]int64{"a": 6, "b": 2}))
	hold(observed, pools, t0.Add(3*time.Hour), t0.Add(6*time.Hour), poolPlan("default", 8, map[string]int64{"b": 8}))
	// the history's hourly averages
	for h := range 6 {
		from, to := t0.Add(time.Duration(h)*time.Hour), t0.Add(time.Duration(h+1)*time.Hour)
		seeded.AddCapacity("default", from, to, 8*3600)
		if h < 3 {
			seeded.AddUsage("default", "a", from, to, 6*3600)
			seeded.AddUsage("default", "b", from, to, 2*3600)
		} else {
			seeded.AddUsage("default", "b", from, to, 8*3600)
		}
	}
	end := t0.Add(6 * time.Hour)
	if diff := cmp.Diff(observed.Value(end, pools), seeded.Value(end, pools), approx); diff != "" {
		t.Errorf("seeded from history (-observed +seeded):\n%s", diff)
	}
}

func TestS28_APoolWithS28OffIsAccountedButNotGiven(t *testing.T) {
	off := []NodePool{{Name: "default"}}
	u := NewUsageDecay(off)
	hold(u, off, t0, t0.Add(time.Hour), poolPlan("default", 4, map[string]int64{"a": 2}))
	if got := u.Value(t0.Add(time.Hour), off); got != nil {
		t.Errorf("with S28 off the snapshot gets no past use, got %v", got)
	}
	on := []NodePool{{Name: "default", TimeBasedFairness: TimeBasedFairness{Enabled: true, KValue: 1}}} // the default window
	got := u.Value(t0.Add(time.Hour), on)
	if diff := cmp.Diff(map[string]map[string]float64{"default": {"a": 0.5}}, got, approx); diff != "" {
		t.Errorf("turned on, the pool's past is there (-want +got):\n%s", diff)
	}
}
