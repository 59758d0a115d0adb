package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// withPastUse is the snapshot with random past use for every project in every pool, and S28
// set in every pool as set says.
func withPastUse(s *Snapshot, r *rand.Rand, set func(*TimeBasedFairness)) *Snapshot {
	c := *s
	c.NodePools = append([]NodePool(nil), s.NodePools...)
	c.HistoricalUsage = map[string]map[string]float64{}
	for i := range c.NodePools {
		set(&c.NodePools[i].TimeBasedFairness)
		used := map[string]float64{}
		for _, p := range c.Projects {
			if r.IntN(3) > 0 {
				used[p.Name] = r.Float64()
			}
		}
		c.HistoricalUsage[c.NodePools[i].Name] = used
	}
	return &c
}

func TestPropertyS28OffIsS11Exactly(t *testing.T) {
	const snapshots = 3000
	var binds, evictions int
	for seed := uint64(1); seed <= snapshots; seed++ {
		s := genSnapshot(seed, smallConfig(seed))
		r := rand.New(rand.NewPCG(seed, 28))
		want := s.Plan()
		binds += len(want.Binds)
		evictions += len(want.Evictions)
		for _, variant := range []struct {
			what string
			s    *Snapshot
		}{
			{"S28 off with past use", withPastUse(s, r, func(tf *TimeBasedFairness) { tf.KValue = 1 + r.Float64()*4 })},
			{"S28 on with kValue 0", withPastUse(s, r, func(tf *TimeBasedFairness) { tf.Enabled = true })},
			{"S28 on with no past use", func() *Snapshot {
				c := withPastUse(s, r, func(tf *TimeBasedFairness) { tf.Enabled, tf.KValue = true, 1+r.Float64()*4 })
				c.HistoricalUsage = nil
				return c
			}()},
		} {
			if diff := cmp.Diff(want, variant.s.Plan()); diff != "" {
				t.Fatalf("seed %d: %s changed the plan (-S11 +variant):\n%s", seed, variant.what, diff)
			}
		}
	}
	if binds < 500 || evictions < 50 {
		t.Errorf("too few decisions to mean much: %d binds, %d evictions", binds, evictions)
	}
	t.Logf("%d snapshots, each planned the same four ways: %d binds, %d evictions", snapshots, binds, evictions)
}

// TestPropertyS28NeverMovesGuaranteedGPUs: past use, however it is spread and however strong,
// changes no unit's GPUs within its deserved quota, reclaims nothing a project holds within
// its deserved quota, and keeps every invariant of the other rules.
func TestPropertyS28NeverMovesGuaranteedGPUs(t *testing.T) {
	const snapshots = 5000
	var compared, guaranteed int64
	var changed, reclaims int
	for seed := uint64(1); seed <= snapshots; seed++ {
		cfg := smallConfig(seed)
		cfg.pools, cfg.maxGang, cfg.maxGPUs, cfg.varied = 1, 1, 1, false
		r := rand.New(rand.NewPCG(seed, 28))
		off := guaranteeSnapshot(seed, cfg)
		on := withPastUse(off, r, func(tf *TimeBasedFairness) { tf.Enabled, tf.KValue = true, 0.1+r.Float64()*5 })
		offPlan, onPlan := off.Plan(), on.Plan()
		// and where reclaim is free to choose, in one or two pools: with one-GPU workloads
		// (none straddles its deserved quota) nothing within deserved quota is reclaimed;
		// with any workloads every invariant holds
		oneGPU := smallConfig(seed)
		oneGPU.maxGang, oneGPU.maxGPUs = 1, 1
		s28 := func(tf *TimeBasedFairness) { tf.Enabled, tf.KValue = r.IntN(4) > 0, 0.1+r.Float64()*5 }
		free, general := withPastUse(genSnapshot(seed, oneGPU), r, s28), withPastUse(genSnapshot(seed, smallConfig(seed)), r, s28)
		freePlan, generalPlan := free.Plan(), general.Plan()
		if err := reclaimedWithinDeserved(free, &freePlan); err != nil {
			t.Fatalf("seed %d: with S28: %v", seed, err)
		}
		for _, c := range []struct {
			s *Snapshot
			p *Plan
		}{{on, &onPlan}, {free, &freePlan}, {general, &generalPlan}} {
			if err := checkInvariants(c.s, c.p); err != nil {
				t.Fatalf("seed %d: with S28: %v", seed, err)
			}
			for _, e := range c.p.Evictions {
				if e.Rule == RuleReclaim {
					reclaims++
				}
			}
		}
		if !cmp.Equal(offPlan.Binds, onPlan.Binds) || !cmp.Equal(offPlan.Evictions, onPlan.Evictions) {
			changed++
		}
		a, b := withinDeserved(offPlan), withinDeserved(onPlan)
		for _, p := range off.Projects {
			d := p.Department
			if d == "" || a.belowDept[d] || b.belowDept[d] {
				if a.projects[p.Name] != b.projects[p.Name] {
					t.Fatalf("seed %d: project %s has %d GPUs within its deserved quota without S28, %d with it", seed, p.Name, a.projects[p.Name], b.projects[p.Name])
				}
				compared++
				guaranteed += a.projects[p.Name]
			}
		}
		for d, n := range a.depts {
			if b.depts[d] != n {
				t.Fatalf("seed %d: department %s has %d GPUs within its deserved quota without S28, %d with it", seed, d, n, b.depts[d])
			}
			compared++
		}
	}
	// S28 must have had something to change, and reclaim something to choose
	if compared < 10000 || guaranteed < 10000 || changed < 200 || reclaims < 100 {
		t.Errorf("too little compared to mean much: %d units, %d guaranteed GPUs, %d plans S28 changed, %d reclaims", compared, guaranteed, changed, reclaims)
	}
	t.Logf("%d snapshots: %d units compared, %d project GPUs within deserved quota, %d plans changed by S28, %d reclaims", snapshots, compared, guaranteed, changed, reclaims)
}

// reclaimedWithinDeserved checks that after the plan's reclaims every project still runs, in
// every pool, what it ran there within its deserved quota.
func reclaimedWithinDeserved(s *Snapshot, p *Plan) error {
	nodes := map[string]*Node{}
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	running, reclaimed := map[[2]string]int64{}, map[[2]string]int64{}
	reclaim, reclaimPods := map[string]bool{}, map[string]bool{}
	for _, e := range p.Evictions {
		reclaim[e.Workload] = e.Rule == RuleReclaim && len(e.Pods) == 0
		for _, pod := range e.Pods { // replicas beyond a minimum (S26)
			reclaimPods[pod.UID] = e.Rule == RuleReclaim
		}
	}
	for _, w := range s.Workloads {
		if w.Project == "" || w.PreemptedBy != "" {
			continue
		}
		for _, pod := range w.Pods {
			if n := nodes[pod.NodeName]; n != nil && !pod.Terminating {
				key := [2]string{w.Project, NodePoolOf(s.NodePools, n)}
				running[key] += pod.Requests.GPUs
				if reclaim[w.UID] || reclaimPods[pod.UID] {
					reclaimed[key] += pod.Requests.GPUs
				}
			}
		}
	}
	for key, had := range running {
		var deserved int64
		for _, proj := range s.Projects {
			if proj.Name == key[0] {
				deserved = proj.Quotas[key[1]].Deserved
			}
		}
		if had-reclaimed[key] < min(had, deserved) {
			return fmt.Errorf("S17 took %d GPUs from %s in %s, which ran %d there with %d deserved", reclaimed[key], key[0], key[1], had, deserved)
		}
	}
	return nil
}
