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

// S29's properties on random snapshots: the generator's nodes are put in racks and blocks, and
// some of its pending workloads (or pod sets of them) ask for a level.

// withTopology is the snapshot with its nodes in racks of one to three nodes and blocks of one
// to three racks (topology "dc"), and, when asking, some pending workloads asking for a level:
// a rack, a block (some preferring a rack inside it), a node or the generator's bare "zone"
// label, required or preferred, for the whole workload or for each half of its pods.
func withTopology(s *Snapshot, seed uint64, asking bool) *Snapshot {
	r := rand.New(rand.NewPCG(seed, 29))
	c := *s
	c.Topologies = []Topology{{Name: "dc", Levels: []string{"block", "rack", hostname}}}
	c.Nodes = make([]Node, len(s.Nodes))
	block, rack, inRack, racksInBlock := 0, 0, 0, 0
	rackSize, blockSize := 1+r.IntN(3), 1+r.IntN(3)
	for i, n := range s.Nodes {
		n.Labels = map[string]string{"block": "b" + strconv.Itoa(block), "rack": "r" + strconv.Itoa(rack), hostname: n.Name}
		for k, v := range s.Nodes[i].Labels {
			n.Labels[k] = v
		}
		c.Nodes[i] = n
		if inRack++; inRack == rackSize {
			inRack, rack, rackSize = 0, rack+1, 1+r.IntN(3)
			if racksInBlock++; racksInBlock == blockSize {
				racksInBlock, block, blockSize = 0, block+1, 1+r.IntN(3)
			}
		}
	}
	if !asking {
		return &c
	}
	c.Workloads = make([]Workload, len(s.Workloads))
	copy(c.Workloads, s.Workloads)
	levels := []string{"rack", "rack", "block", hostname, "zone"}
	for i := range c.Workloads {
		w := &c.Workloads[i]
		if w.Phase == PhaseRunning || r.IntN(2) == 0 {
			continue
		}
		req := TopologyRequest{Level: levels[r.IntN(len(levels))], Required: r.IntN(3) > 0, Source: "test"}
		if req.Required && req.Level == "block" && r.IntN(2) == 0 {
			req.Preferred = "rack" // tried first inside the block
		}
		if len(w.Pods) < 2 || r.IntN(4) > 0 {
			w.Topology = &req
			continue
		}
		w.Pods = append([]Pod(nil), w.Pods...)
		for k := range w.Pods {
			w.Pods[k].PodSet = []string{"a", "b"}[min(k*2/len(w.Pods), 1)]
		}
		other := req
		other.Level = levels[r.IntN(len(levels))]
		w.PodSetTopologies = []PodSetTopology{{PodSet: "a", Request: req}, {PodSet: "b", Request: other}}
	}
	return &c
}

