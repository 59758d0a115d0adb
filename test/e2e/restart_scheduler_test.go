package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestS22_RestartMidRun: Arbiter stops while work runs, work is submitted and finishes while
// it is down, and a new Arbiter takes over: nothing is bound twice, running pods stay where
// they are, the waiting Job is placed, and no workload record is lost.
func TestS22_RestartMidRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	ns := e.project("restart", 4, store.PolicyUpdate{})
	long := e.job(jobSpec{name: "long", namespace: ns, pods: 2})
	short := e.job(jobSpec{name: "short", namespace: ns, runSeconds: "3"})
	e.eventually("long and short run", time.Minute, func() bool { return e.running(ns, "long") == 2 && e.running(ns, "short") == 1 })
	e.eventually("both are recorded as running", 10*time.Second, func() bool {
		l, err1 := e.store.WorkloadRecord(e.ctx, string(long.UID))
		s, err2 := e.store.WorkloadRecord(e.ctx, string(short.UID))
		return err1 == nil && err2 == nil && l.Phase == "Running" && s.Phase == "Running"
	})
	placed := map[string]string{}
	for _, p := range e.jobPods(ns, "long") {
		placed[p.Name] = p.Spec.NodeName
	}

	e.a.stop()
	waiting := e.job(jobSpec{name: "waiting", namespace: ns})
	e.eventually("short completes while Arbiter is down", time.Minute, func() bool {
		j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "short", metav1.GetOptions{})
		return err == nil && j.Status.Succeeded == 1
	})
	if n := e.running(ns, "waiting"); n != 0 {
		t.Fatalf("the waiting Job runs without a scheduler")
	}

	e.a = startArbiter(t, e.cfg)
	e.eventually("the waiting Job is placed by the new Arbiter", time.Minute, func() bool { return e.running(ns, "waiting") == 1 })
	for _, p := range e.jobPods(ns, "long") {
		if placed[p.Name] != p.Spec.NodeName {
			t.Errorf("pod %s moved from %q to %q", p.Name, placed[p.Name], p.Spec.NodeName)
		}
	}
	// Each pod was bound exactly once.
	for _, job := range []string{"long", "short", "waiting"} {
		for _, p := range e.jobPods(ns, job) {
			n := 0
			for _, ev := range e.events(ns, p.Name) {
				if strings.HasPrefix(ev, "Scheduled:") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("pod %s has %d Scheduled events, want exactly 1", p.Name, n)
			}
		}
	}
	e.eventually("every workload has its record: short completed, long running, waiting admitted", 10*time.Second, func() bool {
		l, err1 := e.store.WorkloadRecord(e.ctx, string(long.UID))
		s, err2 := e.store.WorkloadRecord(e.ctx, string(short.UID))
		w, err3 := e.store.WorkloadRecord(e.ctx, string(waiting.UID))
		return err1 == nil && err2 == nil && err3 == nil &&
			l.Phase == "Running" && l.FinishedAt == nil &&
			s.Phase == "Completed" && s.FinishedAt != nil &&
			w.Phase == "Running"
	})
	if h := e.history(string(long.UID)); len(h) < 2 || h[0] != "Queued" || h[1] != "Admitted" || slices.Contains(h[2:], "Admitted") {
		t.Errorf("long's history %v: want Queued, Admitted once", h)
	}
}
