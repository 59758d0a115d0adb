package scheduler

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Builders of S29's situations: a data centre of blocks and racks, and workloads that ask for
// a level of it as Kueue and KAI workloads do.

const hostname = "kubernetes.io/hostname"

// dc is the topology the rack builder labels nodes for: block, rack, node.
func (b *snapB) dc() *snapB {
	b.s.Topologies = append(b.s.Topologies, Topology{Name: "dc", Levels: []string{"block", "rack", hostname}})
	return b
}

// rack adds count nodes of gpus GPUs in rack r of block bl, named bl-r-n1, bl-r-n2, ...
func (b *snapB) rack(bl, r string, count int, gpus int64) *snapB {
	for i := 1; i <= count; i++ {
		name := bl + "-" + r + "-n" + strconv.Itoa(i)
		b.node(node(name).gpus(gpus).label("block", bl).label("rack", r).label(hostname, name))
	}
	return b
}

// required and preferred ask for a level for the whole workload.
func (b *wlB) required(level string) *wlB {
	b.w.Topology = &TopologyRequest{Level: level, Required: true, Source: "test"}
	return b
}

func (b *wlB) preferred(level string) *wlB {
	b.w.Topology = &TopologyRequest{Level: level, Source: "test"}
	return b
}

// podSets names the pod set of each pod in order, and setRequired asks a level of one of them.
func (b *wlB) podSets(names ...string) *wlB { b.sets = names; return b }

func (b *wlB) setRequired(set, level string) *wlB {
	b.w.PodSetTopologies = append(b.w.PodSetTopologies, PodSetTopology{PodSet: set,
		Request: TopologyRequest{Level: level, Required: true, Source: "test"}})
	return b
}

// placed is where a workload (or pod set) landed, on the levels of topology dc.
func placed(name, podSet, level, domain string, required bool) TopologyPlacement {
	return TopologyPlacement{Workload: "uid-" + name, PodSet: podSet, Topology: "dc", Required: required, Level: level, Domain: domain}
}

