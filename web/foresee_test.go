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
		`"estimatedStartAt":"2026-11-22T12:00:00Z","estimateBasis":"It starts once the workloads evicted for it have terminated (their grace period)."}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	wait := NewPredictionJSON(scheduler.Prediction{Outcome: scheduler.Wait, Reason: scheduler.NoProject, Message: "no project",
		Start: scheduler.Estimate{Basis: "Unknown: it would not start even once every running workload has ended; see its reason."}})
	b, _ = json.Marshal(wait)
	want = `{"outcome":"wait","nodePool":null,"nodes":[],"queuePosition":null,"reason":"NoProject","message":"no project",` +
		`"priority":"","preemptibility":"","victims":[],"estimatedStartAt":null,` +
		`"estimateBasis":"Unknown: it would not start even once every running workload has ended; see its reason."}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
