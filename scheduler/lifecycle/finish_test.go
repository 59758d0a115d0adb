package lifecycle

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/arbiterhq/arbiter/scheduler"
)

// cycleOf is cycleWith with a plan that runs each of ws.
func cycleOf(ws []scheduler.Workload, rebuilt []string, owners map[string]Owner) Cycle {
	plan := scheduler.Plan{}
	for _, w := range ws {
		plan.Running = append(plan.Running, runs(w.Name, 1))
	}
	return cycleWith(ws, &plan, rebuilt, owners)
}

// A workload that leaves the snapshot is named among the rebuilt only in the cycle it leaves;
// it is ended in whichever later cycle its owner says so, and one whose leaving no observed
// cycle named (a cycle not observed) is found all the same. Each cycle's Finished and the
// records kept after it.
func TestFinishFollowsWorkloadsBetweenPodsAcrossCycles(t *testing.T) {
	a, b, c := job("a", running, "n1"), job("b", running, "n2"), job("c", running, "n3")
	between := map[string]Owner{"b": {Known: true}, "c": {Known: true}}
	steps := []struct {
		name     string
		cycle    Cycle
		finished map[string]scheduler.Phase
		kept     []string
	}{
		{"all three run", cycleOf([]scheduler.Workload{a, b, c}, []string{"a", "b", "c"}, nil), nil, []string{"a", "b", "c"}},
		{"b leaves, its Job makes its pod again", cycleOf([]scheduler.Workload{a, c}, []string{"b"}, between), nil, []string{"a", "b", "c"}},
		{"nothing rebuilt, b still between pods", cycleOf([]scheduler.Workload{a, c}, []string{}, between), nil, []string{"a", "b", "c"}},
		{"b's Job completes, nothing rebuilt", cycleOf([]scheduler.Workload{a, c}, []string{}, map[string]Owner{"b": {Known: true, Finished: true}}),
			map[string]scheduler.Phase{"uid-b": completed}, []string{"a", "c"}},
		{"c left in a cycle not observed; its Job is gone", cycleOf([]scheduler.Workload{a}, []string{}, nil),
			map[string]scheduler.Phase{"uid-c": completed}, []string{"a"}},
	}
	s := NewState()
	for _, st := range steps {
		ch := s.Observe(st.cycle)
		if d := cmp.Diff(st.finished, ch.Finished, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s: finished (-want +got):\n%s", st.name, d)
		}
		var kept []string
		for uid := range s.recorded {
			kept = append(kept, strings.TrimPrefix(uid, "uid-"))
		}
		slices.Sort(kept)
		if d := cmp.Diff(st.kept, kept); d != "" {
			t.Errorf("%s: records kept (-want +got):\n%s", st.name, d)
		}
	}
}

// A record remembered from before the start that the first snapshot does not have ended
// meanwhile; one it has goes on.
func TestFinishEndsRememberedWorkloadsTheClusterNoLongerHas(t *testing.T) {
	s := NewState()
	s.Remember("uid-a", Recorded{Phase: running})
	s.Remember("uid-gone", Recorded{Phase: running})
	ch := s.Observe(cycleOf([]scheduler.Workload{job("a", running, "n1")}, []string{"a"}, nil))
	if d := cmp.Diff(map[string]scheduler.Phase{"uid-gone": completed}, ch.Finished); d != "" {
		t.Errorf("finished (-want +got):\n%s", d)
	}
	if _, ok := s.recorded["uid-a"]; !ok || len(s.recorded) != 1 {
		t.Errorf("records kept: %v, want uid-a alone", s.recorded)
	}
}

// BenchmarkObserveBetweenPods is the recorder's pass after one cycle at ten times the reclaim
// benchmark's size (docs/performance.md): 40,000 workloads recorded and running, 100 of them
// evicted and between pods, one rebuilt in the cycle.
func BenchmarkObserveBetweenPods(b *testing.B) {
	var ws []scheduler.Workload
	owners := map[string]Owner{}
	for i := range 40000 {
		ws = append(ws, job("w"+strconv.Itoa(i), running, "n"+strconv.Itoa(i/8)))
	}
	s := NewState()
	s.Observe(cycleOf(ws, nil, nil))
	var rebuilt []string
	for i := range 100 {
		rebuilt = append(rebuilt, "w"+strconv.Itoa(i*400))
		owners["w"+strconv.Itoa(i*400)] = Owner{Known: true}
	}
	present := slices.DeleteFunc(slices.Clone(ws), func(w scheduler.Workload) bool { return owners[w.Name].Known })
	s.Observe(cycleOf(present, rebuilt, owners))
	c := cycleOf(present, []string{"w1"}, owners)
	b.ResetTimer()
	for b.Loop() {
		s.Observe(c)
	}
}
