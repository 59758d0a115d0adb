package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
)

// dryRunFlow submits trainings in one test's cluster through the API, each first as a dry run,
// and compares what the scheduler then did with what the dry run said.
type dryRunFlow struct {
	e    *env
	uids map[string]string // every workload submitted so far, by name
}

// prediction is the part of a dry run's answer the test compares.
type prediction struct {
	outcome, reason string
	nodes           []string
	victims         []string // the victims' workload ids
	rules           []string
	raw             map[string]any
}

// training is the body of a one-pod training of gpus GPUs.
func training(name, project string, gpus int, priority, preemptibility string) string {
	return fmt.Sprintf(`{"name":%q,"projectId":%q,"spec":{"image":"example.invalid/run:1","command":"sleep infinity",
		"compute":{"gpuDevicesRequest":%d,"cpuCoreRequest":0.1},"priorityClass":%q,"preemptibility":%q}}`, name, project, gpus, priority, preemptibility)
}

func (f *dryRunFlow) dryRun(body string) prediction {
	f.e.t.Helper()
	status, m := f.e.a.do(f.e.t, "POST", "/api/v1/workloads/trainings?dryRun=true", body)
	if status != 200 {
		f.e.t.Fatalf("dry run = %d %v", status, m)
	}
	p := prediction{raw: m}
	p.outcome, _ = m["outcome"].(string)
	p.reason, _ = m["reason"].(string)
	for _, n := range m["nodes"].([]any) {
		p.nodes = append(p.nodes, n.(string))
	}
	for _, v := range m["victims"].([]any) {
		v := v.(map[string]any)
		p.victims = append(p.victims, v["workloadId"].(string))
		p.rules = append(p.rules, v["rule"].(string))
	}
	f.e.t.Logf("dry run: %v", m)
	return p
}

func (f *dryRunFlow) submit(name, body string) string {
	f.e.t.Helper()
	status, m := f.e.a.do(f.e.t, "POST", "/api/v1/workloads/trainings", body)
	uid, _ := m["workloadId"].(string)
	if status != 202 || uid == "" {
		f.e.t.Fatalf("POST trainings %s = %d %v", name, status, m)
	}
	f.uids[name] = uid
	return uid
}

// evictedFor lists the workloads whose history has an eviction made for preemptor, and the
// kinds of those events.
func (f *dryRunFlow) evictedFor(preemptor string) (uids, kinds []string) {
	f.e.t.Helper()
	for _, uid := range f.uids {
		events, err := f.e.store.WorkloadEvents(f.e.ctx, uid)
		if err != nil {
			f.e.t.Fatal(err)
		}
		for _, ev := range events {
			if ev.PreemptorUID == preemptor && (ev.Kind == "Preempted" || ev.Kind == "Reclaimed") {
				uids, kinds = append(uids, uid), append(kinds, ev.Kind)
			}
		}
	}
	slices.Sort(uids)
	return uids, kinds
}

// boundNode is the node of a Job's running pod.
func (f *dryRunFlow) boundNode(ns, job string) string {
	for _, p := range f.e.jobPods(ns, job) {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			return p.Spec.NodeName
		}
	}
	return ""
}

