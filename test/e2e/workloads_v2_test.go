package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// v2Job is a Job manifest asking one GPU, with extra members in its pod spec and container.
func v2Job(podSpecExtra, containerExtra string) string {
	return `{"apiVersion":"batch/v1","kind":"Job","spec":{"template":{"spec":{"restartPolicy":"Never"` + podSpecExtra + `,
		"containers":[{"name":"main","image":"example.invalid/run:1","command":["sleep","infinity"],
		"resources":{"limits":{"nvidia.com/gpu":1},"requests":{"cpu":"100m"}}` + containerExtra + `}]}}}}`
}

// TestWorkloadsV2_Manifests: Run:ai's Workloads V2 on a real API server. A researcher submits
// a Job and a Deployment by their manifests; Arbiter creates them in the project's namespace,
// schedules their pods, reads them back and deletes them. Each manifest that would reach beyond
// its project (privileged, host network, a hostPath, an added capability, another namespace,
// another ServiceAccount, a kind Arbiter does not schedule, too large) is a 400 naming the
// field, and nothing is created; a dry run creates nothing and answers the prediction; a
// viewer may not submit, nor a researcher of another project.
func TestWorkloadsV2_Manifests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 8)
	ns := e.project("vtwo", 16, store.PolicyUpdate{})
	otherNS := e.project("vother", 4, store.PolicyUpdate{})
	proj, err := e.store.ProjectNamed(e.ctx, "vtwo-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.store.ProjectNamed(e.ctx, "vother-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	alice, aliceSubmitter := e.apiKey("researcher", proj.ID)
	viewer, _ := e.apiKey("viewer", proj.ID)
	carol, _ := e.apiKey("researcher", other.ID)
	body := func(name, manifest string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"projectId":%q},"manifest":%s}`, name, proj.ID, manifest)
	}
	// objects counts what exists in the project's namespace that a refused manifest could have
	// made.
	objects := func(e *env) int {
		jobs, err1 := e.client.BatchV1().Jobs(ns).List(e.ctx, metav1.ListOptions{})
		deps, err2 := e.client.AppsV1().Deployments(ns).List(e.ctx, metav1.ListOptions{})
		pods, err3 := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{})
		secrets, err4 := e.client.CoreV1().Secrets(ns).List(e.ctx, metav1.ListOptions{})
		for _, err := range []error{err1, err2, err3, err4} {
			if err != nil {
				e.t.Fatal(err)
			}
		}
		return len(jobs.Items) + len(deps.Items) + len(pods.Items) + len(secrets.Items)
	}

	var jobID, deployID string
	if !t.Run("a Job and a Deployment are submitted by their manifests and scheduled", func(t *testing.T) {
		e := e.in(t)
		status, m := e.call(alice, "POST", "/api/v2/workloads", body("etl", v2Job("", "")))
		if status != 202 {
			t.Fatalf("POST a Job manifest = %d %v", status, m)
		}
		jobID, _ = m["metadata"].(map[string]any)["id"].(string)
		deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
			"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
			"spec":{"containers":[{"name":"app","image":"example.invalid/nginx:1","resources":{"limits":{"nvidia.com/gpu":1}}}]}}}}`
		status, m = e.call(alice, "POST", "/api/v2/workloads", fmt.Sprintf(`{"metadata":{"projectId":%q,"preemptibility":"preemptible"},"manifest":%s}`, proj.ID, deployment))
		if status != 202 {
			t.Fatalf("POST a Deployment manifest = %d %v", status, m)
		}
		md := m["metadata"].(map[string]any)
		deployID, _ = md["id"].(string)
		if md["name"] != "web" || md["createdBy"] != aliceSubmitter || md["gvk"].(map[string]any)["kind"] != "Deployment" || m["desiredPhase"] != "Running" {
			t.Errorf("the Deployment's answer = %v", m)
		}

		j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "etl", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(j.UID) != jobID || j.Labels["arbiter.dev/project"] != proj.Name || j.Annotations["arbiter.dev/submitted-by"] != aliceSubmitter ||
			j.Spec.Template.Spec.SchedulerName != e.sched || j.Spec.Template.Labels["arbiter.dev/project"] != proj.Name {
			t.Errorf("the Job as created: %+v", j.ObjectMeta)
		}
		e.eventually("the Job's pod is bound", 2*time.Minute, func() bool { return e.allBound(ns, batchv1.JobNameLabel+"=etl", 1) })
		e.eventually("the Deployment's two pods are bound", 2*time.Minute, func() bool { return e.allBound(ns, "app=web", 2) })
		poll.UntilNil(t, "both are recorded Running with alice as submitter", 30*time.Second, func() error {
			for _, id := range []string{jobID, deployID} {
				r, err := e.store.WorkloadRecord(e.ctx, id)
				if err != nil {
					return err
				}
				if r.Phase != "Running" || r.Submitter != aliceSubmitter || r.ProjectName != proj.Name {
					return fmt.Errorf("%s: phase %s, submitter %q, project %q", r.Name, r.Phase, r.Submitter, r.ProjectName)
				}
			}
			return nil
		})
		if r := e.record(deployID); r.Preemptibility != "preemptible" || r.TypeName != "Deployment" {
			t.Errorf("the Deployment's record: %q, type %q", r.Preemptibility, r.TypeName)
		}
		status, m = e.call(alice, "GET", "/api/v2/workloads/"+jobID, "")
		w, _ := m["workload"].(map[string]any)
		manifest, _ := w["workloadManifest"].(map[string]any)
		if status != 200 || m["syncInfo"].(map[string]any)["status"] != "Synced" || manifest["kind"] != "Job" ||
			manifest["metadata"].(map[string]any)["uid"] != jobID {
			t.Errorf("GET /api/v2/workloads/%s = %d %v", jobID, status, m)
		}
	}) {
		return
	}

	t.Run("each manifest reaching beyond its project is a 400 naming the field, and nothing is created", func(t *testing.T) {
		e := e.in(t)
		before := objects(e)
		cases := []struct{ name, manifest, field string }{
			{"privileged", v2Job("", `,"securityContext":{"privileged":true}`), "manifest.spec.template.spec"},
			{"hostNetwork", v2Job(`,"hostNetwork":true`, ""), "manifest.spec.template.spec"},
			{"hostPath", v2Job(`,"volumes":[{"name":"root","hostPath":{"path":"/"}}]`, `,"volumeMounts":[{"name":"root","mountPath":"/host"}]`), "manifest.spec.template.spec"},
			{"added capability", v2Job("", `,"securityContext":{"capabilities":{"add":["NET_ADMIN"]}}`), "manifest.spec.template.spec"},
			{"foreign namespace", strings.Replace(v2Job("", ""), `"kind":"Job",`, `"kind":"Job","metadata":{"namespace":"`+otherNS+`"},`, 1), "manifest.metadata.namespace"},
			{"foreign serviceAccountName", v2Job(`,"serviceAccountName":"builder"`, ""), "manifest.spec.template.spec.serviceAccountName"},
			{"unknown kind", `{"apiVersion":"v1","kind":"Secret","stringData":{"token":"x"}}`, "manifest.kind"},
			{"too large", v2Job("", `,"env":[`+strings.Repeat(`{"name":"PAD","value":"`+strings.Repeat("x", 4000)+`"},`, 70)+`{"name":"END","value":"x"}]`), "manifest"},
		}
		for _, c := range cases {
			status, m := e.call(alice, "POST", "/api/v2/workloads", body("refused", c.manifest))
			msg, _ := m["message"].(string)
			if status != 400 || !strings.HasPrefix(msg, c.field) {
				t.Errorf("%s: %d %.300s; want 400 naming %s", c.name, status, msg, c.field)
			}
		}
		if after := objects(e); after != before {
			t.Errorf("refused manifests made objects: %d before, %d after", before, after)
		}
	})

	t.Run("a dry run creates nothing and answers the prediction", func(t *testing.T) {
		e := e.in(t)
		before := objects(e)
		status, m := e.call(alice, "POST", "/api/v2/workloads?dryRun=true", body("dry", v2Job("", "")))
		if status != 200 || m["outcome"] != "start-now" {
			t.Errorf("dry run = %d %v", status, m)
		}
		if _, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "dry", metav1.GetOptions{}); err == nil {
			t.Error("the dry run created its Job")
		}
		if after := objects(e); after != before {
			t.Errorf("the dry run made objects: %d before, %d after", before, after)
		}
	})

	t.Run("a viewer may not submit, nor a researcher of another project", func(t *testing.T) {
		e := e.in(t)
		before := objects(e)
		if status, m := e.call(viewer, "POST", "/api/v2/workloads", body("seen", v2Job("", ""))); status != 403 {
			t.Errorf("a viewer's submission = %d %v", status, m)
		}
		if status, m := e.call(carol, "POST", "/api/v2/workloads", body("intruder", v2Job("", ""))); status != 400 || !strings.Contains(fmt.Sprint(m["message"]), "was not found") {
			t.Errorf("a researcher of another project = %d %v", status, m)
		}
		if status, m := e.call(carol, "GET", "/api/v2/workloads/"+jobID, ""); status != 404 {
			t.Errorf("a researcher of another project reads the Job = %d %v", status, m)
		}
		if after := objects(e); after != before {
			t.Errorf("refused submissions made objects: %d before, %d after", before, after)
		}
	})

	t.Run("both are deleted with their pods", func(t *testing.T) {
		e := e.in(t)
		for _, id := range []string{jobID, deployID} {
			status, m := e.call(alice, "DELETE", "/api/v2/workloads/"+id, "")
			if status != 202 || m["desiredPhase"] != "Deleted" {
				t.Errorf("DELETE %s = %d %v", id, status, m)
			}
		}
		e.eventually("the Job, the Deployment and their pods are gone", 2*time.Minute, func() bool {
			_, jerr := e.client.BatchV1().Jobs(ns).Get(e.ctx, "etl", metav1.GetOptions{})
			_, derr := e.client.AppsV1().Deployments(ns).Get(e.ctx, "web", metav1.GetOptions{})
			return jerr != nil && derr != nil && len(e.podsOf(ns, "arbiter.dev/project="+proj.Name)) == 0
		})
		status, m := e.call(alice, "GET", "/api/v2/workloads/"+jobID, "")
		if raw, _ := json.Marshal(m); status != 200 || m["syncInfo"].(map[string]any)["status"] != "Deleted" {
			t.Errorf("GET once deleted = %d %s", status, raw)
		}
	})
}
