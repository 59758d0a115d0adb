package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// podOf is a pod of workload uid as the scheduler's last view holds it, made at minute min.
func podOf(uid, name string, min int, f *workloadFixture) views.WorkloadPod {
	return views.WorkloadPod{Name: name, UID: uuid.NewString(), WorkloadUID: uid, Node: "n1", Phase: "Bound", K8sPhase: "Running", GPUs: 1,
		CreatedAt: f.at(min), Containers: []views.PodContainer{{Name: "main", Image: "busybox"}}}
}

// newPodsFixture is the workload fixture with pods in the last cycle's view: one of train-a
// (project alpha, department research), beta-job (beta, research), gamma-job (gamma, ops),
// orphan (no project) and one of a workload the scheduler has not recorded yet.
func newPodsFixture(t *testing.T) *workloadFixture {
	t.Helper()
	pods := fakePods{}
	f := newWorkloadAPIWith(t, &fakeLabeler{}, func(d *web.Deps) { d.Pods = pods })
	unrecorded := uuid.NewString()
	pods[f.trainA] = []views.WorkloadPod{podOf(f.trainA, "train-a-0", 1, f)}
	pods[f.betaJob] = []views.WorkloadPod{podOf(f.betaJob, "beta-job-0", 2, f)}
	pods[f.gammaJob] = []views.WorkloadPod{podOf(f.gammaJob, "gamma-job-0", 3, f)}
	pods[f.orphan] = []views.WorkloadPod{podOf(f.orphan, "orphan-0", 4, f)}
	pods[unrecorded] = []views.WorkloadPod{podOf(unrecorded, "unrecorded-0", 5, f)}
	return f
}

// podAnswer is Run:ai's Pod as the pods lists answer it.
type podAnswer struct {
	ID, Name, WorkloadID, ClusterID, ProjectID, PriorityClassName, K8sPhase string
	TenantID, GPUs                                                          int
	NodeName, CurrentNodePool                                               *string
	CreatedAt, K8sPhaseUpdatedAt, UpdatedAt                                 time.Time
	CompletedAt, DeletedAt                                                  *time.Time
	Containers                                                              []views.PodContainer
	WorkloadName, ProjectName                                               string
}

// podNames lists the names of the pods a pods list answers token.
func podNames(t *testing.T, f *workloadFixture, token, path string) string {
	t.Helper()
	r := doAs(t, f.srv, token, "GET", path, "", "")
	if r.status != 200 {
		t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
	}
	return namesOf(decodeList[podAnswer](t, r.body, "pods").Items, func(p podAnswer) string { return p.Name })
}

// A workload's pods and history, and the pods list and count, show a caller only what the
// workloads list shows them, for every role and scope: a viewer, researcher or research
// manager of project alpha reads alpha's pods and history and nothing of gamma's (department
// ops); a department admin their department's; an admin every pod, also of workloads of no
// project or not recorded yet.
func TestWorkloadPodsAndHistoryShowWhatTheCallerMaySee(t *testing.T) {
	t.Parallel()
	f := newPodsFixture(t)
	for _, c := range []struct {
		who, role, scope, scopeID string
		pods                      string // the pods list, oldest first
	}{
		{"an admin", "admin", "system", "", "train-a-0,beta-job-0,gamma-job-0,orphan-0,unrecorded-0"},
		{"research's department admin", "department-admin", "department", f.research, "train-a-0,beta-job-0"},
		{"ops' department admin", "department-admin", "department", f.ops, "gamma-job-0"},
		{"a research manager of alpha", "research-manager", "project", f.alpha, "train-a-0"},
		{"a researcher of alpha", "researcher", "project", f.alpha, "train-a-0"},
		{"a viewer of alpha", "viewer", "project", f.alpha, "train-a-0"},
		{"a viewer of ops", "viewer", "department", f.ops, "gamma-job-0"},
	} {
		t.Run(c.who, func(t *testing.T) {
			token := newAPIKey(t, f.st, c.role, c.scope, c.scopeID)
			if got := podNames(t, f, token, "/api/v1/workloads/pods"); got != c.pods {
				t.Errorf("the pods list is %q, want %q", got, c.pods)
			}
			if got, want := countAs(t, f, token, "/api/v1/workloads/pods/count"), len(strings.Split(c.pods, ",")); got != want {
				t.Errorf("the pods count is %d, want %d", got, want)
			}
			seesAlpha := strings.Contains(c.pods, "train-a-0")
			for _, path := range []string{"/api/v1/workloads/" + f.trainA + "/pods", "/api/v1/workloads/" + f.trainB + "/history"} {
				r := doAs(t, f.srv, token, "GET", path, "", "")
				if want := map[bool]int{true: 200, false: 404}[seesAlpha]; r.status != want {
					t.Errorf("GET %s = %d, want %d: %s", path, r.status, want, r.body)
				}
			}
		})
	}
}

