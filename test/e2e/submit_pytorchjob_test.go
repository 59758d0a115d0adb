package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/native"
)

// These tests submit a distributed training where the cluster runs Kubeflow training-operator
// (it is made as a PyTorchJob) and where it does not (an indexed Job), each on a control plane
// of its own: whether the PyTorchJob CRD is served is the point of each.

// distributedBody is a distributed training of numWorkers workers of gpus GPUs each.
func distributedBody(name, projectID string, numWorkers, gpus int) string {
	return fmt.Sprintf(`{"name":%q,"projectId":%q,"spec":{"image":"example.invalid/ddp:1","command":"torchrun train.py",`+
		`"numWorkers":%d,"compute":{"gpuDevicesRequest":%d,"cpuCoreRequest":0.1}}}`, name, projectID, numWorkers, gpus)
}

// TestSubmitDistributed_PyTorchJobWhereTrainingOperatorRuns: on a cluster running Kubeflow
// training-operator, a distributed training of 2 workers of 4 GPUs submitted through the API
// is foreseen as the master and both workers (three nodes of 4 GPUs), made as a PyTorchJob
// (the answer says so and why), whose real controller makes its 3 pods, which Arbiter binds as
// one gang of 3; stopping it sets runPolicy.suspend (its pods go), running it again brings them
// back, and deleting it deletes the PyTorchJob. The Submit page's panel says it will be made as
// a PyTorchJob and why, and the workload it lands on is one.
func TestSubmitDistributed_PyTorchJobWhereTrainingOperatorRuns(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, devcluster.OperatorTrainingOperator)
	e := newEnvOn(t, c, 3, 4)
	ns := e.project("ddp", 12, store.PolicyUpdate{})
	proj, err := e.store.ProjectNamed(e.ctx, "ddp-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := e.apiKey("researcher", proj.ID)
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	pyTorchJob := func(name string) (*unstructured.Unstructured, error) {
		return dyn.Resource(pyTorchJobGVR).Namespace(ns).Get(e.ctx, name, metav1.GetOptions{})
	}
	selector := "training.kubeflow.org/job-name=ddp"

	// The scheduler learns of the project at its next reload of the configuration.
	poll.UntilNil(t, "the dry run foresees the master and 2 workers starting now on three nodes", time.Minute, func() error {
		status, m := e.call(alice, "POST", "/api/v1/workloads/distributed?dryRun=true", distributedBody("ddp", proj.ID.String(), 2, 4))
		if nodes, _ := m["nodes"].([]any); status != 200 || m["outcome"] != "start-now" || len(nodes) != 3 {
			return fmt.Errorf("the dry run answered %d %v", status, m)
		}
		return nil
	})

	status, m := e.call(alice, "POST", "/api/v1/workloads/distributed", distributedBody("ddp", proj.ID.String(), 2, 4))
	if status != 202 || m["kind"] != "PyTorchJob" || m["kindReason"] != "PyTorchJob: the cluster runs Kubeflow training-operator" {
		t.Fatalf("the submission answered %d %v; want kind PyTorchJob with the reason", status, m)
	}
	uid, _ := m["workloadId"].(string)
	job, err := pyTorchJob("ddp")
	if err != nil {
		t.Fatal(err)
	}
	workers, _, _ := unstructured.NestedInt64(job.Object, "spec", "pytorchReplicaSpecs", "Worker", "replicas")
	if string(job.GetUID()) != uid || workers != 2 || job.GetLabels()["arbiter.dev/workload-type"] != "distributed-training" {
		t.Fatalf("the PyTorchJob is %v with %d workers; want uid %s and 2 workers", job.GetUID(), workers, uid)
	}

	e.eventually("training-operator made the master and 2 workers and Arbiter bound them", 3*time.Minute, func() bool {
		return e.allBound(ns, selector, 3)
	})
	nodes := map[string]bool{}
	for _, p := range e.podsOf(ns, selector) {
		nodes[p.Spec.NodeName] = true
		if p.Spec.SchedulerName != e.sched {
			t.Errorf("pod %s names scheduler %q, want %q", p.Name, p.Spec.SchedulerName, e.sched)
		}
	}
	if len(nodes) != 3 {
		t.Errorf("the pods are on %v; want three nodes, as the dry run foresaw", nodes)
	}
	poll.UntilNil(t, "the scheduler records the PyTorchJob running as one gang of 3", time.Minute, func() error {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		if err != nil {
			return err
		}
		if r.Phase != "Running" || r.Kind != "PyTorchJob" || r.Gang != 3 || r.AllocatedGPUs != 12 {
			return fmt.Errorf("phase %s, kind %s, gang %d, %d GPUs", r.Phase, r.Kind, r.Gang, r.AllocatedGPUs)
		}
		return nil
	})

	if status, m := e.call(alice, "POST", "/api/v1/workloads/distributed/"+uid+"/suspend", ""); status != 202 {
		t.Fatalf("suspend answered %d %v", status, m)
	}
	if job, err = pyTorchJob("ddp"); err != nil {
		t.Fatal(err)
	}
	if suspended, _, _ := unstructured.NestedBool(job.Object, "spec", "runPolicy", "suspend"); !suspended {
		t.Fatalf("after suspend the PyTorchJob's runPolicy is %v", job.Object["spec"].(map[string]any)["runPolicy"])
	}
	e.eventually("the suspended PyTorchJob's pods are gone", 2*time.Minute, func() bool { return len(e.podsOf(ns, selector)) == 0 })
	if status, m := e.call(alice, "POST", "/api/v1/workloads/distributed/"+uid+"/resume", ""); status != 202 {
		t.Fatalf("resume answered %d %v", status, m)
	}
	e.eventually("the resumed PyTorchJob's pods are made and bound again", 3*time.Minute, func() bool { return e.allBound(ns, selector, 3) })

	if status, m := e.call(alice, "DELETE", "/api/v1/workloads/distributed/"+uid, ""); status != 202 {
		t.Fatalf("delete answered %d %v", status, m)
	}
	e.eventually("the PyTorchJob is deleted", time.Minute, func() bool {
		_, err := pyTorchJob("ddp")
		return apierrors.IsNotFound(err)
	})

	landed := submitDistributedInBrowser(t, e, ns, "PyTorchJob: the cluster runs Kubeflow training-operator")
	if !strings.Contains(landed, "PyTorchJob") {
		t.Errorf("the workload's page reads %q; want it to name the PyTorchJob", landed)
	}
	if _, err := pyTorchJob("ddp-page"); err != nil {
		t.Errorf("the Submit page made no PyTorchJob: %v", err)
	}
}