func TestS29_RequiredPlacement(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"a required rack gang goes whole into the rack it fits best, leaving the emptier one whole",
			snap().dc().rack("b1", "r1", 2, 4).rack("b1", "r2", 2, 4).
				node(node("b1-r2-n3").gpus(4).occupied(2).label("block", "b1").label("rack", "r2").label(hostname, "b1-r2-n3")).
				project(project("p", 16)).wl(wl("g").in("p").gang(3).pods(3).gpus(2).required("rack"), wl("x").in("p").on(0, "b1-r1-n1").gpus(2)),
			// r1 has 6 free, r2 10: r1 is the best fit; binpack alone would put the second pod
			// on r2's fullest node
			Plan{Binds: []Bind{bind("g-0", "b1-r1-n1"), bind("g-1", "b1-r1-n2"), bind("g-2", "b1-r1-n2")},
				Topology: []TopologyPlacement{placed("g", "", "rack", "b1/r1", true)}}},
		{"it waits when no rack has room, though the pool has, naming the emptiest rack",
			snap().dc().rack("b1", "r1", 2, 4).rack("b2", "r2", 2, 4).project(project("p", 16)).wl(
				wl("x").in("p").on(0, "b1-r1-n1").gpus(4), wl("y").in("p").on(0, "b2-r2-n1").gpus(3),
				wl("g").in("p").gang(3).pods(3).gpus(2).required("rack")),
			Plan{Pending: []PendingWorkload{{Workload: "uid-g", Namespace: "ns", Name: "g", Project: "p", Priority: prioLow,
				Preemptibility: Preemptible, Reason: TopologyUnsatisfiable, QueuePosition: 1, RequestedGPUs: 6,
				Message: "Needs 6 GPUs in one rack; the emptiest rack has 5 free (b2/r2). It starts when one rack of pool default has room."}}}},
		{"one rack too small ever: it says so",
			snap().dc().rack("b1", "r1", 2, 4).rack("b1", "r2", 2, 4).project(project("p", 16)).wl(
				wl("g").in("p").gang(3).pods(3).gpus(4).required("rack")),
			Plan{Pending: []PendingWorkload{{Workload: "uid-g", Namespace: "ns", Name: "g", Project: "p", Priority: prioLow,
				Preemptibility: Preemptible, Reason: TopologyUnsatisfiable, QueuePosition: 1, RequestedGPUs: 12,
				Message: "Needs 12 GPUs in one rack; no rack of pool default ever has that many (the largest has 8 GPUs). Ask for a wider level, or make it preferred."}}}},
		{"among racks that fit equally, the one in the fuller block, so the emptier block stays whole",
			snap().dc().rack("b1", "r1", 1, 4).rack("b1", "r2", 2, 4).rack("b2", "r3", 1, 4).rack("b2", "r4", 2, 4).project(project("p", 24)).wl(
				wl("x").in("p").on(0, "b2-r4-n1").gpus(4), wl("g").in("p").gang(2).pods(2).gpus(2).required("rack")),
			Plan{Binds: []Bind{bind("g-0", "b2-r3-n1"), bind("g-1", "b2-r3-n1")},
				Topology: []TopologyPlacement{placed("g", "", "rack", "b2/r3", true)}}},
		{"a label no topology lists: its domains are the nodes sharing its value",
			snap().node(node("a0").gpus(4).label("nvlink", "b"), node("a1").gpus(4).label("nvlink", "a"),
				node("a2").gpus(4).label("nvlink", "a"), node("c1").gpus(8)).project(project("p", 16)).wl(
				wl("g").in("p").gang(2).pods(2).gpus(4).required("nvlink")),
			Plan{Binds: []Bind{bind("g-0", "a1"), bind("g-1", "a2")},
				Topology: []TopologyPlacement{{Workload: "uid-g", Required: true, Level: "nvlink", Domain: "a"}}}},
		{"pods placed before fix the domain: the next one joins them",
			snap().dc().rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4).project(project("p", 16)).wl(
				wl("x").in("p").on(0, "b1-r1-n1").gpus(3),
				wl("d").kind("Deployment", "apps").typ("Deployment").in("p").pods(2).gpus(1).on(0, "b1-r2-n1").required("rack")),
			Plan{Binds: []Bind{bind("d-1", "b1-r2-n1")},
				Topology: []TopologyPlacement{placed("d", "", "rack", "b1/r2", true)}}},
		{"pods on a node cordoned since still fix the domain: the next joins them in its rack",
			snap().dc().rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4).
				node(node("b1-r2-n2").gpus(4).cordoned().label("block", "b1").label("rack", "r2").label(hostname, "b1-r2-n2")).
				project(project("p", 16)).wl(
				wl("x").in("p").on(0, "b1-r1-n1").gpus(3),
				wl("d").kind("Deployment", "apps").typ("Deployment").in("p").pods(2).gpus(1).on(0, "b1-r2-n2").required("rack")),
			Plan{Binds: []Bind{bind("d-1", "b1-r2-n1")},
				Topology: []TopologyPlacement{placed("d", "", "rack", "b1/r2", true)}}},
		{"a level no node carries: it says so",
			snap().dc().rack("b1", "r1", 2, 4).project(project("p", 16)).wl(
				wl("g").in("p").gang(2).pods(2).gpus(2).required("nvlink")),
			Plan{Pending: []PendingWorkload{{Workload: "uid-g", Namespace: "ns", Name: "g", Project: "p", Priority: prioLow,
				Preemptibility: Preemptible, Reason: TopologyUnsatisfiable, QueuePosition: 1, RequestedGPUs: 4,
				Message: "Needs 4 GPUs in one nvlink, but no node of pool default carries the label nvlink. Ask an administrator to label the nodes, or ask for another level."}}}},
		{"each pod set in a rack of its own",
			snap().dc().rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4).
				node(node("b1-r1-n2").gpus(4).occupied(2).label("block", "b1").label("rack", "r1").label(hostname, "b1-r1-n2")).
				project(project("p", 16)).wl(
				wl("js").in("p").gang(3).pods(3).gpus(2).podSets("driver", "workers", "workers").
					setRequired("driver", "rack").setRequired("workers", "rack")),
			// the driver takes the best fit (r2, 4 free); the workers then need a rack of 4
			Plan{Binds: []Bind{bind("js-0", "b1-r2-n1"), bind("js-1", "b1-r1-n2"), bind("js-2", "b1-r1-n1")},
				Topology: []TopologyPlacement{placed("js", "driver", "rack", "b1/r2", true), placed("js", "workers", "rack", "b1/r1", true)}}},
		{"the same gang asking for one rack for all its pods waits",
			snap().dc().rack("b1", "r1", 2, 4).rack("b1", "r2", 2, 4).project(project("p", 16)).wl(
				wl("js").in("p").gang(4).pods(4).gpus(4).required("rack")),
			Plan{Pending: []PendingWorkload{pend("js", "p", TopologyUnsatisfiable, 1)}}},
	})
}

