package scheduler

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// A cycle memoises resolution by what Catalog.Resolve reads (resolveKey). If Resolve comes to
// read something more, workloads that differ only in that would share a resolution: this test
// catches it by checking every plan against Resolve itself, on snapshots that vary everything
// resolution reads.

// varyResolution sets labels on workloads and pods (valid, unknown, empty, missing),
// spec.priorityClassName, types and groups, policies and min-members annotations at random.
func varyResolution(s *Snapshot, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 4242))
	prios := []string{"very-low", "low", "medium", "high", "very-high", "bogus", ""}
	pre := []string{string(Preemptible), string(NonPreemptible), "maybe", ""}
	types := []string{"Standard training", "Job", "Workspace", "Unknown", "Pod", "Distributed training", ""}
	groups := []string{"", "batch", "apps", "kubeflow.org"}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	for i := range s.Projects {
		p := &s.Projects[i].Policy
		switch r.IntN(7) {
		case 0:
			p.ForbidPriorityChange = true
		case 1:
			p.MinPriority = pick(prios)
		case 2:
			p.MaxPriority = pick(prios)
		case 3:
			p.DefaultPriority = pick(prios)
		case 4:
			p.ForbidPreemptibilityChange = true
		}
	}
	labels := func() map[string]string {
		l := map[string]string{}
		if r.IntN(3) == 0 {
			l[LabelPriority] = pick(prios)
		}
		if r.IntN(3) == 0 {
			l[LabelPreemptibility] = pick(pre)
		}
		return l
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		w.Labels = labels()
		if r.IntN(3) == 0 {
			w.Type, w.Group = pick(types), pick(groups)
		}
		if r.IntN(8) == 0 {
			w.Annotations = map[string]string{AnnotationMinMembers: pick([]string{"x", "0", "2", "-1"})}
		}
		for k := range w.Pods {
			w.Pods[k].Labels = labels()
			if r.IntN(3) == 0 {
				w.Pods[k].PriorityClassName = pick(prios)
			}
		}
	}
}

func TestResolveMemoMatchesResolve(t *testing.T) {
	for seed := uint64(1); seed <= 2000; seed++ {
		s := genSnapshot(seed, smallConfig(seed))
		varyResolution(s, seed)
		// Labels looked up in advance (as the Kubernetes cache does) resolve as looked up in
		// the cycle: half of the workloads come prepared.
		for i := range s.Workloads {
			if (uint64(i)+seed)%2 == 0 {
				s.Workloads[i].PrepareLookups()
			}
		}
		p := s.Plan()

		cat := NewCatalog(s.Priorities, s.Categories, s.WorkloadTypes)
		policies := map[string]Policy{}
		for _, pr := range s.Projects {
			policies[pr.Name] = pr.Policy
		}
		var warnings []Warning
		want := map[string]Resolution{}
		for i := range s.Workloads {
			w := &s.Workloads[i]
			if w.Phase == PhaseCompleted || w.Phase == PhaseFailed {
				continue
			}
			r := cat.Resolve(w, policies[w.Project])
			want[w.UID] = r
			_, gw := ResolveGangSize(w)
			warnings = append(append(warnings, r.Warnings...), gw...)
		}
		slices.SortStableFunc(warnings, func(a, b Warning) int { return cmp.Compare(a.Workload, b.Workload) })
		if diff := gocmp.Diff(warnings, p.Warnings); diff != "" {
			t.Fatalf("seed %d: warnings differ from Resolve's (-Resolve +plan):\n%s", seed, diff)
		}
		check := func(uid string, prio Priority, pre Preemptibility, prioFrom, preFrom From) {
			if r := want[uid]; r.Priority != prio || r.Preemptibility != pre {
				t.Fatalf("seed %d: %s resolved to %v %s in the plan, %v %s by Resolve", seed, uid, prio, pre, r.Priority, r.Preemptibility)
			}
			if r := want[uid]; r.PriorityFrom != prioFrom || r.PreemptibilityFrom != preFrom {
				t.Fatalf("seed %d: %s's values came from %+v %+v in the plan, %+v %+v by Resolve", seed, uid, prioFrom, preFrom, r.PriorityFrom, r.PreemptibilityFrom)
			}
		}
		for _, e := range p.Pending {
			check(e.Workload, e.Priority, e.Preemptibility, e.PriorityFrom, e.PreemptibilityFrom)
		}
		for _, e := range p.Running {
			check(e.Workload, e.Priority, e.Preemptibility, e.PriorityFrom, e.PreemptibilityFrom)
		}
	}
}
