package scheduler

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// Benchmarks of S29: what topology costs a whole cycle at ten times the reference, and how the
// placement search grows with the nodes it searches.

// fourLevels is a data centre's topology: superblocks of 4 blocks, blocks of 8 racks, racks of
// 16 nodes, then the node.
var fourLevels = Topology{Name: "dc", Levels: []string{"superblock", "block", "rack", hostname}}

// labelFourLevels labels the snapshot's nodes, in order, with fourLevels.
func labelFourLevels(s *Snapshot) {
	s.Topologies = []Topology{fourLevels}
	nodes := make([]Node, len(s.Nodes))
	for i, n := range s.Nodes {
		rack := i / 16
		labels := map[string]string{"superblock": "sb" + strconv.Itoa(rack/32), "block": "b" + strconv.Itoa(rack/8),
			"rack": "r" + strconv.Itoa(rack), hostname: n.Name}
		for k, v := range n.Labels {
			labels[k] = v
		}
		n.Labels = labels
		nodes[i] = n
	}
	s.Nodes = nodes
}

// BenchmarkCycleTenTimesTopology: the ten-times snapshot (5,000 nodes, 25,000 running and
// 50,000 pending) with and without topology, cycles alternating in one run so that both see
// the same machine. With: the nodes carry a four-level topology and one pending workload in
// ten asks for a rack, a block or a node, required or preferred. on-p50-ms and off-p50-ms are
// the median cycles; topology-ms their difference.
func BenchmarkCycleTenTimesTopology(b *testing.B) {
	off := genSnapshot(1, tenTimesConfig(25000, 50000))
	on := *off
	labelFourLevels(&on)
	on.Workloads = slices.Clone(off.Workloads)
	levels := []string{"rack", "block", hostname}
	asking := 0
	for i := range on.Workloads {
		if w := &on.Workloads[i]; w.Phase == PhasePending && i%10 == 0 {
			w.Topology = &TopologyRequest{Level: levels[i/10%3], Required: i/30%2 == 0}
			asking++
		}
	}
	var tOn, tOff []time.Duration
	for b.Loop() {
		t0 := time.Now()
		on.Plan()
		t1 := time.Now()
		off.Plan()
		tOn, tOff = append(tOn, t1.Sub(t0)), append(tOff, time.Since(t1))
	}
	slices.Sort(tOn)
	slices.Sort(tOff)
	p50 := func(ts []time.Duration) float64 { return float64(ts[len(ts)/2].Microseconds()) / 1000 }
	b.ReportMetric(p50(tOn), "on-p50-ms")
	b.ReportMetric(p50(tOff), "off-p50-ms")
	b.ReportMetric(p50(tOn)-p50(tOff), "topology-ms")
	b.ReportMetric(float64(asking), "asking")
}

// topologyJobSnapshot is nodes of 8 GPUs on fourLevels, every node of one block in five half
// busy (a 4-GPU pod each), and one pending job of pods 1-GPU pods that must go into one block.
func topologyJobSnapshot(nodes, pods int) *Snapshot {
	s := &Snapshot{Now: minute(600), Priorities: seededPriorities(), Categories: seededCategories(),
		WorkloadTypes: seededTypes(), NodePools: []NodePool{{Name: "default"}},
		Projects: []Project{{Name: "p", Quotas: map[string]Quota{"default": {Deserved: int64(nodes) * 8, Limit: NoLimit, OverQuotaWeight: 2}}}}}
	r := Resources{MilliCPU: 64000, Memory: 512 * gi, GPUs: 8, Pods: 110}
	for i := range nodes {
		s.Nodes = append(s.Nodes, Node{Name: "node-" + strconv.Itoa(100000+i), Ready: true, Capacity: r, Allocatable: r})
	}
	labelFourLevels(s)
	for i := range nodes {
		if (i/128)%5 != 0 {
			continue
		}
		name := "busy" + strconv.Itoa(i)
		s.Workloads = append(s.Workloads, Workload{UID: "uid-" + name, Namespace: "ns", Name: name, Kind: "Pod",
			Type: "Standard training", Project: "p", Phase: PhaseRunning, QueuedAt: minute(1), StartedAt: minute(1),
			Pods: []Pod{{UID: "uid-" + name + "-0", Namespace: "ns", Name: name + "-0", NodeName: s.Nodes[i].Name,
				Requests: Resources{MilliCPU: 1000, Memory: gi, GPUs: 4}}}})
	}
	w := Workload{UID: "uid-job", Namespace: "ns", Name: "job", Kind: "Pod", Type: "Standard training", Project: "p",
		Phase: PhasePending, QueuedAt: minute(2), Annotations: map[string]string{AnnotationMinMembers: strconv.Itoa(pods)},
		Topology: &TopologyRequest{Level: "block", Required: true}}
	for k := range pods {
		w.Pods = append(w.Pods, Pod{UID: "uid-job-" + strconv.Itoa(k), Namespace: "ns", Name: "job-" + strconv.Itoa(k),
			Requests: Resources{MilliCPU: 1000, Memory: gi, GPUs: 1}})
	}
	s.Workloads = append(s.Workloads, w)
	return s
}

// BenchmarkTopologyPlacementGrowth: a cycle placing a 512-pod job that must go into one block
// (128 nodes of 8 GPUs; best fit, a half-busy block, exactly 512 free) on 512 to 20,000 nodes,
// and the same job asking for nothing (placed as S21 says) to compare with.
func BenchmarkTopologyPlacementGrowth(b *testing.B) {
	for _, nodes := range []int{512, 1250, 5000, 20000} {
		for _, asking := range []bool{true, false} {
			name := strconv.Itoa(nodes) + "/required-block"
			if !asking {
				name = strconv.Itoa(nodes) + "/no-topology"
			}
			b.Run(name, func(b *testing.B) {
				s := topologyJobSnapshot(nodes, 512)
				if !asking {
					s.Workloads[len(s.Workloads)-1].Topology = nil
				}
				if p := s.Plan(); len(p.Binds) != 512 {
					b.Fatalf("%d of the job's 512 pods bound", len(p.Binds))
				}
				benchmarkPlan(b, s)
			})
		}
	}
}
