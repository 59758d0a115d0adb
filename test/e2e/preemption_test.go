package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestS16_HigherPriorityJobPreemptsInsideProject: a high-priority Job evicts a preemptible
// low-priority Job of its own project; the victim's pods, recreated by the Job controller,
// wait at the victim's original queue time and run again once the GPUs are free.
func TestS16_HigherPriorityJobPreemptsInsideProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("team", 2, store.PolicyUpdate{})
	victim := e.job(jobSpec{name: "victim", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("the victim runs on both GPUs", time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	firstPods := map[string]bool{}
	for _, p := range e.jobPods(ns, "victim") {
		firstPods[p.Name] = true
	}

	urgent := e.job(jobSpec{name: "urgent", namespace: ns, runSeconds: "4", labels: labels("high", "")})
	e.eventually("the urgent Job runs", time.Minute, func() bool { return e.running(ns, "urgent") == 1 })

	evs := e.events(ns, "victim")
	if !hasEvent(evs, "Preempted: Preempted by "+ns+"/urgent under S16") {
		t.Errorf("the victim's events do not name the preemptor and the rule: %s", fmtEvents(evs))
	}
	// The Job controller recreated the victim's pods; they wait while urgent holds a GPU.
	e.eventually("the victim's new pods exist", time.Minute, func() bool {
		n := 0
		for _, p := range e.jobPods(ns, "victim") {
			if !firstPods[p.Name] && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n == 2
	})
	rec := e.record(string(victim.UID))
	if !rec.QueuedAt.Equal(victim.CreationTimestamp.Time) {
		t.Errorf("the victim is queued at %s, want its original queue time %s", rec.QueuedAt, victim.CreationTimestamp.Time)
	}
	if rec.Phase != "Preempted" && rec.Phase != "Running" {
		t.Errorf("the victim's phase is %s while it waits to come back, want Preempted", rec.Phase)
	}

	// urgent completes; the victim runs again, whole.
	e.eventually("the victim runs again", time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	for _, p := range e.jobPods(ns, "victim") {
		if firstPods[p.Name] && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			t.Errorf("pod %s was not evicted", p.Name)
		}
	}
	e.eventually("the victim's history records the preemption", 10*time.Second, func() bool {
		h := e.history(string(victim.UID))
		return slices.Contains(h, "Preempted") && e.record(string(victim.UID)).Preemptions == 1
	})
	if h := e.history(string(urgent.UID)); !slices.Contains(h, "Admitted") {
		t.Errorf("urgent's history %v has no Admitted", h)
	}
}

// TestS14_S15_S17_BorrowingAndReclaim: non-preemptible work beyond deserved quota waits;
// preemptible work borrows idle GPUs; the owner's in-quota work reclaims them.
func TestS14_S15_S17_BorrowingAndReclaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	borrower := e.project("borrower", 1, store.PolicyUpdate{})
	owner := e.project("owner", 3, store.PolicyUpdate{})

	e.job(jobSpec{name: "steady", namespace: borrower, pods: 2, labels: labels("", "non-preemptible")})
	borrowed := e.job(jobSpec{name: "borrowed", namespace: borrower, pods: 4, labels: labels("low", "preemptible")})
	e.eventually("the preemptible Job borrows all 4 idle GPUs", time.Minute, func() bool { return e.running(borrower, "borrowed") == 4 })
	e.eventually("the non-preemptible Job waits beyond deserved quota", 20*time.Second, func() bool {
		r, _ := e.pendingReason(borrower, "steady")
		return r == "NonPreemptibleOverQuota"
	})
	if _, msg := e.pendingReason(borrower, "steady"); !strings.Contains(msg, "non-preemptible") {
		t.Errorf("the message does not say what to do: %q", msg)
	}

	mine := e.job(jobSpec{name: "mine", namespace: owner, pods: 2})
	e.eventually("the owner's in-quota Job runs", time.Minute, func() bool { return e.running(owner, "mine") == 2 })
	evs := e.events(borrower, "borrowed")
	if !hasEvent(evs, "Preempted: Preempted by "+owner+"/mine under S17") {
		t.Errorf("the borrowed Job's events do not name the reclaim: %s", fmtEvents(evs))
	}
	e.eventually("the reclaim is in the history", 10*time.Second, func() bool { return slices.Contains(e.history(string(borrowed.UID)), "Reclaimed") })
	if m := scrape(t, e.a.URL); value(m, "arbiter_evictions_total", map[string]string{"rule": "reclaim", "mode": "evict"}) != 1 || value(m, "arbiter_evictions_total", nil) != 1 {
		t.Errorf("evictions counted: %v reclaims by evict of %v in all, want 1 of 1",
			value(m, "arbiter_evictions_total", map[string]string{"rule": "reclaim", "mode": "evict"}), value(m, "arbiter_evictions_total", nil))
	}
	// The history names the preemptor and what the borrower used beyond its 1 deserved GPU: 3.
	history, err := e.store.WorkloadEvents(e.ctx, string(borrowed.UID))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range history {
		if ev.Kind == "Reclaimed" && (ev.PreemptorUID != string(mine.UID) || ev.Borrowed == nil || *ev.Borrowed != 3) {
			t.Errorf("the Reclaimed event names preemptor %q and borrowed %v, want %s and 3", ev.PreemptorUID, ev.Borrowed, mine.UID)
		}
	}
	if n := e.running(borrower, "borrowed"); n != 0 {
		t.Errorf("%d borrowed pods still run; the gang of 4 cannot fit on 2 GPUs", n)
	}
}

// TestS21_GangWaitsForAllItsGPUs: a 4-pod gang does not start on 3 free GPUs, and starts
// whole when a fourth frees.
func TestS21_GangWaitsForAllItsGPUs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	ns := e.project("gang", 8, store.PolicyUpdate{}) // quota is no obstacle here: capacity is
	e.job(jobSpec{name: "filler", namespace: ns, runSeconds: "5"})
	e.eventually("the filler runs", time.Minute, func() bool { return e.running(ns, "filler") == 1 })
	e.job(jobSpec{name: "gang", namespace: ns, pods: 4})
	e.eventually("the gang waits for capacity", 20*time.Second, func() bool {
		r, msg := e.pendingReason(ns, "gang")
		t.Logf("gang waits: %s %s", r, msg)
		return r == "InsufficientCapacity"
	})
	if n := e.running(ns, "gang"); n != 0 {
		t.Fatalf("%d of the gang's 4 pods run on 3 free GPUs", n)
	}
	e.eventually("the gang starts whole", time.Minute, func() bool { return e.running(ns, "gang") == 4 })
}

// TestS20_SuspendModeSuspendsAndResumes: in a project whose preemption mode is suspend, the
// victim Job is suspended (not its pods deleted one by one), keeps its place, and is resumed
// by Arbiter when it is admitted again.
func TestS20_SuspendModeSuspendsAndResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("suspender", 2, store.PolicyUpdate{PreemptionMode: opt("suspend")})
	victim := e.job(jobSpec{name: "victim", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("the victim runs", time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	e.job(jobSpec{name: "urgent", namespace: ns, runSeconds: "4", labels: labels("high", "")})

	suspended := func() bool {
		j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "victim", metav1.GetOptions{})
		return err == nil && j.Spec.Suspend != nil && *j.Spec.Suspend
	}
	e.eventually("the victim is suspended", time.Minute, suspended)
	e.eventually("the suspension is counted once, as a preemption by suspend", 10*time.Second, func() bool {
		m := scrape(t, e.a.URL)
		t.Logf("evictions: %v", m["arbiter_evictions_total"].GetMetric())
		return value(m, "arbiter_evictions_total", map[string]string{"rule": "preempt", "mode": "suspend"}) == 1 && value(m, "arbiter_evictions_total", nil) == 1
	})
	e.eventually("the urgent Job runs", time.Minute, func() bool { return e.running(ns, "urgent") == 1 })
	if !hasEvent(e.events(ns, "victim"), "Suspended: ") {
		t.Errorf("no Suspended event: %s", fmtEvents(e.events(ns, "victim")))
	}
	e.eventually("the victim is resumed", time.Minute, func() bool { return !suspended() })
	e.eventually("the victim runs again", time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	if !hasEvent(e.events(ns, "victim"), "Resumed: ") {
		t.Errorf("no Resumed event: %s", fmtEvents(e.events(ns, "victim")))
	}
	e.eventually("the history shows the suspension and the resume", 10*time.Second, func() bool {
		h := e.history(string(victim.UID))
		return slices.Contains(h, "Preempted") && slices.Contains(h, "Resumed")
	})
	// One preemption, recorded once: the suspension that carries it out is not a second one.
	if h := e.history(string(victim.UID)); countOf(h, "Preempted") != 1 || countOf(h, "Resumed") != 1 {
		t.Errorf("the victim's history %v, want one Preempted and one Resumed", h)
	}
	if r := e.record(string(victim.UID)); r.Preemptions != 1 {
		t.Errorf("the victim's record counts %d preemptions, want 1", r.Preemptions)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// TestS30_ReclaimAfterPreemption: a 2-GPU high-priority Job of a project that deserves 2 GPUs
// and runs a 1-GPU low-priority Job, on a node whose third GPU another project borrows twice
// over, evicts its project's low-priority Job (S16) and one borrowed Job (S17) and runs:
// neither rule alone makes room.
func TestS30_ReclaimAfterPreemption(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 3)
	owner := e.project("owner", 2, store.PolicyUpdate{})
	borrower := e.project("borrower", 0, store.PolicyUpdate{})
	e.job(jobSpec{name: "low", namespace: owner, labels: labels("low", "preemptible")})
	e.job(jobSpec{name: "b1", namespace: borrower, labels: labels("low", "preemptible")})
	e.job(jobSpec{name: "b2", namespace: borrower, labels: labels("low", "preemptible")})
	e.eventually("the three one-GPU Jobs fill the node", time.Minute, func() bool {
		return e.running(owner, "low") == 1 && e.running(borrower, "b1") == 1 && e.running(borrower, "b2") == 1
	})

	e.job(jobSpec{name: "urgent", namespace: owner, pods: 2, labels: labels("high", "")})
	e.eventually("the urgent Job runs", time.Minute, func() bool { return e.running(owner, "urgent") == 2 })
	if evs := e.events(owner, "low"); !hasEvent(evs, "Preempted: Preempted by "+owner+"/urgent under S16") {
		t.Errorf("the owner's low-priority Job's events do not name the preemption: %s", fmtEvents(evs))
	}
	reclaimed := 0
	for _, name := range []string{"b1", "b2"} {
		if hasEvent(e.events(borrower, name), "Preempted: Preempted by "+owner+"/urgent under S17") {
			reclaimed++
		}
	}
	if reclaimed != 1 {
		t.Errorf("%d of the borrowed Jobs were reclaimed for the urgent Job, want 1: %s / %s", reclaimed,
			fmtEvents(e.events(borrower, "b1")), fmtEvents(e.events(borrower, "b2")))
	}
}
