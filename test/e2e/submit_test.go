package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// apiKey makes an API key with role at project scope directly in the store and returns its
// token and the submitter a workload it submits records.
func (e *env) apiKey(role string, project uuid.UUID) (token, submitter string) {
	e.t.Helper()
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	_, err := e.store.CreateAPIKey(e.ctx, store.NewAPIKey{ID: id, Name: role + "-" + id.String()[:8], Role: role, ScopeType: "project",
		ScopeID: &project, ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash}, admin)
	if err != nil {
		e.t.Fatal(err)
	}
	return token, "api-key:" + id.String()
}

// call calls the API with token and decodes the JSON answer.
func (e *env) call(token, method, path, body string) (int, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, method, e.a.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		e.t.Fatalf("%s %s answered %d, not JSON: %.300s", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, m
}

// podsOf lists the pods with a label.
func (e *env) podsOf(namespace, selector string) []corev1.Pod {
	e.t.Helper()
	list, err := e.client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// allBound says whether n pods with the label exist, all bound and none terminating.
func (e *env) allBound(namespace, selector string, n int) bool {
	pods := e.podsOf(namespace, selector)
	bound := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			bound++
		}
	}
	return len(pods) == n && bound == n
}

// TestSubmit_NativeKinds: each of the four native kinds submitted through the API by a
// researcher is created with its type, project and submitter, scheduled (its pods bound by
// Arbiter) and listed with its submitter; a priority the project's policy forbids is refused
// with the rule; another researcher may not change it, its submitter may; a training is stopped
// and run again; a workspace is deleted.
func TestSubmit_NativeKinds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 8)
	ns := e.project("submit", 16, store.PolicyUpdate{})
	e.project("locked", 4, store.PolicyUpdate{AllowPriorityChange: opt(false)})
	proj, err := e.store.ProjectNamed(e.ctx, "submit-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	locked, err := e.store.ProjectNamed(e.ctx, "locked-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	alice, aliceSubmitter := e.apiKey("researcher", proj.ID)
	bob, _ := e.apiKey("researcher", proj.ID)
	lockedResearcher, _ := e.apiKey("researcher", locked.ID)

	type submitted struct {
		kind, name, object, typ, slug, selector string
		pods                                    int
		uid                                     string
	}
	subs := []*submitted{
		{kind: "trainings", name: "train", object: "Job", typ: "Standard training", slug: "standard-training", pods: 1,
			selector: batchv1.JobNameLabel + "=train"},
		{kind: "workspaces", name: "ws", object: "Job", typ: "Workspace", slug: "workspace", pods: 1, selector: batchv1.JobNameLabel + "=ws"},
		// The shared cluster runs training-operator, so a distributed training is a PyTorchJob:
		// a master and its 3 workers (TestSubmitDistributed_* cover both kinds it may be).
		{kind: "distributed", name: "dist", object: "PyTorchJob", typ: "Distributed training", slug: "distributed-training", pods: 4,
			selector: "training.kubeflow.org/job-name=dist"},
		{kind: "inferences", name: "serve", object: "Deployment", typ: "Custom inference", slug: "custom-inference", pods: 2,
			selector: "arbiter.dev/workload=serve"},
	}
	extra := map[string]string{
		"trainings":   `,"priorityClass":"very-high","preemptibility":"non-preemptible","nodePools":["` + e.pool.Name + `"]`,
		"distributed": `,"numWorkers":3`,
		"inferences":  `,"servingPort":{"container":8000},"autoscaling":{"minReplicas":2}`,
	}

	if !t.Run("alice submits a training, a workspace, a distributed training and an inference", func(t *testing.T) {
		e := e.in(t)
		for _, s := range subs {
			status, m := e.call(alice, "POST", "/api/v1/workloads/"+s.kind, fmt.Sprintf(
				`{"name":%q,"projectId":%q,"spec":{"image":"example.invalid/run:1","command":"sleep infinity","compute":{"gpuDevicesRequest":1,"cpuCoreRequest":0.1}%s}}`,
				s.name, proj.ID, extra[s.kind]))
			if status != 202 {
				t.Fatalf("POST %s = %d %v", s.kind, status, m)
			}
			s.uid, _ = m["workloadId"].(string)
			if s.uid == "" || m["submitter"] != aliceSubmitter || m["type"] != s.typ || m["kind"] != s.object {
				t.Fatalf("POST %s answered %v", s.kind, m)
			}
		}
	}) {
		return
	}

	t.Run("the objects carry the scheduler's labels, the submitter and Arbiter's scheduler name", func(t *testing.T) {
		e := e.in(t)
		// The objects: labels the scheduler reads, the submitter, Arbiter's scheduler name.
		for _, s := range subs {
			var meta metav1.ObjectMeta
			var spec corev1.PodSpec
			if s.object == "PyTorchJob" {
				pods := e.podsOf(ns, s.selector)
				if len(pods) == 0 {
					t.Fatalf("%s: no pods", s.name)
				}
				j, err := e.dynamicClient().Resource(pyTorchJobGVR).Namespace(ns).Get(e.ctx, s.name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				meta = metav1.ObjectMeta{UID: j.GetUID(), Labels: j.GetLabels(), Annotations: j.GetAnnotations()}
				spec = pods[0].Spec
			} else if s.object == "Job" {
				j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, s.name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				meta, spec = j.ObjectMeta, j.Spec.Template.Spec
			} else {
				d, err := e.client.AppsV1().Deployments(ns).Get(e.ctx, s.name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				meta, spec = d.ObjectMeta, d.Spec.Template.Spec
			}
			if string(meta.UID) != s.uid || meta.Labels["arbiter.dev/workload-type"] != s.slug || meta.Labels["arbiter.dev/project"] != proj.Name ||
				meta.Annotations["arbiter.dev/submitted-by"] != aliceSubmitter || spec.SchedulerName != e.sched {
				t.Errorf("%s: meta %+v, scheduler %q", s.name, meta, spec.SchedulerName)
			}
		}
		if j, _ := e.client.BatchV1().Jobs(ns).Get(e.ctx, "train", metav1.GetOptions{}); j.Labels["priorityClassName"] != "very-high" ||
			j.Labels["kai.scheduler/preemptibility"] != "non-preemptible" {
			t.Errorf("train's labels = %v", j.Labels)
		} else if a := j.Spec.Template.Spec.Affinity; a == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != e.pool.Name {
			t.Errorf("train's node affinity = %+v, want the node pool %s", a, e.pool.Name)
		}
		for _, svc := range []string{"serve"} { // training-operator makes the PyTorchJob's own
			s, err := e.client.CoreV1().Services(ns).Get(e.ctx, svc, metav1.GetOptions{})
			if err != nil || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Name != svc {
				t.Errorf("service %s: %v %+v", svc, err, s)
			}
		}
	})

	if !t.Run("Arbiter schedules them and records type, project and submitter", func(t *testing.T) {
		e := e.in(t)
		// Scheduled by Arbiter, and recorded with type, project and submitter.
		for _, s := range subs {
			e.eventually(s.name+"'s pods are bound", 2*time.Minute, func() bool { return e.allBound(ns, s.selector, s.pods) })
			poll.UntilNil(t, s.name+" is recorded Running by the scheduler", 30*time.Second, func() error {
				r, err := e.store.WorkloadRecord(e.ctx, s.uid)
				if err != nil {
					return err
				}
				if r.Phase != "Running" || r.TypeName != s.typ || r.Submitter != aliceSubmitter || r.ProjectName != proj.Name ||
					r.Gang != s.pods || r.AllocatedGPUs != s.pods {
					return fmt.Errorf("phase %s, type %q, submitter %q, project %q, gang %d, allocated %d GPUs (updated %s)",
						r.Phase, r.TypeName, r.Submitter, r.ProjectName, r.Gang, r.AllocatedGPUs, r.UpdatedAt.Format(time.RFC3339Nano))
				}
				return nil
			})
		}
		if r := e.record(subs[0].uid); r.PriorityName != "very-high" || r.Preemptibility != "non-preemptible" {
			t.Errorf("train's record: priority %q, %q", r.PriorityName, r.Preemptibility)
		}
		if r := e.record(subs[1].uid); r.PriorityName != "high" || r.Preemptibility != "non-preemptible" {
			t.Errorf("the workspace has its type's defaults (high, non-preemptible): %q, %q", r.PriorityName, r.Preemptibility)
		}
		status, m := e.call(alice, "GET", "/api/v1/workloads?filterBy=submitter=="+aliceSubmitter+"&sortBy=name", "")
		var names []string
		for _, w := range m["workloads"].([]any) {
			names = append(names, w.(map[string]any)["name"].(string))
		}
		if status != 200 || strings.Join(names, ",") != "dist,serve,train,ws" {
			t.Errorf("GET /api/v1/workloads = %d %v", status, names)
		}
	}) {
		return
	}

	t.Run("a priority the project's policy forbids is refused at submission", func(t *testing.T) {
		e := e.in(t)
		// The project's policy at submission.
		status, m := e.call(lockedResearcher, "POST", "/api/v1/workloads/trainings", fmt.Sprintf(
			`{"name":"urgent","projectId":%q,"spec":{"image":"example.invalid/run:1","priorityClass":"very-high"}}`, locked.ID))
		if msg, _ := m["message"].(string); status != 400 || !strings.Contains(msg, "does not allow changing priority (its policy's allowPriorityChange is false)") {
			t.Errorf("a forbidden priority = %d %v", status, m)
		}
	})

	if !t.Run("only alice may change alice's training", func(t *testing.T) {
		e := e.in(t)
		// Ownership: bob may not change alice's training; alice may.
		status, m := e.call(bob, "PATCH", "/api/v1/workloads/"+subs[0].uid, `{"priority":"low"}`)
		if msg, _ := m["message"].(string); status != 403 || !strings.Contains(msg, "researchers may change only their own workloads, and train was submitted by "+aliceSubmitter) {
			t.Errorf("bob changes alice's = %d %v", status, m)
		}
		if status, m = e.call(alice, "PATCH", "/api/v1/workloads/"+subs[0].uid, `{"priority":"medium"}`); status != 200 {
			t.Errorf("alice changes her own = %d %v", status, m)
		}
		e.eventually("the training is labelled medium", 10*time.Second, func() bool {
			j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "train", metav1.GetOptions{})
			return err == nil && j.Labels["priorityClassName"] == "medium"
		})
	}) {
		return
	}

	t.Run("the training is stopped and run again, the workspace deleted", func(t *testing.T) {
		e := e.in(t)
		// STOP and RUN the training; delete the workspace.
		if status, m := e.call(alice, "POST", "/api/v1/workloads/trainings/"+subs[0].uid+"/suspend", ""); status != 202 {
			t.Fatalf("suspend = %d %v", status, m)
		}
		e.eventually("the stopped training has no pods and is recorded Suspended", time.Minute, func() bool {
			r, err := e.store.WorkloadRecord(e.ctx, subs[0].uid)
			return len(e.podsOf(ns, subs[0].selector)) == 0 && err == nil && r.Phase == "Suspended"
		})
		if status, m := e.call(alice, "POST", "/api/v1/workloads/trainings/"+subs[0].uid+"/resume", ""); status != 202 {
			t.Fatalf("resume = %d %v", status, m)
		}
		e.eventually("the training runs again", 2*time.Minute, func() bool { return e.allBound(ns, subs[0].selector, 1) })
		e.eventually("and is recorded Running", 30*time.Second, func() bool {
			r, err := e.store.WorkloadRecord(e.ctx, subs[0].uid)
			return err == nil && r.Phase == "Running"
		})
		if status, m := e.call(alice, "DELETE", "/api/v1/workloads/workspaces/"+subs[1].uid, ""); status != 202 {
			t.Fatalf("delete = %d %v", status, m)
		}
		e.eventually("the workspace is gone and its record finished", time.Minute, func() bool {
			_, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "ws", metav1.GetOptions{})
			r, rerr := e.store.WorkloadRecord(e.ctx, subs[1].uid)
			return err != nil && rerr == nil && r.FinishedAt != nil
		})
	})
}