func TestS29_PreferredPlacement(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"the narrowest level that fits: one rack",
			snap().dc().rack("b1", "r1", 2, 4).rack("b1", "r2", 2, 4).project(project("p", 16)).wl(
				wl("g").in("p").gang(2).pods(2).gpus(4).preferred("rack")),
			Plan{Binds: []Bind{bind("g-0", "b1-r1-n1"), bind("g-1", "b1-r1-n2")},
				Topology: []TopologyPlacement{placed("g", "", "rack", "b1/r1", false)}}},
		{"no rack fits: one block",
			// by name alone, binpack would put the pods on a-... and b1-... nodes, across blocks
			snap().dc().rack("a0", "r0", 1, 4).rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4).project(project("p", 16)).wl(
				wl("g").in("p").gang(2).pods(2).gpus(4).preferred("rack")),
			Plan{Binds: []Bind{bind("g-0", "b1-r1-n1"), bind("g-1", "b1-r2-n1")},
				Topology: []TopologyPlacement{placed("g", "", "block", "b1", false)}}},
		{"no block fits: anywhere in the pool, as without topology",
			snap().dc().rack("b1", "r1", 1, 4).rack("b2", "r2", 1, 4).project(project("p", 16)).wl(
				wl("g").in("p").gang(2).pods(2).gpus(4).preferred("rack")),
			Plan{Binds: []Bind{bind("g-0", "b1-r1-n1"), bind("g-1", "b2-r2-n1")},
				Topology: []TopologyPlacement{placed("g", "", "", "", false)}}},
	})
}

// TestS29_RequiredWithAPreferredLevelInside: KAI's required block with a preferred rack: one
// rack when one fits, else one block, never two blocks.
func TestS29_RequiredWithAPreferredLevelInside(t *testing.T) {
	blockAndRack := func(b *wlB) *wlB {
		b.w.Topology = &TopologyRequest{Level: "block", Required: true, Preferred: "rack", Source: "test"}
		return b
	}
	runRuleCases(t, []ruleCase{
		{"a rack fits: one rack",
			snap().dc().rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4).rack("b2", "r3", 2, 4).project(project("p", 16)).wl(
				blockAndRack(wl("g").in("p").gang(2).pods(2).gpus(4))),
			Plan{Binds: []Bind{bind("g-0", "b2-r3-n1"), bind("g-1", "b2-r3-n2")},
				Topology: []TopologyPlacement{placed("g", "", "rack", "b2/r3", true)}}},
		{"no rack fits: one block",
			snap().dc().rack("a1", "r0", 1, 4).rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4).project(project("p", 16)).wl(
				blockAndRack(wl("g").in("p").gang(2).pods(2).gpus(4))),
			Plan{Binds: []Bind{bind("g-0", "b1-r1-n1"), bind("g-1", "b1-r2-n1")},
				Topology: []TopologyPlacement{placed("g", "", "block", "b1", true)}}},
		{"no block fits: it waits",
			snap().dc().rack("a1", "r0", 1, 4).rack("b1", "r1", 1, 4).project(project("p", 16)).wl(
				blockAndRack(wl("g").in("p").gang(2).pods(2).gpus(4))),
			Plan{Pending: []PendingWorkload{pend("g", "p", TopologyUnsatisfiable, 1)}}},
	})
}

func TestS29_EvictionsFreeOneDomain(t *testing.T) {
	twoRacks := func() *snapB {
		return snap().dc().rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4)
	}
	runRuleCases(t, []ruleCase{
		{"preemption (S16) takes its victims in the one rack the job then uses, though the first in S16's order is elsewhere",
			twoRacks().project(project("p", 8)).wl(
				wl("v1").in("p").prio("very-low").gpus(2).on(1, "b1-r1-n1"),
				wl("v2").in("p").prio("very-low").gpus(2).on(2, "b1-r2-n1"),
				wl("v3").in("p").prio("very-low").gpus(2).on(3, "b1-r1-n1"),
				wl("v4").in("p").prio("very-low").gpus(2).on(4, "b1-r2-n1"),
				wl("g").in("p").prio("high").preemptible().gang(2).pods(2).gpus(2).required("rack")),
			// without topology v1 and v2 (the two oldest) would go; v2 frees nothing in r1
			Plan{Evictions: []Eviction{evict("v1", "p", "g", RulePreemption, 2), evict("v3", "p", "g", RulePreemption, 2)},
				Pending:  []PendingWorkload{pendOn("g", "p", 1, "b1-r1-n1")},
				Topology: []TopologyPlacement{placed("g", "", "rack", "b1/r1", true)}}},
		{"reclaim (S17) likewise: the borrower's GPUs in one rack",
			twoRacks().project(project("a", 4), project("b", 0)).wl(
				wl("b1").in("b").gpus(2).on(1, "b1-r1-n1"),
				wl("b2").in("b").gpus(2).on(2, "b1-r2-n1"),
				wl("b3").in("b").gpus(2).on(3, "b1-r1-n1"),
				wl("b4").in("b").gpus(2).on(4, "b1-r2-n1"),
				wl("g").in("a").gang(2).pods(2).gpus(2).required("rack")),
			Plan{Evictions: []Eviction{evict("b4", "b", "g", RuleReclaim, 2), evict("b2", "b", "g", RuleReclaim, 2)},
				Pending:  []PendingWorkload{pendOn("g", "a", 1, "b1-r2-n1")},
				Topology: []TopologyPlacement{placed("g", "", "rack", "b1/r2", true)}}},
		{"nothing is evicted for a job no rack could hold after evictions (S19)",
			twoRacks().project(project("p", 8)).wl(
				wl("v1").in("p").prio("very-low").gpus(4).on(1, "b1-r1-n1"),
				wl("v2").in("p").prio("very-low").gpus(4).on(2, "b1-r2-n1"),
				wl("g").in("p").prio("high").preemptible().gang(3).pods(3).gpus(2).required("rack")),
			Plan{Pending: []PendingWorkload{pend("g", "p", TopologyUnsatisfiable, 1)}}},
		{"nor does it hold back the work it could preempt where it waits (S19's claim)",
			twoRacks().project(project("p", 8)).wl(
				wl("g").in("p").prio("high").preemptible().gang(3).pods(3).gpus(2).required("rack").queued(1),
				wl("l").in("p").prio("very-low").queued(2)),
			Plan{Binds: []Bind{bind("l-0", "b1-r1-n1")},
				Pending: []PendingWorkload{pend("g", "p", TopologyUnsatisfiable, 1)}}},
	})
}

