package web

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
)

// The dry run's JSON names its victims with their rule, and leaves out (null) what a waiting
// workload does not have.
func TestPredictionJSON(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	preempt := NewPredictionJSON(scheduler.Prediction{Outcome: scheduler.StartAfterPreemption, NodePool: "default",
		Nodes: []string{"n1"}, QueuePosition: 1, Reason: scheduler.WaitingForEvictions, Message: "Waiting for preempted workloads",
		Priority: scheduler.Priority{Name: "high", Value: 125}, Preemptibility: scheduler.Preemptible,
		Victims: []scheduler.Victim{{WorkloadID: "u1", Namespace: "ns", Name: "old", Project: "team",
			Priority: scheduler.Priority{Name: "low", Value: 40}, Rule: scheduler.RulePreemption, GPUs: 4}},
		Start: scheduler.Estimate{At: now, Basis: "It starts once the workloads evicted for it have terminated (their grace period)."}})
	b, _ := json.Marshal(preempt)
	want := `{"outcome":"start-after-preemption","nodePool":"default","nodes":["n1"],"queuePosition":1,"reason":"WaitingForEvictions",` +
		`"message":"Waiting for preempted workloads","priority":"high","preemptibility":"preemptible",` +
		`"victims":[{"workloadId":"u1","name":"old","namespace":"ns","project":"team","priority":"low","rule":"S16","gpus":4}],` +
		`"estimatedStartAt":"2026-11-22T12:00:00Z","estimateBasis":"It starts once the workloads evicted for it have terminated (their grace period).","topology":[]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	wait := NewPredictionJSON(scheduler.Prediction{Outcome: scheduler.Wait, Reason: scheduler.NoProject, Message: "no project",
		Start: scheduler.Estimate{Basis: "Unknown: it would not start even once every running workload has ended; see its reason."}})
	b, _ = json.Marshal(wait)
	want = `{"outcome":"wait","nodePool":null,"nodes":[],"queuePosition":null,"reason":"NoProject","message":"no project",` +
		`"priority":"","preemptibility":"","victims":[],"estimatedStartAt":null,` +
		`"estimateBasis":"Unknown: it would not start even once every running workload has ended; see its reason.","topology":[]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// A dry run of a workload that asks for a topology names the domain it would land in, per pod
// set, beside its nodes and victims (S29); one that asks for none has an empty list.
func TestPredictionJSONNamesTheDomain(t *testing.T) {
	reclaim := NewPredictionJSON(scheduler.Prediction{Outcome: scheduler.StartAfterReclaim, NodePool: "a100",
		Nodes: []string{"n1", "n2"}, Reason: scheduler.WaitingForEvictions,
		Topology: []scheduler.TopologyPlacement{
			{Workload: "w", PodSet: "", Topology: "racks", Required: true, Level: "topology.arbiter.dev/rack", Domain: "block-0/rack-1"},
			{Workload: "w", PodSet: "workers", Required: false}, // a preferred pod set spread wider than its levels
		}})
	b, _ := json.Marshal(reclaim.Topology)
	want := `[{"podSet":"","topology":"racks","level":"topology.arbiter.dev/rack","domain":"block-0/rack-1","required":true},` +
		`{"podSet":"workers","topology":"","level":"","domain":"","required":false}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(NewPredictionJSON(scheduler.Prediction{Outcome: scheduler.StartNow, NodePool: "a100", Nodes: []string{"n1"}}).Topology)
	if string(b) != `[]` {
		t.Errorf("a workload asking for no topology: %s, want []", b)
	}
}

// The Submit page's dry-run panel says in its headline the domain the workload would land in,
// or each pod set's, after the nodes.
func TestDryRunPanelNamesTheDomain(t *testing.T) {
	rack := TopologyJSON{Topology: "racks", Level: "topology.arbiter.dev/rack", Domain: "block-0/rack-1", Required: true}
	for _, tc := range []struct {
		p    PredictionJSON
		want string
	}{
		{PredictionJSON{Outcome: "start-now", Nodes: []string{"n1", "n2"}, Topology: []TopologyJSON{rack}},
			"Would start now on n1, n2 in rack block-0/rack-1"},
		{PredictionJSON{Outcome: "start-after-reclaim", Nodes: []string{"n1"}, Topology: []TopologyJSON{rack}},
			"Would reclaim from these, then start on n1 in rack block-0/rack-1:"},
		{PredictionJSON{Outcome: "start-after-preemption", Nodes: []string{"n1", "n3"}, Topology: []TopologyJSON{
			{PodSet: "master", Level: "topology.arbiter.dev/rack", Domain: "block-0/rack-1"},
			{PodSet: "worker", Level: "topology.arbiter.dev/block", Domain: "block-0"}}},
			"Would preempt these, then start on n1, n3 (master in rack block-0/rack-1, worker in block block-0):"},
		{PredictionJSON{Outcome: "start-now", Nodes: []string{"n1", "n9"}, Topology: []TopologyJSON{{}}}, // spread wider than asked
			"Would start now on n1, n9"},
	} {
		if got := dryRunPanel(tc.p).Headline; got != tc.want {
			t.Errorf("headline %q, want %q", got, tc.want)
		}
	}
}
