package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/store"
)

// TestEstimatedStartIsTheRunningJobsDeadline: a Job with activeDeadlineSeconds holds both
// GPUs of the pool and another waits for them; the waiting Job's estimatedStartAt in GET
// /api/v1/workloads/{id} is the first Job's deadline (its status.startTime plus
// activeDeadlineSeconds), and its basis names that Job.
func TestEstimatedStartIsTheRunningJobsDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("estimate", 2, store.PolicyUpdate{})
	e.job(jobSpec{name: "holder", namespace: ns, gpus: 2, deadline: 1800})
	e.eventually("the holder runs", time.Minute, func() bool { return e.running(ns, "holder") == 1 })
	holder, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "holder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if holder.Status.StartTime == nil {
		t.Fatal("the running Job has no status.startTime")
	}
	deadline := holder.Status.StartTime.Add(30 * time.Minute)
	waiter := string(e.job(jobSpec{name: "waiter", namespace: ns, gpus: 2}).UID)

	var at time.Time
	var basis string
	e.eventually("the waiting Job has an estimated start", 90*time.Second, func() bool {
		status, w := e.a.do(t, "GET", "/api/v1/workloads/"+waiter, "")
		if status != 200 {
			return false
		}
		s, _ := w["estimatedStartAt"].(string)
		basis, _ = w["estimateBasis"].(string)
		at, _ = time.Parse(time.RFC3339Nano, s)
		return !at.IsZero()
	})
	if d := at.Sub(deadline); d < -time.Second || d > time.Second {
		t.Errorf("estimatedStartAt %s, want the holder's deadline %s", at.Format(time.RFC3339), deadline.Format(time.RFC3339))
	}
	if !strings.Contains(basis, ns+"/holder at its activeDeadlineSeconds") {
		t.Errorf("basis %q does not name the holder and its deadline", basis)
	}
}

// TestEveryReplicaAnswersTheSameEstimate: behind the chart's two-replica Service a read goes
// to either replica. Only the leader estimates (whichever of the two leads by then), yet both
// answer the same estimatedStartAt and basis for a waiting Job; and once the Job's owner stops
// it (spec.suspend set by hand), both say it was stopped rather than that no estimate is made
// yet.
func TestEveryReplicaAnswersTheSameEstimate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	e.a.stop() // the two replicas below replace newEnv's
	replica := func(name string) *arbiter {
		cfg := e.cfg
		cfg.LeaderElect, cfg.LeaderElectionNamespace, cfg.LeaderElectionIdentity = true, "default", name
		cfg.LeaseDuration, cfg.LeaseRenewDeadline, cfg.LeaseRetryPeriod = testLease, 3*time.Second, time.Second
		return startArbiter(t, cfg)
	}
	a := replica("a")
	e.eventually("replica a leads", time.Minute, func() bool { return e.leaseHolder() == "a" })
	replicas := map[string]*arbiter{"a": a, "b": replica("b")}

	ns := e.project("estimates", 2, store.PolicyUpdate{})
	e.job(jobSpec{name: "holder", namespace: ns, gpus: 2, deadline: 1800})
	e.eventually("the holder runs", time.Minute, func() bool { return e.running(ns, "holder") == 1 })
	waiter := string(e.job(jobSpec{name: "waiter", namespace: ns, gpus: 2}).UID)
	estimate := func(a *arbiter) (at, basis, phase string) {
		status, w := a.do(t, "GET", "/api/v1/workloads/"+waiter, "")
		if status != 200 {
			return "", "", ""
		}
		at, _ = w["estimatedStartAt"].(string)
		basis, _ = w["estimateBasis"].(string)
		phase, _ = w["k8sPhase"].(string) // Arbiter's phase
		return at, basis, phase
	}
	var at, basis string
	e.eventually("a replica answers the waiting Job's estimated start", 90*time.Second, func() bool {
		for _, r := range replicas {
			if at, basis, _ = estimate(r); at != "" {
				return true
			}
		}
		return false
	})
	for name, r := range replicas {
		e.eventually("replica "+name+" answers the same estimate", 30*time.Second, func() bool {
			rAt, rBasis, _ := estimate(r)
			return rAt == at && rBasis == basis
		})
	}

	// Its owner stops it.
	if _, err := e.client.BatchV1().Jobs(ns).Patch(e.ctx, "waiter", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, r := range replicas {
		e.eventually("replica "+name+" says its owner stopped it", time.Minute, func() bool {
			at, basis, phase := estimate(r)
			return phase == "Suspended" && at == "" && basis == store.OwnerStoppedBasis
		})
	}
}