// A workload's runningPods are its pods the last cycle saw running on a node, in the list, by
// id and in the answer to a change.
func TestRunningPodsAreTheLastCyclesRunningPods(t *testing.T) {
	t.Parallel()
	f := newPodsFixture(t)
	if got := getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+f.trainA).RunningPods; got != 1 {
		t.Errorf("train-a's runningPods = %d, want its one running pod", got)
	}
	if got := named(t, list[views.Workload](t, f.srv, "/api/v1/workloads", "workloads"), "train-b", workloadName).RunningPods; got != 0 {
		t.Errorf("train-b, of which the view holds no pod, has runningPods %d", got)
	}
	r := send(t, f.srv, "PATCH", "/api/v1/workloads/"+f.trainA+"?dryRun=true", `{"priority":"high"}`, 200)
	if got := decode[views.Workload](t, r.body).RunningPods; got != 1 {
		t.Errorf("the answer to a change of train-a has runningPods %d, want 1", got)
	}
}

func workloadName(w views.Workload) string { return w.Name }

// The pods lists take Run:ai's filterBy, sortBy, offset, limit, search and verbosity, and
// answer Run:ai's Pod with the workload's project (and its names in full).
func TestPodsListsFilterSortAndPage(t *testing.T) {
	t.Parallel()
	f := newPodsFixture(t)
	admin := tokenOf(f.srv)
	for query, want := range map[string]string{
		"filterBy=workloadId==" + f.betaJob:                   "beta-job-0",
		"filterBy=createdAt>=" + f.at(3).Format(time.RFC3339): "gamma-job-0,orphan-0,unrecorded-0",
		"filterBy=nodeName==n2":                               "",
		"filterBy=revisionId!=x&search=JOB":                   "beta-job-0,gamma-job-0",
		"sortBy=createdAt&sortOrder=desc&limit=2":             "unrecorded-0,orphan-0",
		"offset=4":                              "unrecorded-0",
		"deleted=true":                          "",
		"completed=true":                        "",
		"completed=false&filterBy=clusterId=@-": "train-a-0,beta-job-0,gamma-job-0,orphan-0,unrecorded-0",
	} {
		if got := podNames(t, f, admin, "/api/v1/workloads/pods?"+query); got != want {
			t.Errorf("%s: %q, want %q", query, got, want)
		}
	}
	full := getList[podAnswer](t, f.srv, "/api/v1/workloads/pods?verbosity=full&limit=1", "pods")
	if len(full.Items) != 1 || full.Items[0].ProjectID != f.alpha || full.Items[0].ProjectName != "alpha" || full.Items[0].WorkloadName != "train-a" ||
		full.Items[0].TenantID != 1 || full.Next == nil || *full.Next != 1 {
		t.Errorf("the first pod in full is %+v, next %v: want train-a's, of alpha, tenant 1, and next 1", full.Items, full.Next)
	}
	brief := getList[podAnswer](t, f.srv, "/api/v1/workloads/"+f.trainA+"/pods", "pods").Items
	if len(brief) != 1 || brief[0].WorkloadName != "" || brief[0].NodeName == nil || *brief[0].NodeName != "n1" || brief[0].K8sPhase != "Running" ||
		brief[0].WorkloadID != f.trainA || brief[0].PriorityClassName != "low" || brief[0].CompletedAt != nil || brief[0].DeletedAt != nil || len(brief[0].Containers) != 1 {
		t.Errorf("train-a's pods in brief are %+v: want one of train-a, at its priority (low), without workloadName, Running on n1, one container, not completed", brief)
	}
	for query, field := range map[string]string{
		"filterBy=podName==x":  "currentNodepool", // the refusal names the fields there are
		"sortBy=name":          `"name"`,
		"verbosity=loud":       "verbosity",
		"completed=maybe":      "completed",
		"deleted=maybe":        "deleted",
		"limit=501":            "limit",
		"filterBy=createdAt=@": "=@",
	} {
		r := doAs(t, f.srv, admin, "GET", "/api/v1/workloads/pods?"+query, "", "")
		if r.status != 400 || !strings.Contains(r.refusal(t).Message, field) {
			t.Errorf("%s = %d %s, want a 400 naming %s", query, r.status, r.body, field)
		}
	}
}