// TestDryRun_PredictsWhatTheSchedulerDoes: in one cluster of 4 GPUs, four dry runs through
// the API, each followed at once by the same submission for real in the unchanged cluster:
// free capacity (start-now, on the node named), preemption inside the project
// (start-after-preemption: the workload named, and only it, is preempted for it under S16),
// reclaim of borrowed GPUs (start-after-reclaim: the borrower named is reclaimed under S17),
// and waiting (wait: the pods wait with the reason given).
func TestDryRun_PredictsWhatTheSchedulerDoes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	f := &dryRunFlow{e: e, uids: map[string]string{}}
	teamNS := e.project("team", 2, store.PolicyUpdate{})
	borrowerNS := e.project("borrower", 1, store.PolicyUpdate{})
	ownerNS := e.project("owner", 2, store.PolicyUpdate{})
	id := func(name string) string {
		p, err := e.store.ProjectNamed(e.ctx, name+"-"+e.id)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID.String()
	}
	team, borrower, owner := id("team"), id("borrower"), id("owner")
	node := func(ns, job string) func() bool {
		return func() bool { return e.running(ns, job) == 1 }
	}

	// Free capacity: a low-priority preemptible training of all 4 GPUs (borrowing 2).
	body := training("victim", team, 4, "low", "preemptible")
	p := f.dryRun(body)
	if p.outcome != "start-now" || len(p.nodes) != 1 || len(p.victims) != 0 || p.raw["estimatedStartAt"] == nil {
		t.Fatalf("free capacity: %v", p.raw)
	}
	victim := f.submit("victim", body)
	e.eventually("the victim runs", time.Minute, node(teamNS, "victim"))
	if n := f.boundNode(teamNS, "victim"); n != p.nodes[0] {
		t.Errorf("the victim runs on %s, the dry run said %s", n, p.nodes[0])
	}

	// Preemption inside the project: a high-priority training of 2 GPUs.
	body = training("urgent", team, 2, "high", "non-preemptible")
	p = f.dryRun(body)
	if p.outcome != "start-after-preemption" || !slices.Equal(p.victims, []string{victim}) || !slices.Equal(p.rules, []string{"S16"}) {
		t.Fatalf("preemption: %v", p.raw)
	}
	urgent := f.submit("urgent", body)
	e.eventually("urgent runs", time.Minute, node(teamNS, "urgent"))
	e.eventually("the preemption is in the victim's history", 30*time.Second, func() bool {
		uids, _ := f.evictedFor(urgent)
		return len(uids) > 0
	})
	if uids, kinds := f.evictedFor(urgent); !slices.Equal(uids, p.victims) || !slices.Equal(kinds, []string{"Preempted"}) {
		t.Errorf("evicted for urgent: %v %v; the dry run named %v", uids, kinds, p.victims)
	}
	if n := f.boundNode(teamNS, "urgent"); !slices.Contains(p.nodes, n) {
		t.Errorf("urgent runs on %s, the dry run said %v", n, p.nodes)
	}
	// The victim, whose pod came back and waits for 4 GPUs, leaves.
	if status, m := e.a.do(t, "DELETE", "/api/v1/workloads/trainings/"+victim, ""); status != 202 {
		t.Fatalf("DELETE victim = %d %v", status, m)
	}
	e.eventually("the victim's pods are gone", time.Minute, func() bool { return len(e.jobPods(teamNS, "victim")) == 0 })
	delete(f.uids, "victim")

	// Reclaim: a borrower takes the 2 free GPUs beyond its deserved 1; the owner, within its
	// deserved 2, would reclaim them.
	f.submit("borrowed", training("borrowed", borrower, 2, "low", "preemptible"))
	e.eventually("the borrower runs", time.Minute, node(borrowerNS, "borrowed"))
	body = training("mine", owner, 2, "low", "preemptible")
	p = f.dryRun(body)
	if p.outcome != "start-after-reclaim" || !slices.Equal(p.victims, []string{f.uids["borrowed"]}) || !slices.Equal(p.rules, []string{"S17"}) {
		t.Fatalf("reclaim: %v", p.raw)
	}
	mine := f.submit("mine", body)
	e.eventually("mine runs", time.Minute, node(ownerNS, "mine"))
	e.eventually("the reclaim is in the borrower's history", 30*time.Second, func() bool {
		uids, _ := f.evictedFor(mine)
		return len(uids) > 0
	})
	if uids, kinds := f.evictedFor(mine); !slices.Equal(uids, p.victims) || !slices.Equal(kinds, []string{"Reclaimed"}) {
		t.Errorf("evicted for mine: %v %v; the dry run named %v", uids, kinds, p.victims)
	}

	// Waiting: the node is full (urgent and mine); nothing lower may be evicted for another
	// low-priority training of the team, which is at its deserved quota.
	body = training("later", team, 1, "low", "preemptible")
	p = f.dryRun(body)
	if p.outcome != "wait" || p.reason == "" || len(p.victims) != 0 || p.raw["estimateBasis"] == "" {
		t.Fatalf("waiting: %v", p.raw)
	}
	later := f.submit("later", body)
	e.eventually("later's pod waits with the reason the dry run gave", time.Minute, func() bool {
		r, _ := e.pendingReason(teamNS, "later")
		return r == p.reason
	})
	if r := e.record(later); r.Phase != "Pending" || e.running(teamNS, "later") != 0 {
		t.Errorf("later is %s with %d pods running", r.Phase, e.running(teamNS, "later"))
	}
	if uids, _ := f.evictedFor(later); len(uids) != 0 {
		t.Errorf("evicted for later: %v", uids)
	}
	if msg, _ := p.raw["message"].(string); strings.TrimSpace(msg) == "" {
		t.Errorf("the wait has no sentence: %v", p.raw)
	}
}
