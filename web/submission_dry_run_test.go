package web_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/web"
)

// fakeForesight stands in for the scheduler's dry run (kube.Workloads.DryRun, checked against
// the local control plane in test/e2e): it keeps the objects it was asked about and answers a
// preemption of one victim.
type fakeForesight struct {
	mu   sync.Mutex
	objs []runtime.Object
}

func (f *fakeForesight) DryRun(_ context.Context, obj runtime.Object) (scheduler.Prediction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objs = append(f.objs, obj)
	return scheduler.Prediction{Outcome: scheduler.StartAfterPreemption, NodePool: "default", Nodes: []string{"n1"},
		Victims: []scheduler.Victim{{WorkloadID: "u1", Name: "old", Namespace: "team-alpha", Project: "alpha",
			Priority: scheduler.Priority{Name: "low", Value: 40}, Rule: scheduler.RulePreemption, GPUs: 2}},
		Start: scheduler.Estimate{At: time.Now(), Basis: "soon"}}, nil
}

func (f *fakeForesight) asked() []runtime.Object {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runtime.Object(nil), f.objs...)
}

// TestSubmitDryRun: ?dryRun=true checks the request as a submission does, hands the scheduler
// the top owner the submission would create (namespace, type and priority labels, submitter)
// and answers 200 with its prediction, creating and recording nothing; a refusal is
// the submission's, and a dry run without a cluster is a 503 that says so.
func TestSubmitDryRun(t *testing.T) {
	t.Parallel()
	fs := &fakeForesight{}
	f := newSubmitAPIWith(t, func(d *web.Deps) { d.Foresee = fs })
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)

	r := f.submit(t, researcher, "trainings?dryRun=true", fmt.Sprintf(`{"name":"train-a","projectId":%q,"spec":{"image":"python:3.12",
		"compute":{"gpuDevicesRequest":2},"priorityClass":"high"}}`, f.alpha))
	if r.status != 200 {
		t.Fatalf("dry run = %d %s", r.status, r.body)
	}
	p := decode[web.PredictionJSON](t, r.body)
	if p.Outcome != "start-after-preemption" || len(p.Victims) != 1 || p.Victims[0].WorkloadID != "u1" || p.Victims[0].Rule != "S16" {
		t.Errorf("prediction = %+v", p)
	}
	asked := fs.asked()
	if len(asked) != 1 {
		t.Fatalf("the scheduler was asked %d times", len(asked))
	}
	job, ok := asked[0].(*batchv1.Job)
	if !ok || job.Namespace != "team-alpha" || job.Name != "train-a" || job.Labels["arbiter.dev/workload-type"] != "standard-training" ||
		job.Labels["priorityClassName"] != "high" || job.Annotations["arbiter.dev/submitted-by"] != keySubmitter(t, researcher) {
		t.Errorf("asked about %#v", asked[0])
	}

	// An inference is foreseen as its Deployment; a prefix name gets a placeholder suffix.
	r = f.submit(t, researcher, "inferences?dryRun=true", fmt.Sprintf(`{"name":"serve","useGivenNameAsPrefix":true,"projectId":%q,
		"spec":{"image":"vllm","compute":{"gpuDevicesRequest":1},"servingPort":{"container":8000},"autoscaling":{"minReplicas":3}}}`, f.alpha))
	if r.status != 200 {
		t.Fatalf("inference dry run = %d %s", r.status, r.body)
	}
	if d, ok := fs.asked()[1].(*appsv1.Deployment); !ok || *d.Spec.Replicas != 3 || !strings.HasPrefix(d.Name, "serve-") {
		t.Errorf("asked about %#v", fs.asked()[1])
	}

	// Nothing was created or recorded. The answers name a victim, so the first is audited as
	// a dry run; the second names the same victim in the same project and is not audited again.
	if n := f.cluster.count(); n != 0 {
		t.Errorf("%d workloads were created", n)
	}
	if names := workloads(t, f.srv, ""); names != "" {
		t.Errorf("recorded: %q", names)
	}
	if rows := auditRows(t, f.st, "workload"); len(rows) != 1 || rows[0].Action != "dry-run" || rows[0].Result != "success" || rows[0].EntityName != "train-a" {
		t.Errorf("audit = %+v", rows)
	}

	// Refusals are the submission's, checked before the scheduler is asked; dryRun must be a bool.
	r = f.submit(t, researcher, "trainings?dryRun=true", fmt.Sprintf(`{"name":"b","projectId":%q,"spec":{"image":"python","priorityClass":"very-high"}}`, f.beta))
	if r.status != 400 || !strings.Contains(r.refusal(t).Message, "was not found") {
		t.Errorf("another project's dry run = %d %s", r.status, r.body)
	}
	r = f.submit(t, researcher, "trainings?dryRun=maybe", fmt.Sprintf(`{"name":"b","projectId":%q,"spec":{"image":"python"}}`, f.alpha))
	if r.status != 400 || !strings.Contains(r.refusal(t).Message, "dryRun") {
		t.Errorf("dryRun=maybe = %d %s", r.status, r.body)
	}
	if n := len(fs.asked()); n != 2 {
		t.Errorf("the scheduler was asked %d times, want 2", n)
	}
	if rows := auditRows(t, f.st, "workload"); len(rows) == 0 || rows[0].Action != "dry-run" || rows[0].Result == "success" {
		t.Errorf("a refused dry run's audit = %+v", rows)
	}
}
