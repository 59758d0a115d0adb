package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// borrowerOnTwoDeserved starts, in a project that deserves 2 GPUs, a preemptible Job of four
// one-GPU pods with a minimum of two, and waits until it runs (so two of its GPUs are
// borrowed). It returns the project's namespace and the Job's UID.
func (e *env) borrowerOnTwoDeserved(project string) (string, string) {
	e.t.Helper()
	ns := e.project(project, 2, store.PolicyUpdate{})
	job := e.job(jobSpec{name: "borrower", namespace: ns, pods: 4, labels: labels("low", "preemptible"),
		annotations: map[string]string{"arbiter.dev/min-members": "2"}})
	uid := string(job.UID)
	e.eventually("the borrower runs on 4 GPUs, 2 of them borrowed", 2*time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		return e.running(ns, "borrower") == 4 && err == nil && r.Phase == "Running" && r.AllocatedGPUs == 4
	})
	return ns, uid
}

// TestS14_ChangeOntoBorrowedGPUsIsRefused: a running preemptible Job on 4 GPUs of a project
// that deserves 2 cannot be made non-preemptible (409 with the sentence, and its dry run says
// the same); semi-preemptible, whose minimum of 2 fits, is accepted and labelled; from there,
// non-preemptible is still refused. The Job keeps the labels of what was accepted only.
func TestS14_ChangeOntoBorrowedGPUsIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 8)
	ns, uid := e.borrowerOnTwoDeserved("quota")
	project := "quota-" + e.id
	label := func() string {
		job, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "borrower", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return job.Labels["kai.scheduler/preemptibility"]
	}
	want := "borrower runs on 4 GPUs in node pool " + e.pool.Name + "; making it non-preemptible would give project " + project +
		" 4 GPUs of non-preemptible work there, beyond its deserved quota of 2, and work beyond the deserved quota must stay reclaimable (S14). " +
		"Keep it preemptible, make it semi-preemptible, as its minimum of 2 GPUs fits, or ask an admin to raise project " + project +
		"'s deserved quota in " + e.pool.Name + " to at least 4."
	for _, path := range []string{"/api/v1/workloads/" + uid + "?dryRun=true", "/api/v1/workloads/" + uid} {
		status, m := e.a.do(t, "PATCH", path, `{"preemptibility":"non-preemptible"}`)
		if status != 409 || m["message"] != want {
			t.Errorf("PATCH %s non-preemptible = %d %v\nwant 409 %q", path, status, m["message"], want)
		}
	}
	if got := label(); got != "preemptible" {
		t.Fatalf("after refusals the Job's preemptibility label is %q, want preemptible", got)
	}

	if status, m := e.a.do(t, "PATCH", "/api/v1/workloads/"+uid, `{"preemptibility":"semi-preemptible"}`); status != 200 {
		t.Fatalf("PATCH semi-preemptible = %d %v", status, m)
	}
	if got := label(); got != "semi-preemptible" {
		t.Errorf("the Job's preemptibility label is %q, want semi-preemptible", got)
	}
	e.eventually("the scheduler runs it semi-preemptible", time.Minute, func() bool {
		r := e.record(uid)
		return r.Preemptibility == "semi-preemptible" && r.AllocatedGPUs == 4
	})
	status, m := e.a.do(t, "PATCH", "/api/v1/workloads/"+uid, `{"preemptibility":"non-preemptible"}`)
	if msg, _ := m["message"].(string); status != 409 || !strings.Contains(msg, "would give project "+project+" 4 GPUs of non-preemptible work there, beyond its deserved quota of 2") ||
		!strings.Contains(msg, "Keep it semi-preemptible") {
		t.Errorf("PATCH non-preemptible from semi-preemptible = %d %q", status, msg)
	}
	if got := label(); got != "semi-preemptible" {
		t.Errorf("after the last refusal the Job's preemptibility label is %q, want semi-preemptible", got)
	}
}