// TestSubmitDistributed_IndexedJobWhereNoPyTorchJobIsServed: on a cluster without
// training-operator, a distributed training is made as an indexed Job of numWorkers pods and
// the answer and the Submit page's panel say why.
func TestSubmitDistributed_IndexedJobWhereNoPyTorchJobIsServed(t *testing.T) {
	t.Parallel()
	c := ownCluster(t)
	e := newEnvOn(t, c, 2, 4)
	ns := e.project("ddp", 8, store.PolicyUpdate{})
	proj, err := e.store.ProjectNamed(e.ctx, "ddp-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := e.apiKey("researcher", proj.ID)

	status, m := e.call(alice, "POST", "/api/v1/workloads/distributed", distributedBody("ddp", proj.ID.String(), 2, 4))
	if status != 202 || m["kind"] != "Job" || m["kindReason"] != native.AsIndexedJob.Reason {
		t.Fatalf("the submission answered %d %v; want kind Job with the reason", status, m)
	}
	job, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "ddp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion || *job.Spec.Parallelism != 2 {
		t.Fatalf("the Job is %+v; want an indexed Job of 2 pods", job.Spec)
	}
	e.eventually("the indexed Job's 2 pods are bound", 2*time.Minute, func() bool { return e.allBound(ns, batchv1.JobNameLabel+"=ddp", 2) })

	landed := submitDistributedInBrowser(t, e, ns, "indexed Job: no PyTorchJob CRD is served")
	if strings.Contains(landed, "PyTorchJob") {
		t.Errorf("the workload's page reads %q; it is a Job", landed)
	}
	if _, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "ddp-page", metav1.GetOptions{}); err != nil {
		t.Errorf("the Submit page made no Job: %v", err)
	}
}

// submitDistributedInBrowser fills the Submit page with a distributed training named
// ddp-page, checks that its panel says what it will be made as (reason), submits it and
// returns the text of the workload's page it lands on.
func submitDistributedInBrowser(t *testing.T, e *env, ns, reason string) string {
	t.Helper()
	e.localUser(t, "rita", "rita-password-1", "researcher")
	ctx := newBrowser(t)
	loginAs(t, ctx, e.a, "rita", "rita-password-1", "researcher")
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/submit"),
		chromedp.WaitVisible(`#submit-form input[name="name"]`),
		htmxIdle(),
		changeSelect(`#submit-form select[name="projectId"]`, mustProjectID(t, e, ns)),
		htmxIdle(),
		changeSelect(`#submit-form select[name="type"]`, "distributed"),
		chromedp.WaitVisible(`#submit-form input[name="spec.numWorkers"]`),
		htmxIdle(),
		chromedp.SendKeys(`#submit-form input[name="name"]`, "ddp-page"),
		chromedp.SendKeys(`#submit-form input[name="spec.image"]`, "example.invalid/ddp:1"),
		changeSelect(`#submit-form input[name="spec.compute.gpuDevicesRequest"]`, "1"),
		chromedp.WaitVisible(`#dry-run-made-as`),
		htmxIdle(),
	)
	if err != nil {
		t.Fatal(err)
	}
	made, err := chromedp.Run(ctx, chromedp.Text(`#dry-run-made-as`))
	if err != nil || !strings.Contains(made, reason) {
		t.Errorf("the dry-run panel says it is made as %q (%v); want %q", made, err, reason)
	}
	screenshot(t, ctx, "submit-distributed-made-as")
	err = chromedp.Do(ctx,
		chromedp.Click(`#submit-form button[type="submit"]`),
		chromedp.WaitVisible(`#story-summary`),
	)
	if err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(ctx, chromedp.Text(`main`))
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// mustProjectID is the id of the project whose namespace is ns, as the Submit page's choice
// holds it.
func mustProjectID(t *testing.T, e *env, ns string) string {
	t.Helper()
	p, err := e.store.ProjectNamed(e.ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	return p.ID.String()
}