// domainPath is a node's domain of the level: its values down to it, "" when it lacks one.
func domainPath(n *Node, level string) string {
	chain := []string{level} // a bare label
	switch level {
	case "block", "rack", hostname:
		dc := []string{"block", "rack", hostname}
		chain = dc[:slices.Index(dc, level)+1]
	}
	var parts []string
	for _, l := range chain {
		v, ok := n.Labels[l]
		if !ok {
			return ""
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "/")
}

// checkTopology: each required request's placed pods are in one domain of its level, and every
// workload evicted for is placed (reserved), a required one with each victim freeing GPUs in
// its domain, or else freeing quota: of its own department (or project, without one), whose
// limit its GPUs count against.
func checkTopology(s *Snapshot, p *Plan) (required int, err error) {
	nodes := map[string]*Node{}
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	placedOn := map[string][]string{} // pod UID → node, for binds
	for _, b := range p.Binds {
		placedOn[b.Pod.UID] = append(placedOn[b.Pod.UID], b.Node)
	}
	reserved := map[string][]string{}
	for _, r := range p.Reservations {
		for _, rp := range r.Pods {
			reserved[r.Workload] = append(reserved[r.Workload], rp.Node)
		}
	}
	byUID := map[string]*Workload{}
	for i := range s.Workloads {
		byUID[s.Workloads[i].UID] = &s.Workloads[i]
	}
	oneDomain := func(w *Workload, level string, on []string) (string, error) {
		d := ""
		for i, n := range on {
			x := domainPath(nodes[n], level)
			if x == "" || (i > 0 && x != d) {
				return "", fmt.Errorf("%s asks for one %s and is placed on %v", w.Name, level, on)
			}
			d = x
		}
		return d, nil
	}
	domainOf := map[string]string{} // required whole-workload requests: where they went
	for i := range s.Workloads {
		w := &s.Workloads[i]
		if w.Topology != nil && w.Topology.Required {
			var on []string
			for _, pod := range w.Pods {
				on = append(on, placedOn[pod.UID]...)
			}
			on = append(on, reserved[w.UID]...)
			d, err := oneDomain(w, w.Topology.Level, on)
			if err != nil {
				return required, err
			}
			if len(on) > 0 {
				required++
				domainOf[w.UID] = d
			}
		}
		for _, set := range w.PodSetTopologies {
			if !set.Request.Required {
				continue
			}
			var on []string
			for _, pod := range w.Pods {
				if pod.PodSet == set.PodSet {
					on = append(on, placedOn[pod.UID]...)
				}
			}
			if _, err := oneDomain(w, set.Request.Level, on); err != nil {
				return required, fmt.Errorf("pod set %s: %w", set.PodSet, err)
			}
		}
	}
	for _, e := range p.Evictions {
		pre := byUID[e.Preemptor]
		if len(reserved[e.Preemptor]) == 0 {
			return required, fmt.Errorf("%s evicted for %s, which is placed nowhere", e.Name, pre.Name)
		}
		d, ok := domainOf[e.Preemptor]
		if !ok {
			continue
		}
		v := byUID[e.Workload]
		frees := false
		for _, pod := range v.Pods {
			if pod.NodeName != "" && domainPath(nodes[pod.NodeName], pre.Topology.Level) == d {
				frees = true
			}
		}
		// one that frees nothing there frees quota: its project's or department's limit (S13)
		if !frees && deptOf(s, v.Project) != deptOf(s, pre.Project) {
			return required, fmt.Errorf("%s evicted for %s, which goes to %s %s, where it frees nothing", e.Name, pre.Name, pre.Topology.Level, d)
		}
	}
	return required, nil
}

func TestPropertyS29_RequiredPlacementsInOneDomainAndNoEvictionWithoutPlacement(t *testing.T) {
	var required, evictions int
	for seed := uint64(1); seed <= propertySnapshots/2; seed++ {
		s := withTopology(genSnapshot(seed, smallConfig(seed)), seed, true)
		p := s.Plan()
		if err := checkInvariants(s, &p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		n, err := checkTopology(s, &p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		required += n
		for _, e := range p.Evictions {
			if w := findWorkload(s, e.Preemptor); w != nil && (w.Topology != nil || len(w.PodSetTopologies) > 0) {
				evictions++
			}
		}
		if seed%50 == 0 {
			if diff := cmp.Diff(p, shuffled(s, seed).Plan()); diff != "" {
				t.Fatalf("seed %d: the plan depends on the order of the snapshot's lists (-first +shuffled):\n%s", seed, diff)
			}
		}
	}
	if required < 500 || evictions < 50 {
		t.Errorf("too few decisions to mean much: %d required placements, %d evictions for workloads asking", required, evictions)
	}
	t.Logf("%d snapshots: %d required placements, %d evictions for workloads asking for a topology", propertySnapshots/2, required, evictions)
}

// TestPropertyS29_TopologyOffIsTodaysPlacement: topologies and labelled nodes change nothing
// for workloads that do not ask.
func TestPropertyS29_TopologyOffIsTodaysPlacement(t *testing.T) {
	for seed := uint64(1); seed <= propertySnapshots/2; seed++ {
		s := genSnapshot(seed, smallConfig(seed))
		if diff := cmp.Diff(s.Plan(), withTopology(s, seed, false).Plan()); diff != "" {
			t.Fatalf("seed %d: topology without requests changes the plan (-without +with):\n%s", seed, diff)
		}
	}
}

func findWorkload(s *Snapshot, uid string) *Workload {
	for i := range s.Workloads {
		if s.Workloads[i].UID == uid {
			return &s.Workloads[i]
		}
	}
	return nil
}

// deptOf is a project's department, or the project itself when it has none.
func deptOf(s *Snapshot, project string) string {
	for i := range s.Projects {
		if p := &s.Projects[i]; p.Name == project && p.Department != "" {
			return "dept:" + p.Department
		}
	}
	return project
}