// A workload's history is its events, oldest first, each followed by the phase it put the
// workload in (Run:ai's phase), paged by offset and limit.
func TestWorkloadHistoryIsEventsAndPhaseUpdates(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, nil)
	type record struct {
		Meta struct {
			CreationTimestamp time.Time
			Type              string
		}
		Spec struct {
			Event *struct {
				CreatedAt                                                 time.Time
				ID, Type, Message, Reason, Source, Kind, Actor, ClusterID string
				InvolvedObject                                            views.InvolvedObject
			}
			PhaseUpdate *struct{ Phase, PhaseMessage string }
		}
	}
	summary := func(rs []record) []string {
		var out []string
		for _, r := range rs {
			switch {
			case r.Spec.Event != nil:
				if r.Spec.Event.ID == "" {
					t.Errorf("a history event has no id: %+v", r.Spec.Event)
				}
				out = append(out, fmt.Sprintf("%s Event %s %s %q", r.Meta.CreationTimestamp.Format("15:04"), r.Spec.Event.Kind, r.Spec.Event.Type, r.Spec.Event.Message))
			case r.Spec.PhaseUpdate != nil:
				out = append(out, fmt.Sprintf("%s %s %s", r.Meta.CreationTimestamp.Format("15:04"), r.Meta.Type, r.Spec.PhaseUpdate.Phase))
			}
		}
		return out
	}
	all := getList[record](t, f.srv, "/api/v1/workloads/"+f.trainB+"/history", "records")
	want := []string{`09:01 Event Queued Normal "Queued in project alpha."`, "09:01 PhaseUpdate Pending",
		`09:02 Event Admitted Normal "Admitted on n1, n2."`, "09:02 PhaseUpdate Running"}
	if diff := cmp.Diff(want, summary(all.Items)); diff != "" || all.Next != nil {
		t.Errorf("train-b's history (-want +got):\n%s\nnext %v, want none", diff, all.Next)
	}
	page := getList[record](t, f.srv, "/api/v1/workloads/"+f.trainB+"/history?offset=1&limit=2", "records")
	if diff := cmp.Diff(want[1:3], summary(page.Items)); diff != "" || page.Next == nil || *page.Next != 3 {
		t.Errorf("the page at 1 of 2 (-want +got):\n%s\nnext %v, want 3", diff, page.Next)
	}
	// An offset past every record is an empty page, even one past the integers (a page reads
	// offset + limit + 1 events).
	for _, offset := range []string{"4", "9223372036854775807"} {
		if beyond := getList[record](t, f.srv, "/api/v1/workloads/"+f.trainB+"/history?offset="+offset, "records"); len(beyond.Items) != 0 || beyond.Next != nil {
			t.Errorf("the page at %s is %v, next %v: want none", offset, summary(beyond.Items), beyond.Next)
		}
	}
	if r := do(t, f.srv, "GET", "/api/v1/workloads/"+f.trainB+"/history?filterBy=type==Event", "", ""); r.status != 400 {
		t.Errorf("a history filtered = %d, want 400 (Run:ai's history takes offset and limit only)", r.status)
	}
	if r := do(t, f.srv, "GET", "/api/v1/workloads/"+uuid.NewString()+"/history", "", ""); r.status != 404 {
		t.Errorf("the history of no workload = %d, want 404", r.status)
	}
}

