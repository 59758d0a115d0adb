package web_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobManifest is a Job manifest whose pod spec is spec (JSON members after "containers").
func jobManifest(name, podSpecExtra, containerExtra string) string {
	return fmt.Sprintf(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":%q},"spec":{"template":{"spec":{
		"restartPolicy":"Never","containers":[{"name":"main","image":"busybox"%s}]%s}}}}`, name, containerExtra, podSpecExtra)
}

func v2Body(project, name, manifest string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"projectId":%q},"manifest":%s}`, name, project, manifest)
}

func (f *submitFixture) submitV2(t *testing.T, token, query, body string) response {
	t.Helper()
	return doAs(t, f.srv, token, "POST", "/api/v2/workloads"+query, "application/json", body)
}

// TestWorkloadsV2Submit: a manifest is created in the project's namespace with the labels a
// native submission's objects carry and Arbiter's scheduler, recorded with its submitter and
// audited, read back by GET and deleted by DELETE, in Run:ai's shapes.
func TestWorkloadsV2Submit(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)

	r := f.submitV2(t, researcher, "", fmt.Sprintf(`{"metadata":{"name":"etl","projectId":%q,"priority":"high","preemptibility":"non-preemptible"},"manifest":%s}`,
		f.alpha, jobManifest("", "", "")))
	if r.status != 202 {
		t.Fatalf("POST /api/v2/workloads = %d %s", r.status, r.body)
	}
	created := f.cluster.lastManifest(t)
	if by := created.GetAnnotations()["arbiter.dev/submitted-by"]; by != keySubmitter(t, researcher) {
		t.Errorf("the Job's submitter annotation = %q, want %q", by, keySubmitter(t, researcher))
	}
	if created.GetNamespace() != "team-alpha" || created.GetName() != "etl" {
		t.Errorf("created %s/%s, want team-alpha/etl", created.GetNamespace(), created.GetName())
	}
	wantLabels := map[string]string{"arbiter.dev/project": "alpha", "arbiter.dev/workload-type": "job", "priorityClassName": "high",
		"kai.scheduler/preemptibility": "non-preemptible"}
	if diff := cmp.Diff(wantLabels, created.GetLabels()); diff != "" {
		t.Errorf("the Job's labels (-want +got):\n%s", diff)
	}
	podLabels, _, _ := unstructured.NestedStringMap(created.Object, "spec", "template", "metadata", "labels")
	if diff := cmp.Diff(map[string]string{"arbiter.dev/project": "alpha", "arbiter.dev/workload-type": "job"}, podLabels); diff != "" {
		t.Errorf("the pod template's labels (-want +got):\n%s", diff)
	}
	if s, _, _ := unstructured.NestedString(created.Object, "spec", "template", "spec", "schedulerName"); s != "arbiter" {
		t.Errorf("schedulerName = %q, want arbiter", s)
	}
	got := decode[map[string]any](t, r.body)
	md, _ := got["metadata"].(map[string]any)
	id, _ := md["id"].(string)
	if md["name"] != "etl" || md["projectId"] != f.alpha || md["projectName"] != "alpha" || md["createdBy"] != keySubmitter(t, researcher) ||
		md["priority"] != "high" || got["desiredPhase"] != "Running" || id != string(created.GetUID()) {
		t.Errorf("answer = %s", r.body)
	}
	if rows := auditRows(t, f.st, "workload"); len(rows) != 1 || rows[0].Action != "create" || rows[0].EntityID != id || rows[0].Changes["kind"] != "Job" {
		t.Errorf("audit = %+v", rows)
	}

	g := doAs(t, f.srv, researcher, "GET", "/api/v2/workloads/"+id, "", "")
	answer := readV2(t, g.body)
	if g.status != 200 || answer.Workload.Metadata.ID != id || answer.Workload.Metadata.GVK.Kind != "Job" || answer.SyncInfo.Status != "Synced" ||
		answer.Workload.WorkloadManifest["kind"] != "Job" {
		t.Errorf("GET /api/v2/workloads/id = %d %s", g.status, g.body)
	}

	// A researcher of another project sees nothing of it; a viewer of alpha may not delete it.
	other := newAPIKey(t, f.st, "researcher", "project", f.beta)
	if g := doAs(t, f.srv, other, "GET", "/api/v2/workloads/"+id, "", ""); g.status != 404 {
		t.Errorf("GET by a researcher of beta = %d %s", g.status, g.body)
	}
	viewer := newAPIKey(t, f.st, "viewer", "project", f.alpha)
	if d := doAs(t, f.srv, viewer, "DELETE", "/api/v2/workloads/"+id, "", ""); d.status != 403 {
		t.Errorf("DELETE by a viewer = %d %s", d.status, d.body)
	}
	if d := doAs(t, f.srv, other, "DELETE", "/api/v2/workloads/"+id, "", ""); d.status != 404 {
		t.Errorf("DELETE by a researcher of beta = %d %s", d.status, d.body)
	}
	d := doAs(t, f.srv, researcher, "DELETE", "/api/v2/workloads/"+id, "", "")
	if d.status != 202 || decode[map[string]any](t, d.body)["desiredPhase"] != "Deleted" {
		t.Errorf("DELETE by its submitter = %d %s", d.status, d.body)
	}
	g = doAs(t, f.srv, researcher, "GET", "/api/v2/workloads/"+id, "", "")
	if answer = readV2(t, g.body); g.status != 200 || answer.SyncInfo.Status != "Deleted" {
		t.Errorf("GET once deleted = %d %s", g.status, g.body)
	}

	// YAML in base64, Run:ai's other way to send it.
	yaml := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe\nspec:\n  containers:\n  - name: nginx\n    image: nginx\n"
	r = f.submitV2(t, researcher, "", fmt.Sprintf(`{"metadata":{"projectId":%q},"manifestBase64Encoded":%q}`, f.alpha, base64.StdEncoding.EncodeToString([]byte(yaml))))
	if pod := f.cluster.lastManifest(t); r.status != 202 || pod.GetKind() != "Pod" || pod.GetName() != "probe" || pod.GetLabels()["arbiter.dev/project"] != "alpha" {
		t.Errorf("POST a Pod as base64 YAML = %d %s", r.status, r.body)
	}
}

