package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The invariants of docs/testing.md "What the tests cover", checked on the plans of 10,000 random snapshots. A failure
// prints the seed; genSnapshot(seed, smallConfig(seed)) rebuilds the snapshot.

const propertySnapshots = 10_000

func smallConfig(seed uint64) genConfig {
	r := rand.New(rand.NewPCG(seed, 7))
	return genConfig{
		pools:       1 + r.IntN(2),
		nodes:       2 + r.IntN(9),
		gpusPerNode: int64(2 + r.IntN(7)),
		depts:       r.IntN(4),
		projects:    1 + r.IntN(6),
		running:     r.IntN(30),
		pending:     r.IntN(30),
		maxGang:     1 + r.IntN(4),
		maxGPUs:     int64(1 + r.IntN(4)),
		varied:      true,
	}
}

func TestPropertyInvariants(t *testing.T) {
	var evictions, binds, reclaims, replicas int
	for seed := uint64(1); seed <= propertySnapshots; seed++ {
		s := genSnapshot(seed, smallConfig(seed))
		p := s.Plan()
		if err := checkInvariants(s, &p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if seed%50 == 0 {
			if diff := cmp.Diff(p, shuffled(s, seed).Plan()); diff != "" {
				t.Fatalf("seed %d: the plan depends on the order of the snapshot's lists (-first +shuffled):\n%s", seed, diff)
			}
		}
		evictions += len(p.Evictions)
		binds += len(p.Binds)
		for _, e := range p.Evictions {
			if e.Rule == RuleReclaim {
				reclaims++
			}
			if len(e.Pods) > 0 {
				replicas++
			}
		}
	}
	// the generator must exercise what the invariants are about
	if evictions < 100 || reclaims < 20 || binds < 1000 || replicas < 20 {
		t.Errorf("too few decisions to mean much: %d binds, %d evictions (%d reclaims, %d of replicas)", binds, evictions, reclaims, replicas)
	}
	t.Logf("%d snapshots: %d binds, %d evictions, %d of them reclaims, %d of replicas beyond a minimum", propertySnapshots, binds, evictions, reclaims, replicas)
}

// shuffled is the same snapshot with its lists in another order.
func shuffled(s *Snapshot, seed uint64) *Snapshot {
	r := rand.New(rand.NewPCG(seed, 99))
	c := *s
	c.Nodes = append([]Node(nil), s.Nodes...)
	c.Projects = append([]Project(nil), s.Projects...)
	c.Workloads = append([]Workload(nil), s.Workloads...)
	c.Departments = append([]Department(nil), s.Departments...)
	r.Shuffle(len(c.Nodes), func(i, j int) { c.Nodes[i], c.Nodes[j] = c.Nodes[j], c.Nodes[i] })
	r.Shuffle(len(c.Projects), func(i, j int) { c.Projects[i], c.Projects[j] = c.Projects[j], c.Projects[i] })
	r.Shuffle(len(c.Workloads), func(i, j int) { c.Workloads[i], c.Workloads[j] = c.Workloads[j], c.Workloads[i] })
	r.Shuffle(len(c.Departments), func(i, j int) { c.Departments[i], c.Departments[j] = c.Departments[j], c.Departments[i] })
	return &c
}

// use is GPUs of a project or department in a pool: all, and non-preemptible.
type use struct{ all, np int64 }

// checkInvariants recomputes, from the snapshot alone, what the plan leads to.
func checkInvariants(s *Snapshot, p *Plan) error {
	cat := NewCatalog(s.Priorities, s.Categories, s.WorkloadTypes)
	nodes := map[string]*Node{}
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	poolOfNode := func(name string) string {
		n := nodes[name]
		if n == nil {
			return ""
		}
		catchAll := ""
		for _, np := range s.NodePools { // the generator's pools are in name order
			if np.LabelKey == "" {
				if catchAll == "" {
					catchAll = np.Name
				}
			} else if n.Labels[np.LabelKey] == np.LabelValue {
				return np.Name
			}
		}
		return catchAll
	}
	projects := map[string]*Project{}
	for i := range s.Projects {
		projects[s.Projects[i].Name] = &s.Projects[i]
	}
	depts := map[string]*Department{}
	for i := range s.Departments {
		depts[s.Departments[i].Name] = &s.Departments[i]
	}
	type resolved struct {
		w     *Workload
		r     Resolution
		alive bool
	}
	wls := map[string]*resolved{}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		var pol Policy
		if pr := projects[w.Project]; pr != nil {
			pol = pr.Policy
		}
		wls[w.UID] = &resolved{w: w, r: cat.Resolve(w, pol), alive: w.Phase != PhaseCompleted && w.Phase != PhaseFailed}
	}

	before := map[[2]string]use{} // by {project or "dept:"+name, pool}
	after := map[[2]string]use{}
	// a semi-preemptible workload's minimum (S26): its first bound pods, then pending ones
	minimum := map[string]bool{}
	for _, w := range wls {
		if w.r.Preemptibility != SemiPreemptible {
			continue
		}
		gang, _ := ResolveGangSize(w.w)
		n := 0
		for _, bound := range []bool{true, false} {
			for _, pod := range w.w.Pods {
				if (pod.NodeName != "") == bound && !pod.Terminating && n < gang {
					minimum[pod.UID] = true
					n++
				}
			}
		}
	}
	addPod := func(m map[[2]string]use, w *resolved, pool string, gpus int64, pod string) {
		np := w.r.Preemptibility == NonPreemptible ||
			w.r.Preemptibility == SemiPreemptible && (pod == "" || minimum[pod] || w.w.Phase == PhaseSuspended)
		addUse(m, projects, depts, w.w.Project, pool, gpus, np)
	}
	add := func(m map[[2]string]use, w *resolved, pool string, gpus int64) { addPod(m, w, pool, gpus, "") }
	used := map[string]Resources{}
	evicted := map[string]bool{}
	evictedPods := map[string]bool{} // replicas beyond a minimum (S26)
	for _, e := range p.Evictions {
		if evicted[e.Workload] {
			return fmt.Errorf("%s evicted twice", e.Workload)
		}
		for _, pod := range e.Pods {
			if evictedPods[pod.UID] {
				return fmt.Errorf("pod %s evicted twice", pod.Name)
			}
			evictedPods[pod.UID] = true
		}
		if len(e.Pods) == 0 {
			evicted[e.Workload] = true
		}
	}
	// S19 over time: a workload this plan evicts gets none of its pods placed by it, which
	// would leave it running and its preemptor waiting for it (replicas beyond a minimum
	// excepted: their minimum runs on, S26)
	for _, b := range p.Binds {
		if evicted[b.Workload] {
			return fmt.Errorf("%s is evicted and has pod %s bound in the same plan", b.Workload, b.Pod.Name)
		}
	}
	boundPods := map[string]bool{}
	for _, w := range wls {
		if !w.alive {
			continue
		}
		for _, pod := range w.w.Pods {
			if pod.NodeName == "" || w.w.Phase == PhaseSuspended || nodes[pod.NodeName] == nil {
				continue
			}
			boundPods[pod.UID] = true
			r := pod.Requests
			r.Pods = 1
			used[pod.NodeName] = used[pod.NodeName].Add(r)
			if !pod.Terminating {
				addPod(before, w, poolOfNode(pod.NodeName), r.GPUs, pod.UID)
				if !evicted[w.w.UID] && !evictedPods[pod.UID] {
					addPod(after, w, poolOfNode(pod.NodeName), r.GPUs, pod.UID)
				}
			}
		}
	}
	overBefore := map[string]bool{}
	for name, u := range used {
		n := nodes[name]
		overBefore[name] = !n.Allocatable.covers(u.Add(n.Occupied))
	}

	// binds: each pod once, to a node with room
	bindsOf := map[string]int{}
	for _, b := range p.Binds {
		w := wls[b.Workload]
		if w == nil {
			return fmt.Errorf("bind for unknown workload %s", b.Workload)
		}
		if boundPods[b.Pod.UID] {
			return fmt.Errorf("pod %s bound twice", b.Pod.Name)
		}
		boundPods[b.Pod.UID] = true
		var req Resources
		for _, pod := range w.w.Pods {
			if pod.UID == b.Pod.UID {
				req = pod.Requests
			}
		}
		req.Pods = 1
		used[b.Node] = used[b.Node].Add(req)
		addPod(after, w, poolOfNode(b.Node), req.GPUs, b.Pod.UID)
		bindsOf[b.Workload]++
	}
	for name, u := range used {
		n := nodes[name]
		if !overBefore[name] && !n.Allocatable.covers(u.Add(n.Occupied)) {
			return fmt.Errorf("node %s over capacity: %+v used of %+v", name, u.Add(n.Occupied), n.Allocatable)
		}
	}
	for _, r := range p.Resumes {
		add(after, wls[r.Workload], r.NodePool, r.GPUs)
	}
	preemptors := map[string]bool{}
	for _, e := range p.Evictions {
		preemptors[e.Preemptor] = true
	}
	// GPUs set aside for preemptors count as theirs; when they span pools the split is not
	// in the plan, and the quota checks of that project are skipped.
	uncertain := map[string]bool{}
	for _, pw := range p.Pending {
		if !preemptors[pw.Workload] || len(pw.NominatedNodes) == 0 {
			continue
		}
		pool := poolOfNode(pw.NominatedNodes[0])
		for _, n := range pw.NominatedNodes[1:] {
			if poolOfNode(n) != pool {
				uncertain[pw.Project] = true
				if pr := projects[pw.Project]; pr != nil {
					uncertain["dept:"+pr.Department] = true
				}
			}
		}
		add(after, wls[pw.Workload], pool, pw.NominatedGPUs)
	}

	// limits and non-preemptible quota
	quotaOf := func(key [2]string) Quota {
		var qs map[string]Quota
		if name, ok := cutPrefix(key[0], "dept:"); ok {
			qs = depts[name].Quotas
		} else {
			qs = projects[key[0]].Quotas
		}
		q, ok := qs[key[1]]
		return normalQuota(q, ok)
	}
	for key, u := range after {
		if uncertain[key[0]] {
			continue
		}
		q := quotaOf(key)
		b := before[key]
		if q.Limit >= 0 && b.all <= q.Limit && u.all > q.Limit {
			return fmt.Errorf("%s over its limit in %s: %d > %d", key[0], key[1], u.all, q.Limit)
		}
		if u.np > max(q.Deserved, b.np) {
			return fmt.Errorf("%s has %d non-preemptible GPUs in %s, deserved %d", key[0], u.np, key[1], q.Deserved)
		}
	}

	// victims
	for _, e := range p.Evictions {
		v, by := wls[e.Workload], wls[e.Preemptor]
		if v == nil || by == nil {
			return fmt.Errorf("eviction names unknown workloads: %+v", e)
		}
		if v.r.Preemptibility == SemiPreemptible && len(e.Pods) > 0 {
			for _, pod := range e.Pods {
				if minimum[pod.UID] {
					return fmt.Errorf("S26: pod %s of the minimum of %s evicted", pod.Name, e.Name)
				}
			}
		} else if v.r.Preemptibility != Preemptible || len(e.Pods) > 0 {
			return fmt.Errorf("%s %s evicted (pods %v)", v.r.Preemptibility, e.Name, e.Pods)
		}
		same := v.w.Project == by.w.Project
		if pr := projects[by.w.Project]; pr != nil && s.Now.Sub(by.w.QueuedAt) < time.Duration(pr.Policy.PreemptionDelaySeconds)*time.Second {
			return fmt.Errorf("S27: %s evicted %s before its project's preemption delay", by.w.Name, e.Name)
		}
		switch e.Rule {
		case RulePreemption:
			if !same || v.r.Priority.Value >= by.r.Priority.Value {
				return fmt.Errorf("S16 eviction of %s (%s, %d) for %s (%s, %d)", e.Name, v.w.Project, v.r.Priority.Value,
					by.w.Name, by.w.Project, by.r.Priority.Value)
			}
		case RuleReclaim:
			if same {
				return fmt.Errorf("S17 eviction inside project %s", v.w.Project)
			}
			pool := ""
			for _, pod := range v.w.Pods {
				if pod.NodeName != "" {
					pool = poolOfNode(pod.NodeName)
				}
			}
			if secs := projects[v.w.Project].Policy.ReclaimMinRuntimeSeconds; s.Now.Sub(v.w.StartedAt) < time.Duration(secs)*time.Second {
				return fmt.Errorf("S27: reclaimed %s before its project's reclaim minimum runtime", e.Name)
			}
			q := quotaOf([2]string{v.w.Project, pool})
			if before[[2]string{v.w.Project, pool}].all <= q.Deserved {
				return fmt.Errorf("S17 reclaimed %s from %s, which was within its deserved quota in %s", e.Name, v.w.Project, pool)
			}
		default:
			return fmt.Errorf("eviction without a rule: %+v", e)
		}
	}

	// gangs: whole or nothing
	for uid, n := range bindsOf {
		w := wls[uid]
		gang, _ := ResolveGangSize(w.w)
		bound, pending := 0, 0
		for _, pod := range w.w.Pods {
			switch {
			case pod.NodeName != "" && !pod.Terminating:
				bound++
			case pod.NodeName == "" && !pod.Terminating:
				pending++
			}
		}
		if semi := w.r.Preemptibility == SemiPreemptible; semi && bound == 0 && n < gang ||
			!semi && gang > 1 && bound == 0 && (n != pending || n < gang) {
			return fmt.Errorf("gang %s of %d placed %d of %d pending pods", w.w.Name, gang, n, pending)
		}
	}
	for _, r := range p.Resumes {
		w := wls[r.Workload]
		if gang, _ := ResolveGangSize(w.w); len(w.w.Pods) < gang {
			return fmt.Errorf("suspended %s resumed with an incomplete gang", w.w.Name)
		}
	}
	return nil
}

// addUse adds GPUs to a project's use of a pool and to its department's.
func addUse(m map[[2]string]use, projects map[string]*Project, depts map[string]*Department, project, pool string, gpus int64, np bool) {
	pr := projects[project]
	if pr == nil || pool == "" {
		return
	}
	keys := [][2]string{{pr.Name, pool}}
	if depts[pr.Department] != nil {
		keys = append(keys, [2]string{"dept:" + pr.Department, pool})
	}
	for _, k := range keys {
		u := m[k]
		u.all += gpus
		if np {
			u.np += gpus
		}
		m[k] = u
	}
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}