// A workload's phase is Run:ai's, the same whether answered or filtered by: a Job Arbiter
// holds until admitted and a workload preempted and waiting to come back are Pending, a Job
// its owner stopped is Stopped, a workload that ended preempted Failed; Arbiter's phase is
// k8sPhase.
func TestRunAIPhaseIsAnsweredAsItIsFiltered(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, nil)
	alpha := uuid.MustParse(f.alpha)
	ended := f.at(40)
	rec := func(name, phase string) store.WorkloadRecord {
		return store.WorkloadRecord{UID: uuid.NewString(), Namespace: "team-alpha", Name: name, Kind: "Job", APIGroup: "batch", TypeName: "Job",
			CategoryName: "Train", ProjectID: &alpha, ProjectName: "alpha", DepartmentName: "research", PriorityName: "low", PriorityValue: 40,
			Preemptibility: "preemptible", Phase: phase, Gang: 1, QueuedAt: f.at(10)}
	}
	held, stopped, waiting, gone := rec("held", "Suspended"), rec("stopped", "Suspended"), rec("waiting", "Preempted"), rec("gone", "Preempted")
	held.QueuePosition, gone.FinishedAt = 1, &ended
	if err := f.st.RecordWorkloads(context.Background(), []store.WorkloadRecord{held, stopped, waiting, gone}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, id, k8sPhase, phase string }{
		{"train-a", f.trainA, "Pending", "Pending"}, {"train-b", f.trainB, "Running", "Running"}, {"serve-c", f.serveC, "Completed", "Completed"},
		{"held", held.UID, "Suspended", "Pending"}, {"stopped", stopped.UID, "Suspended", "Stopped"},
		{"waiting", waiting.UID, "Preempted", "Pending"}, {"gone", gone.UID, "Preempted", "Failed"},
	} {
		got := getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+c.id)
		if got.RunAIPhase != c.phase || got.Phase != c.k8sPhase {
			t.Errorf("%s answers phase %s, k8sPhase %s; want %s, %s", c.name, got.RunAIPhase, got.Phase, c.phase, c.k8sPhase)
		}
		finished := c.name == "serve-c" || c.name == "gone"
		q := url.Values{"filterBy": {"phase==" + c.phase + ",name==" + c.name}, "deleted": {fmt.Sprint(finished)}}
		if listed := workloads(t, f.srv, q.Encode()); listed != c.name {
			t.Errorf("filterBy=phase==%s lists %q, want %s", c.phase, listed, c.name)
		}
	}
}

// The list and the count take every filterBy and sortBy name Run:ai's document gives the
// workloads; a name it does not know is a 400 naming the ones it does.
func TestWorkloadListTakesRunAINames(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, nil)
	cluster := store.SeedID("cluster", "arbiter").String()
	for name, value := range map[string]string{
		"type": "Job", "name": "train-b", "clusterId": cluster, "projectId": f.alpha, "projectName": "alpha", "departmentId": f.research,
		"departmentName": "research", "createdAt": f.at(1).Format(time.RFC3339), "deletedAt": "2025-03-01T09:30:00Z", "submittedBy": "",
		"phase": "Running", "completedAt": "2025-03-01T09:30:00Z", "nodepool": "default", "distributedFramework": "", "allocatedGPU": "8",
		"idleGpus": "0", "idleAllocatedGpus": "0", "phaseUpdatedAt": f.at(2).Format(time.RFC3339), "category": "Train",
		"totalPendingTimeSeconds": "60", "totalRunningTimeSeconds": "0", "priority": "125", "priorityClassName": "high",
		"guaranteedRuntimeEndsAt": "2025-03-01T09:30:00Z", "aiApplicationId": "x", "aiApplicationName": "x",
	} {
		for _, path := range []string{"/api/v1/workloads", "/api/v1/workloads/count"} {
			for _, q := range []url.Values{{"filterBy": {name + "!=" + value}}, {"sortBy": {name}, "sortOrder": {"desc"}}} {
				if r := do(t, f.srv, "GET", path+"?"+q.Encode(), "", ""); r.status != 200 {
					t.Errorf("%s?%s = %d %s, want 200", path, q.Encode(), r.status, r.body)
				}
			}
		}
	}
	// What each of Run:ai's names selects, where Arbiter knows the value.
	for filter, want := range map[string]string{
		"departmentId==" + f.research: "train-a,train-b,beta-job", "clusterId==" + cluster: "train-a,train-b,beta-job,gamma-job,orphan",
		"priority>=100": "train-b", "allocatedGPU>=1": "train-b", "nodepool==default": "train-b", "totalPendingTimeSeconds==60": "train-b",
		"phaseUpdatedAt>=" + f.at(2).Format(time.RFC3339): "train-b,beta-job,gamma-job,orphan", "idleGpus>=0": "",
	} {
		if got := workloads(t, f.srv, url.Values{"filterBy": {filter}}.Encode()); got != want {
			t.Errorf("filterBy=%s lists %q, want %q", filter, got, want)
		}
	}
	r := do(t, f.srv, "GET", "/api/v1/workloads?filterBy=owner==bob", "", "")
	if r.status != 400 || !strings.Contains(r.refusal(t).Message, "priorityClassName") {
		t.Errorf("an unknown filter name = %d %s, want a 400 naming the known ones", r.status, r.body)
	}
}