// readV2 reads what the tests check of a WorkloadV2GetResponse (the conformance test checks
// all of it against Run:ai's schema).
func readV2(t *testing.T, body []byte) v2GetAnswer {
	t.Helper()
	var a v2GetAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return a
}

// v2GetAnswer is what the tests read of Run:ai's WorkloadV2GetResponse.
type v2GetAnswer struct {
	Workload struct {
		Metadata struct {
			ID        string `json:"id"`
			CreatedBy string `json:"createdBy"`
			GVK       struct {
				Group   string `json:"group"`
				Version string `json:"version"`
				Kind    string `json:"kind"`
			} `json:"gvk"`
		} `json:"metadata"`
		WorkloadManifest map[string]any `json:"workloadManifest"`
	} `json:"workload"`
	SyncInfo struct {
		Status string `json:"status"`
	} `json:"syncInfo"`
}

// TestWorkloadsV2Refusals: each way a manifest could reach beyond its project is a 400 naming
// the field, and nothing is created.
func TestWorkloadsV2Refusals(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	big := strings.Repeat("x", 1000)
	var env []string
	for i := range 300 {
		env = append(env, fmt.Sprintf(`{"name":"V%d","value":%q}`, i, big))
	}
	cases := []struct {
		name, body, field, says string
	}{
		{"privileged", v2Body(f.alpha, "p", jobManifest("", "", `,"securityContext":{"privileged":true}`)), "manifest.spec.template.spec", "privileged"},
		{"hostNetwork", v2Body(f.alpha, "p", jobManifest("", `,"hostNetwork":true`, "")), "manifest.spec.template.spec", "hostNetwork=true"},
		{"hostPID", v2Body(f.alpha, "p", jobManifest("", `,"hostPID":true`, "")), "manifest.spec.template.spec", "hostPID=true"},
		{"hostPath", v2Body(f.alpha, "p", jobManifest("", `,"volumes":[{"name":"root","hostPath":{"path":"/"}}]`, "")), "manifest.spec.template.spec", "hostPath"},
		{"added capability", v2Body(f.alpha, "p", jobManifest("", "", `,"securityContext":{"capabilities":{"add":["SYS_ADMIN"]}}`)), "manifest.spec.template.spec", "SYS_ADMIN"},
		{"foreign namespace", v2Body(f.alpha, "p", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"namespace":"team-beta"},"spec":{"template":{"spec":{"containers":[{"name":"m","image":"b"}]}}}}`),
			"manifest.metadata.namespace", "team-beta"},
		{"foreign serviceAccountName", v2Body(f.alpha, "p", jobManifest("", `,"serviceAccountName":"arbiter"`, "")), "manifest.spec.template.spec.serviceAccountName", "default ServiceAccount"},
		{"a node of its own", v2Body(f.alpha, "p", jobManifest("", `,"nodeName":"gpu-node-1"`, "")), "manifest.spec.template.spec.nodeName", "bypass"},
		{"a PriorityClass of its own", v2Body(f.alpha, "p", jobManifest("", `,"priorityClassName":"system-node-critical"`, "")), "manifest.spec.template.spec.priorityClassName", "metadata.priority"},
		{"another scheduler", v2Body(f.alpha, "p", jobManifest("", `,"schedulerName":"default-scheduler"`, "")), "manifest.spec.template.spec.schedulerName", "scheduled by Arbiter"},
		{"unknown kind", v2Body(f.alpha, "p", `{"apiVersion":"v1","kind":"Secret","metadata":{},"stringData":{"a":"b"}}`), "manifest.kind", "batch/v1 Job"},
		{"too large", v2Body(f.alpha, "p", jobManifest("", "", `,"env":[`+strings.Join(env, ",")+`]`)), "manifest", "at most 262144 bytes"},
		{"a CronJob's Job's pod", v2Body(f.alpha, "p", `{"apiVersion":"batch/v1","kind":"CronJob","spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"hostIPC":true,"containers":[{"name":"m","image":"b"}]}}}}}}`),
			"manifest.spec.jobTemplate.spec.template.spec", "hostIPC=true"},
		{"a RayCluster's worker group", v2Body(f.alpha, "p", `{"apiVersion":"ray.io/v1","kind":"RayCluster","spec":{"headGroupSpec":{"template":{"spec":{"containers":[{"name":"h","image":"ray"}]}}},
			"workerGroupSpecs":[{"template":{"spec":{"containers":[{"name":"w","image":"ray","securityContext":{"privileged":true}}]}}}]}}`),
			"manifest.spec.workerGroupSpecs[0].template.spec", "privileged"},
		{"a submitter of its own", v2Body(f.alpha, "p", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"annotations":{"arbiter.dev/submitted-by":"someone"}},"spec":{"template":{"spec":{"containers":[{"name":"m","image":"b"}]}}}}`),
			"manifest.metadata.annotations", "Arbiter's own"},
		{"an earlier queue time", v2Body(f.alpha, "p", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"annotations":{"arbiter.dev/queued-at":"2020-01-01T00:00:00Z"}},"spec":{"template":{"spec":{"containers":[{"name":"m","image":"b"}]}}}}`),
			"manifest.metadata.annotations", "Arbiter's own"},
		{"another project's label", v2Body(f.alpha, "p", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"labels":{"arbiter.dev/project":"beta"}},"spec":{"template":{"spec":{"containers":[{"name":"m","image":"b"}]}}}}`),
			"manifest.metadata.labels", "arbiter.dev/project"},
		{"no pod template", v2Body(f.alpha, "p", `{"apiVersion":"batch/v1","kind":"Job","spec":{}}`), "manifest.spec", "holds no pod template"},
		{"both forms", fmt.Sprintf(`{"metadata":{"name":"p","projectId":%q},"manifest":{},"manifestBase64Encoded":"e30="}`, f.alpha), "manifest", "not both"},
	}
	for _, c := range cases {
		r := f.submitV2(t, researcher, "", c.body)
		msg := ""
		if r.status == 400 {
			msg = r.refusal(t).Message
		}
		if r.status != 400 || !strings.Contains(msg, c.field) || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %d %.400s; want 400 naming %s and saying %q", c.name, r.status, r.body, c.field, c.says)
		}
		if r.status == 400 && !strings.HasPrefix(msg, c.field) && !strings.Contains(msg, c.field+" ") && !strings.Contains(msg, c.field+":") && !strings.Contains(msg, c.field+".") {
			t.Errorf("%s: the refusal does not name %s as a field: %s", c.name, c.field, msg)
		}
	}
	if n := f.cluster.manifestCount(); n != 0 {
		t.Errorf("%d manifests were created by refused submissions", n)
	}
	if rows := auditRows(t, f.st, "workload"); len(rows) > 0 && rows[0].Result == "success" {
		t.Errorf("a refused submission was audited as a success: %+v", rows[0])
	}
}

// TestWorkloadsV2Roles: a viewer may not submit; a researcher of project alpha cannot submit
// into beta, nor find out that it exists; a dry run creates nothing. A workload is read by
// those who may read its project, and deleted by its submitter or a research manager of its
// project, not by another researcher; those of other projects do not find it.
func TestWorkloadsV2Roles(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	viewer := newAPIKey(t, f.st, "viewer", "project", f.alpha)
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	if r := f.submitV2(t, viewer, "", v2Body(f.alpha, "v", jobManifest("", "", ""))); r.status != 403 {
		t.Errorf("a viewer's submission = %d %s", r.status, r.body)
	}
	r := f.submitV2(t, researcher, "", v2Body(f.beta, "b", jobManifest("", "", "")))
	if r.status != 400 || !strings.Contains(r.refusal(t).Message, "was not found") {
		t.Errorf("a researcher of alpha submitting to beta = %d %s", r.status, r.body)
	}
	if r := f.submitV2(t, researcher, "?dryRun=true", v2Body(f.alpha, "d", jobManifest("", "", ""))); r.status != 503 {
		// The web tests have no scheduler to ask; test/e2e answers the prediction.
		t.Errorf("a dry run without a scheduler = %d %s", r.status, r.body)
	}
	if r := f.submitV2(t, researcher, "?dryRun=true", v2Body(f.alpha, "d", jobManifest("", `,"hostNetwork":true`, ""))); r.status != 400 {
		t.Errorf("a dry run of a refused manifest = %d %s", r.status, r.body)
	}
	if n := f.cluster.manifestCount(); n != 0 {
		t.Errorf("%d manifests were created", n)
	}

	// Reading and deleting, by role and scope: a workload of alice's in alpha.
	alice := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	r = f.submitV2(t, alice, "", v2Body(f.alpha, "owned", jobManifest("", "", "")))
	if r.status != 202 {
		t.Fatalf("alice's submission = %d %s", r.status, r.body)
	}
	id := decode[map[string]any](t, r.body)["metadata"].(map[string]any)["id"].(string)
	path := "/api/v2/workloads/" + id
	for _, c := range []struct {
		who    string
		token  string
		get    int
		delete int // 0: not tried
	}{
		{"no credentials", "", 401, 401},
		{"a viewer of alpha", viewer, 200, 403},
		{"a viewer of beta", newAPIKey(t, f.st, "viewer", "project", f.beta), 404, 403},
		{"a researcher of beta", newAPIKey(t, f.st, "researcher", "project", f.beta), 404, 404},
		{"another researcher of alpha", researcher, 200, 403},
		{"a department admin of research", newAPIKey(t, f.st, "department-admin", "department", f.dept), 200, 0},
		{"a research manager of alpha", newAPIKey(t, f.st, "research-manager", "project", f.alpha), 200, 202},
	} {
		if g := doAs(t, f.srv, c.token, "GET", path, "", ""); g.status != c.get {
			t.Errorf("GET by %s = %d %s, want %d", c.who, g.status, g.body, c.get)
		}
		if c.delete == 0 {
			continue
		}
		if d := doAs(t, f.srv, c.token, "DELETE", path, "", ""); d.status != c.delete {
			t.Errorf("DELETE by %s = %d %s, want %d", c.who, d.status, d.body, c.delete)
		}
	}
	if g := doAs(t, f.srv, alice, "GET", "/api/v2/workloads/not-an-id", "", ""); g.status != 400 {
		t.Errorf("GET of a malformed id = %d %s", g.status, g.body)
	}
}