func TestS29_UnknownTopologyIsAWarningAndTheLevelStillHolds(t *testing.T) {
	b := snap().dc().rack("b1", "r1", 1, 4).rack("b2", "r2", 1, 4).project(project("p", 8))
	w := wl("g").in("p").gang(2).pods(2).gpus(2).required("rack")
	w.w.Topology.Topology, w.w.Topology.Source = "fabric", "the workload's annotation kai.scheduler/topology"
	w.w.TopologyProblems = []string{"Annotation kueue.x-k8s.io/podset-required-topology is empty; it is ignored."}
	b.wl(w, wl("x").in("p").gpus(3).on(0, "b1-r1-n1"))
	checkPlan(t, b.build().Plan(), Plan{
		Binds:    []Bind{bind("g-0", "b2-r2-n1"), bind("g-1", "b2-r2-n1")},
		Topology: []TopologyPlacement{placed("g", "", "rack", "b2/r2", true)},
		Warnings: []Warning{
			{Workload: "uid-g", Code: InvalidTopology, Message: "Annotation kueue.x-k8s.io/podset-required-topology is empty; it is ignored."},
			{Workload: "uid-g", Code: InvalidTopology, Message: `Topology "fabric" (the workload's annotation kai.scheduler/topology) is not one of the cluster's topologies; the level rack is read as if no topology were named.`},
		},
	})
}

// TestS29_TheDryRunSaysWhichDomainAndWhichVictims: a dry run of a required-rack job names the
// rack it would land in and the victims there.
func TestS29_TheDryRunSaysWhichDomainAndWhichVictims(t *testing.T) {
	s := snap().dc().rack("b1", "r1", 1, 4).rack("b1", "r2", 1, 4).project(project("p", 8)).wl(
		wl("v1").in("p").prio("very-low").gpus(2).on(1, "b1-r1-n1"),
		wl("v2").in("p").prio("very-low").gpus(2).on(2, "b1-r2-n1"),
		wl("v3").in("p").prio("very-low").gpus(2).on(3, "b1-r1-n1"),
		wl("v4").in("p").prio("very-low").gpus(2).on(4, "b1-r2-n1")).build()
	got := s.Foresee(wl("g").in("p").prio("high").preemptible().gang(2).pods(2).gpus(2).required("rack").build())
	if got.Outcome != StartAfterPreemption || len(got.Victims) != 2 || got.Victims[0].Name != "v1" || got.Victims[1].Name != "v3" {
		t.Errorf("outcome %s, victims %+v; want start-after-preemption of v1 and v3, both in rack r1", got.Outcome, got.Victims)
	}
	want := []TopologyPlacement{placed("g", "", "rack", "b1/r1", true)}
	if diff := cmp.Diff(want, got.Topology); diff != "" {
		t.Errorf("domain (-want +got):\n%s", diff)
	}
	if msg := "Waiting for preempted workloads to release their GPUs on b1-r1-n1 in rack b1/r1; it starts when they are gone."; got.Message != msg {
		t.Errorf("message %q, want %q", got.Message, msg)
	}
}
