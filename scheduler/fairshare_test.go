package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// S11 per node pool, as a property: when every project uses one pool, a pool's decisions are
// its own. The plan of a snapshot made of several one-pool snapshots (departments shared by
// name across them, with a quota in each pool) decides in each pool exactly what that pool's
// snapshot alone decides. Ordering by totals summed over pools fails this as soon as a
// department has projects in two pools: its use of one pool would move it in the other.
func TestPropertyFairSharePerPool(t *testing.T) {
	const snapshots = 1500
	var binds, evictions int
	for seed := uint64(1); seed <= snapshots; seed++ {
		r := rand.New(rand.NewPCG(seed, 31))
		nPools, depts := 2+r.IntN(2), 1+r.IntN(3)
		parts := make([]*Snapshot, nPools)
		for k := range parts {
			cfg := smallConfig(seed*8 + uint64(k))
			cfg.pools, cfg.depts = 1, depts
			parts[k] = onePool(genSnapshot(seed*8+uint64(k), cfg), k)
		}
		shareDepartmentPolicies(parts)
		whole := mergePools(parts)
		got := whole.Plan()
		for k, part := range parts {
			want := part.Plan()
			if diff := cmp.Diff(poolDecisions(&want, "k"+strconv.Itoa(k)+"-"), poolDecisions(&got, "k"+strconv.Itoa(k)+"-")); diff != "" {
				t.Fatalf("seed %d: pool %d decides differently beside other pools (-alone +together):\n%s", seed, k, diff)
			}
		}
		binds += len(got.Binds)
		evictions += len(got.Evictions)
	}
	if binds < 1000 || evictions < 50 {
		t.Errorf("too few decisions to mean much: %d binds, %d evictions", binds, evictions)
	}
	t.Logf("%d snapshots: %d binds, %d evictions", snapshots, binds, evictions)
}

// onePool renames a one-pool snapshot's nodes, projects and workloads with the prefix
// "k<k>-" and its pool to "p<k>", which its projects use alone; departments keep their names.
func onePool(s *Snapshot, k int) *Snapshot {
	prefix, pool := "k"+strconv.Itoa(k)+"-", "p"+strconv.Itoa(k)
	s.NodePools = []NodePool{{Name: pool, LabelKey: "pool", LabelValue: pool, Placement: s.NodePools[0].Placement}}
	for i := range s.Nodes {
		s.Nodes[i].Name = prefix + s.Nodes[i].Name
		s.Nodes[i].Labels["pool"] = pool
	}
	rekey := func(q map[string]Quota) map[string]Quota {
		return map[string]Quota{pool: q[poolName(0)]}
	}
	for i := range s.Departments {
		s.Departments[i].Quotas = rekey(s.Departments[i].Quotas)
	}
	for i := range s.Projects {
		p := &s.Projects[i]
		p.Name, p.Quotas, p.NodePools = prefix+p.Name, rekey(p.Quotas), []string{pool}
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		w.UID, w.Name = prefix+w.UID, prefix+w.Name
		if w.Project != "" {
			w.Project = prefix + w.Project
		}
		if w.PreemptedBy != "" {
			w.PreemptedBy = prefix + w.PreemptedBy
		}
		pods := slices.Clone(w.Pods)
		for j := range pods {
			pods[j].Name = prefix + pods[j].Name
			if pods[j].UID != "" {
				pods[j].UID = prefix + pods[j].UID
			}
			if pods[j].NodeName != "" {
				pods[j].NodeName = prefix + pods[j].NodeName
			}
		}
		w.Pods = pods
	}
	return s
}

// shareDepartmentPolicies gives a department the same S25 policy in every part, as it has one.
func shareDepartmentPolicies(parts []*Snapshot) {
	for _, s := range parts[1:] {
		for i := range s.Departments {
			s.Departments[i].PriorityPolicy = parts[0].Departments[i].PriorityPolicy
			s.Departments[i].PriorityOffset = parts[0].Departments[i].PriorityOffset
		}
	}
}

func mergePools(parts []*Snapshot) *Snapshot {
	whole := *parts[0]
	whole.NodePools, whole.Nodes, whole.Projects, whole.Workloads = nil, nil, nil, nil
	whole.Departments = slices.Clone(parts[0].Departments)
	for i := range whole.Departments {
		whole.Departments[i].Quotas = map[string]Quota{}
	}
	for _, s := range parts {
		whole.NodePools = append(whole.NodePools, s.NodePools...)
		whole.Nodes = append(whole.Nodes, s.Nodes...)
		whole.Projects = append(whole.Projects, s.Projects...)
		whole.Workloads = append(whole.Workloads, s.Workloads...)
		for i, d := range s.Departments {
			for pool, q := range d.Quotas {
				whole.Departments[i].Quotas[pool] = q
			}
		}
	}
	return &whole
}

// poolDecisions is what a plan decides for the workloads named with a prefix, in an order of
// their own (pools take turns, so the plan interleaves them).
func poolDecisions(p *Plan, prefix string) []string {
	var out []string
	for _, b := range p.Binds {
		if strings.HasPrefix(b.Workload, prefix) {
			out = append(out, "bind "+b.Pod.Name+" "+b.Node)
		}
	}
	for _, e := range p.Evictions {
		if strings.HasPrefix(e.Workload, prefix) {
			out = append(out, fmt.Sprintf("evict %s for %s (%s, %s)", e.Workload, e.Preemptor, e.Rule, e.Mode))
		}
	}
	for _, r := range p.Resumes {
		if strings.HasPrefix(r.Workload, prefix) {
			out = append(out, "resume "+r.Workload)
		}
	}
	for _, w := range p.Pending {
		if strings.HasPrefix(w.Workload, prefix) {
			out = append(out, fmt.Sprintf("pending %s %s #%d: %s", w.Workload, w.Reason, w.QueuePosition, w.Message))
		}
	}
	slices.Sort(out)
	return out
}
