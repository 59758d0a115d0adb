package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
