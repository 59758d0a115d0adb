package scheduler

import (
	"math/rand/v2"
	"testing"
)

// S25 as a property: an open unit never takes guaranteed GPUs from a fenced one. Queue priority
// orders only units past their deserved quota, so opening units and giving them offsets at
// random changes nothing below deserved quota: each department ends the cycle with the same
// GPUs within its deserved quota (min(allocated, deserved)), and so does each project of a
// department that ends below its own.
//
// The snapshots make GPUs interchangeable, so that the order of attempts past deserved quota
// cannot leave a GPU stranded on a node whose other resources ran out: one pool, pods of one
// GPU or none asking for no CPU or memory, and departments whose deserved quota covers their
// projects'. They also rule out evictions (minimum runtimes no victim reaches), as the GPUs a
// victim frees serve only its preemptor, one cycle later: which GPU stays idle in this one
// follows the order of attempts.
func TestPropertyS25OpenUnitsNeverTakeGuaranteedGPUs(t *testing.T) {
	const snapshots = 5000
	var compared, guaranteed int64
	for seed := uint64(1); seed <= snapshots; seed++ {
		cfg := smallConfig(seed)
		cfg.pools, cfg.maxGang, cfg.maxGPUs, cfg.varied = 1, 1, 1, false
		fenced, open := guaranteeSnapshot(seed, cfg), guaranteeSnapshot(seed, cfg)
		r := rand.New(rand.NewPCG(seed, 25))
		draw := func() (PriorityPolicy, int32) {
			pol := Fence
			if r.IntN(2) == 0 {
				pol = Open
			}
			return pol, int32(r.IntN(301) - 150)
		}
		for i := range open.Departments {
			open.Departments[i].PriorityPolicy, open.Departments[i].PriorityOffset = draw()
		}
		for i := range open.Projects {
			open.Projects[i].PriorityPolicy, open.Projects[i].PriorityOffset = draw()
		}
		a, b := withinDeserved(fenced.Plan()), withinDeserved(open.Plan())
		for _, p := range fenced.Projects {
			d := p.Department
			if d == "" || a.belowDept[d] || b.belowDept[d] {
				if a.projects[p.Name] != b.projects[p.Name] {
					t.Fatalf("seed %d: project %s has %d GPUs within its deserved quota fenced, %d with open units", seed, p.Name, a.projects[p.Name], b.projects[p.Name])
				}
				compared++
				guaranteed += a.projects[p.Name]
			}
		}
		for d, n := range a.depts {
			if b.depts[d] != n {
				t.Fatalf("seed %d: department %s has %d GPUs within its deserved quota fenced, %d with open units", seed, d, n, b.depts[d])
			}
			compared++
		}
	}
	if compared < 10000 || guaranteed < 10000 {
		t.Errorf("too little compared to mean much: %d units, %d guaranteed GPUs", compared, guaranteed)
	}
	t.Logf("%d snapshots: %d units compared, %d project GPUs within deserved quota", snapshots, compared, guaranteed)
}

// guaranteeSnapshot is a random snapshot shaped as TestPropertyS25OpenUnitsNeverTakeGuaranteedGPUs says.
func guaranteeSnapshot(seed uint64, cfg genConfig) *Snapshot {
	s := genSnapshot(seed, cfg)
	pool := s.NodePools[0].Name
	for i := range s.Workloads {
		for k := range s.Workloads[i].Pods {
			s.Workloads[i].Pods[k].Requests.MilliCPU, s.Workloads[i].Pods[k].Requests.Memory = 0, 0
		}
	}
	for i := range s.Projects {
		s.Projects[i].Policy.MinRuntimeSeconds = 1e9
		s.Projects[i].Policy.ReclaimMinRuntimeSeconds = 1e9
	}
	for i := range s.Departments {
		d := &s.Departments[i]
		q := d.Quotas[pool]
		sum := int64(0)
		for _, p := range s.Projects {
			if p.Department == d.Name {
				sum += p.Quotas[pool].Deserved
			}
		}
		q.Deserved = max(q.Deserved, sum)
		if q.Limit >= 0 && q.Limit < q.Deserved {
			q.Limit = q.Deserved
		}
		d.Quotas = map[string]Quota{pool: q}
	}
	return s
}

// unitsWithinDeserved is what a plan leaves each unit within its deserved quota (one pool).
type unitsWithinDeserved struct {
	projects, depts map[string]int64
	belowDept       map[string]bool // the department ends below its deserved quota
}

func withinDeserved(p Plan) unitsWithinDeserved {
	u := unitsWithinDeserved{projects: map[string]int64{}, depts: map[string]int64{}, belowDept: map[string]bool{}}
	for _, q := range p.Projects {
		u.projects[q.Name] = min(q.Allocated, q.Deserved)
	}
	for _, q := range p.Departments {
		u.depts[q.Name] = min(q.Allocated, q.Deserved)
		u.belowDept[q.Name] = q.Allocated < q.Deserved
	}
	return u
}
