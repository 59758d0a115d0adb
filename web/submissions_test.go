package web_test

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/google/uuid"
)

// fakeCluster stands in for kube.Scheduler's submission methods (tested against the local
// control plane in test/e2e): it keeps what was submitted and answers err.
type fakeCluster struct {
	mu        sync.Mutex
	submitted []native.Workload
	deleted   []native.Ref
	suspended []bool
	exists    map[string]bool // names the cluster already has
	byUID     map[string]native.Workload
	manifests []*unstructured.Unstructured // created by Workloads V2, their UID set
}

type existsError struct{}

func (existsError) Error() string       { return "exists" }
func (existsError) AlreadyExists() bool { return true }

func (f *fakeCluster) SubmitWorkload(_ context.Context, w native.Workload) (native.Ref, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.exists[w.Name] {
		return native.Ref{}, time.Time{}, existsError{}
	}
	f.submitted = append(f.submitted, w)
	uid := uuid.NewString()
	if f.byUID == nil {
		f.byUID = map[string]native.Workload{}
	}
	f.byUID[uid] = w
	object := w.Kind.Object
	if w.As.Object != "" {
		object = w.As.Object
	}
	return native.Ref{UID: uid, Namespace: w.Namespace, Name: w.Name, Object: object}, time.Now(), nil
}

// DistributedMadeAs answers as a cluster without training-operator does.
func (f *fakeCluster) DistributedMadeAs(context.Context) (native.MadeAs, error) {
	return native.DistributedMadeAs(false), nil
}

func (f *fakeCluster) SubmittedObjects(_ context.Context, r native.Ref) (native.Objects, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, ok := f.byUID[r.UID]
	if !ok || slices.ContainsFunc(f.deleted, func(d native.Ref) bool { return d.UID == r.UID }) {
		return native.Objects{}, notFoundError{}
	}
	return w.Objects(), nil
}

type notFoundError struct{}

func (notFoundError) Error() string  { return "not found" }
func (notFoundError) NotFound() bool { return true }

func (f *fakeCluster) DeleteWorkload(_ context.Context, r native.Ref) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, r)
	return nil
}

func (f *fakeCluster) SuspendJob(_ context.Context, _ native.Ref, suspend bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.suspended = append(f.suspended, suspend)
	return nil
}

func (f *fakeCluster) last(t *testing.T) native.Workload {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.submitted) == 0 {
		t.Fatal("nothing was submitted")
	}
	return f.submitted[len(f.submitted)-1]
}

func (f *fakeCluster) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.submitted)
}

type submitFixture struct {
	srv                *httptest.Server
	st                 *store.Store
	cluster            *fakeCluster
	dept               string
	alpha, beta, gamma string // projects: alpha open, beta no priority change, gamma a range and no preemptibility change
	bare               string // a project without a namespace
}

func newSubmitAPI(t *testing.T) *submitFixture {
	t.Helper()
	return newSubmitAPIWith(t, nil)
}

// newSubmitAPIWith is newSubmitAPI with more dependencies set by more.
func newSubmitAPIWith(t *testing.T, more func(*web.Deps)) *submitFixture {
	t.Helper()
	st := store.New(testdb.New(t))
	f := &submitFixture{st: st, cluster: &fakeCluster{exists: map[string]bool{"taken": true}}}
	d := deps(st)
	d.Workloads, d.Submitter, d.Submissions = st, f.cluster, st
	if more != nil {
		more(&d)
	}
	f.srv = httptest.NewServer(web.New(d))
	t.Cleanup(f.srv.Close)
	signIn(f.srv, newAPIKey(t, st, "admin", "system", ""))
	f.dept = create(t, f.srv, "/api/v1/org-unit/departments", `{"name":"research"}`)
	project := func(name, extra string) string {
		return create(t, f.srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q%s}`, name, f.dept, extra))
	}
	f.alpha = project("alpha", `,"namespaces":["team-alpha"]`)
	f.beta = project("beta", `,"namespaces":["team-beta"],"policy":{"allowPriorityChange":false}`)
	f.gamma = project("gamma", `,"namespaces":["team-gamma"],"policy":{"minPriority":"medium-low","maxPriority":"high","allowPreemptibilityChange":false}`)
	f.bare = project("bare", ``)
	return f
}

func (f *submitFixture) submit(t *testing.T, token, kind, body string) response {
	t.Helper()
	return doAs(t, f.srv, token, "POST", "/api/v1/workloads/"+kind, "application/json", body)
}

// TestSubmit: each kind is checked, resolved against its project and type, created through the
// cluster edge with the caller as submitter, recorded at once and answered 202.
func TestSubmit(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	admin := tokenOf(f.srv)
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)

	r := f.submit(t, researcher, "trainings", fmt.Sprintf(`{"name":"train-a","projectId":%q,"clusterId":%q,"spec":{"image":"python:3.12",
		"command":"python","args":"-x my-script.py","compute":{"gpuDevicesRequest":2,"cpuCoreRequest":0.5,"cpuMemoryRequest":"20M"},
		"priorityClass":"high","preemptibility":"non-preemptible","environmentVariables":[{"name":"EPOCHS","value":"3"}]}}`, f.alpha, store.DefaultClusterID))
	if r.status != 202 {
		t.Fatalf("POST trainings = %d %s", r.status, r.body)
	}
	got := decode[views.SubmittedWorkload](t, r.body)
	w := f.cluster.last(t)
	if w.Kind != native.Training || w.Namespace != "team-alpha" || w.Project != "alpha" || w.Priority != "high" ||
		w.Preemptibility != "non-preemptible" || w.GPUs != 2 || w.Submitter != keySubmitter(t, researcher) {
		t.Errorf("submitted = %+v", w)
	}
	if got.WorkloadID == "" || got.WorkloadID != got.ID || got.Name != "train-a" || got.Type != "Standard training" || got.Phase != "Pending" ||
		got.Submitter != keySubmitter(t, researcher) || got.CreatedBy != got.Submitter || got.PriorityName != "high" || got.RequestedGPUs != 2 ||
		got.ProjectName != "alpha" || got.DesiredPhase != "Running" {
		t.Errorf("answer = %+v", got)
	}
	// Recorded at once: listed, and readable by its kind's route; the audit row names it.
	if names := workloads(t, f.srv, "filterBy=submitter=="+keySubmitter(t, researcher)); names != "train-a" {
		t.Errorf("listed = %q", names)
	}
	if g := get(t, f.srv, "/api/v1/workloads/trainings/"+got.ID); g.status != 200 || decode[views.SubmittedWorkload](t, g.body).WorkloadID != got.ID {
		t.Errorf("GET trainings/id = %d %s", g.status, g.body)
	}
	if g := do(t, f.srv, "GET", "/api/v1/workloads/inferences/"+got.ID, "", ""); g.status != 404 || !strings.Contains(g.refusal(t).Message, "is a Standard training, not a Custom inference") {
		t.Errorf("GET inferences/id of a training = %d %s", g.status, g.body)
	}
	if rows := auditRows(t, f.st, "workload"); len(rows) != 1 || rows[0].Action != "create" || rows[0].EntityID != got.ID || rows[0].EntityName != "train-a" {
		t.Errorf("audit = %+v", rows)
	}

	// The type's defaults apply when priority and preemptibility are absent: no label, and the
	// answer shows the default (Workspace: high, non-preemptible, from its category Build).
	r = f.submit(t, admin, "workspaces", fmt.Sprintf(`{"name":"ws","projectId":%q,"spec":{"image":"jupyter/base"}}`, f.alpha))
	if r.status != 202 {
		t.Fatalf("POST workspaces = %d %s", r.status, r.body)
	}
	if w := f.cluster.last(t); w.Priority != "" || w.Preemptibility != "" || w.GPUs != 0 || w.Kind != native.Workspace {
		t.Errorf("submitted = %+v", w)
	}
	ws := decode[views.SubmittedWorkload](t, r.body)
	if ws.Type != "Workspace" || ws.PriorityName == "" || ws.Submitter != keySubmitter(t, admin) {
		t.Errorf("answer = %+v", ws)
	}

	// Distributed and inference.
	r = f.submit(t, admin, "distributed", fmt.Sprintf(`{"name":"dist","projectId":%q,"spec":{"image":"pytorch","numWorkers":4,"compute":{"gpuDevicesRequest":1}}}`, f.alpha))
	if d := decode[views.SubmittedWorkload](t, r.body); r.status != 202 || d.Gang != 4 || d.RequestedGPUs != 4 || d.Type != "Distributed training" {
		t.Errorf("POST distributed = %d %s", r.status, r.body)
	}
	r = f.submit(t, admin, "inferences", fmt.Sprintf(`{"name":"serve","projectId":%q,"useGivenNameAsPrefix":true,
		"spec":{"image":"vllm","servingPort":{"container":8000},"autoscaling":{"minReplicas":2}}}`, f.alpha))
	inf := decode[views.SubmittedWorkload](t, r.body)
	if r.status != 202 || !strings.HasPrefix(inf.Name, "serve-") || len(inf.Name) != len("serve-")+5 || inf.RequestedName != "serve" || inf.Kind != "Deployment" || inf.Gang != 2 {
		t.Errorf("POST inferences = %d %s", r.status, r.body)
	}

	// Stop and run again (a Job), refused for an inference; delete.
	if s := doAs(t, f.srv, researcher, "POST", "/api/v1/workloads/trainings/"+got.ID+"/suspend", "", ""); s.status != 202 ||
		decode[views.SubmissionAction](t, s.body).ActualPhase != "Stopped" || decode[views.SubmissionAction](t, s.body).Code != 202 {
		t.Errorf("suspend = %d %s", s.status, s.body)
	}
	evs := list[views.WorkloadEvent](t, f.srv, "/api/v1/workloads/"+got.ID+"/events", "events")
	if len(evs) != 1 || evs[0].Kind != "Suspended" || !strings.Contains(evs[0].Message, "STOP") {
		t.Errorf("events = %+v", evs)
	}
	if s := doAs(t, f.srv, researcher, "POST", "/api/v1/workloads/trainings/"+got.ID+"/resume", "", ""); s.status != 202 ||
		decode[views.SubmissionAction](t, s.body).ActualPhase != "Pending" {
		t.Errorf("resume = %d %s", s.status, s.body)
	}
	if s := doAs(t, f.srv, admin, "POST", "/api/v1/workloads/inferences/"+inf.ID+"/suspend", "", ""); s.status != 409 ||
		!strings.Contains(s.refusal(t).Message, "an inference cannot be stopped and run again") {
		t.Errorf("suspend an inference = %d %s", s.status, s.body)
	}
	if s := doAs(t, f.srv, researcher, "DELETE", "/api/v1/workloads/workspaces/"+ws.ID, "", ""); s.status != 403 ||
		!strings.Contains(s.refusal(t).Message, "researchers may delete only their own workloads, and ws was submitted by "+keySubmitter(t, admin)) {
		t.Errorf("researcher deletes the admin's = %d %s", s.status, s.body)
	}
	if s := doAs(t, f.srv, researcher, "DELETE", "/api/v1/workloads/trainings/"+got.ID, "", ""); s.status != 202 || len(f.cluster.deleted) != 1 ||
		f.cluster.deleted[0].Name != "train-a" || f.cluster.deleted[0].Object != "Job" {
		t.Errorf("delete own = %d %s %+v", s.status, s.body, f.cluster.deleted)
	}
	if fmt.Sprint(f.cluster.suspended) != "[true false]" {
		t.Errorf("suspensions = %v", f.cluster.suspended)
	}
	// Each action is on the audit log once, refusals too.
	counts := map[string]int{}
	for _, row := range auditRows(t, f.st, "workload") {
		counts[row.Action+" "+row.Result]++
	}
	if want := map[string]int{"create success": 4, "suspend success": 1, "resume success": 1, "suspend failure": 1,
		"delete denied": 1, "delete success": 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("audit rows = %v, want %v", counts, want)
	}
}

// TestSubmitRefusals: bad input and the project's policy are 4xx sentences naming the field
// or the rule, and nothing reaches the cluster.
func TestSubmitRefusals(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	admin := tokenOf(f.srv)
	viewer := newAPIKey(t, f.st, "viewer", "project", f.alpha)
	betaResearcher := newAPIKey(t, f.st, "researcher", "project", f.beta)
	body := func(project, spec string) string {
		return fmt.Sprintf(`{"name":"job","projectId":%q,"spec":{"image":"python"%s}}`, project, spec)
	}
	for _, tc := range []struct {
		token, kind, body string
		status            int
		want              string
	}{
		{admin, "trainings", `{"name":"job","spec":{"image":"python"}}`, 400, "projectId is required"},
		{admin, "trainings", body("nope", ""), 400, `projectId "nope" is not a project id`},
		{admin, "trainings", body(uuid.NewString(), ""), 400, "was not found"},
		{admin, "trainings", body(f.bare, ""), 400, "project bare has no namespace"},
		{admin, "trainings", body(f.alpha, `,"owner":"bob"`), 400, `unknown field "owner"`},
		// Run:ai's clusterId: another cluster's is refused, naming this installation's one.
		{admin, "trainings", `{"name":"job","projectId":"` + f.alpha + `","clusterId":"d73a738f-fab3-430a-8fa3-5241493d7128","spec":{"image":"python"}}`, 400,
			`clusterId "d73a738f-fab3-430a-8fa3-5241493d7128" is not a cluster of this installation: it has one cluster, ` + store.DefaultClusterID.String()},
		{admin, "trainings", body(f.alpha, `,"compute":{"gpuDevicesRequest":"two"}`), 400, "gpuDevicesRequest must be"},
		{admin, "trainings", body(f.alpha, `,"compute":{"gpuDevicesRequest":65}`), 400, "spec.compute.gpuDevicesRequest must be a whole number of GPUs per pod from 0 to 64"},
		{admin, "distributed", body(f.alpha, ""), 400, "spec.numWorkers is required"},
		{admin, "trainings", body(f.alpha, `,"priorityClass":"urgent"`), 400, `spec.priorityClass "urgent" is not in the priority dictionary`},
		{admin, "trainings", body(f.alpha, `,"nodePools":["gpu-a"]`), 400, `node pool "gpu-a" is not one of project alpha's node pools`},
		{admin, "trainings", `{"name":"taken","projectId":"` + f.alpha + `","spec":{"image":"python"}}`, 409, "a workload named taken already exists in project alpha (namespace team-alpha)"},
		// The project's policy (S7, S8).
		{admin, "trainings", body(f.beta, `,"priorityClass":"very-high"`), 400, "project beta does not allow changing priority (its policy's allowPriorityChange is false)"},
		{admin, "trainings", body(f.gamma, `,"priorityClass":"very-high"`), 400, "priority very-high (150) is outside project gamma's allowed range medium-low (65) to high (125)"},
		{admin, "trainings", body(f.gamma, `,"preemptibility":"non-preemptible"`), 400, "project gamma does not allow changing preemptibility"},
		// Roles: a viewer may not submit; a project the caller cannot see is not found.
		{viewer, "trainings", body(f.alpha, ""), 403, "your role does not allow you to submit workloads"},
		{betaResearcher, "trainings", body(f.alpha, ""), 400, "was not found"},
	} {
		r := f.submit(t, tc.token, tc.kind, tc.body)
		if r.status != tc.status || !strings.Contains(r.refusal(t).Message, tc.want) {
			t.Errorf("POST %s %s = %d %s, want %d with %q", tc.kind, tc.body, r.status, r.body, tc.status, tc.want)
		}
	}
	// A dry run is checked like a submission and creates nothing; without a cluster there is no
	// scheduler to ask (TestSubmitDryRun has one).
	if r := f.submit(t, admin, "trainings?dryRun=true", body(f.alpha, "")); r.status != 503 || !strings.Contains(r.refusal(t).Message, "no scheduler to ask") {
		t.Errorf("dry run = %d %s", r.status, r.body)
	}
	if r := f.submit(t, admin, "trainings?dryRun=true", body(f.beta, `,"priorityClass":"very-high"`)); r.status != 400 {
		t.Errorf("dry run of a refused submission = %d %s", r.status, r.body)
	}
	if r := f.submit(t, admin, "trainings?dryRun=maybe", body(f.alpha, "")); r.status != 400 || !strings.Contains(r.refusal(t).Message, `dryRun="maybe" must be true or false`) {
		t.Errorf("dryRun=maybe = %d %s", r.status, r.body)
	}
	if n := f.cluster.count(); n != 0 {
		t.Errorf("%d refused submissions or dry runs reached the cluster", n)
	}
	// The type's default priority is no change: beta accepts it (Standard training: low), and
	// keeps it as asked (S9; TestSubmitKeepsExplicitValues).
	if r := f.submit(t, betaResearcher, "trainings", body(f.beta, `,"priorityClass":"low","preemptibility":"preemptible"`)); r.status != 202 {
		t.Errorf("the type's defaults in a locked project = %d %s", r.status, r.body)
	}
	if w := f.cluster.last(t); w.Priority != "low" || w.Preemptibility != "preemptible" {
		t.Errorf("explicit values were not written as labels: %+v", w)
	}
	// Within gamma's range.
	if r := f.submit(t, admin, "trainings", body(f.gamma, `,"priorityClass":"medium-high"`)); r.status != 202 {
		t.Errorf("within the range = %d %s", r.status, r.body)
	}
	// Without a priority, gamma's range lifts Standard training's default (low) to its minimum,
	// as the scheduler would; asking for that minimum is no change either.
	r := f.submit(t, admin, "trainings", body(f.gamma, ``))
	if w := decode[views.SubmittedWorkload](t, r.body); r.status != 202 || w.PriorityName != "medium-low" || w.PriorityValue != 65 {
		t.Errorf("gamma's default = %d %s", r.status, r.body)
	}
	// A project's own default priority applies, and is no change in a project that forbids one.
	var medium string
	for _, p := range list[views.Priority](t, f.srv, "/api/v1/workload-priorities", "priorities") {
		if p.Name == "medium" {
			medium = p.ID
		}
	}
	if r := doAs(t, f.srv, admin, "PUT", "/api/v1/org-unit/projects/"+f.beta, "application/json",
		fmt.Sprintf(`{"name":"beta","departmentId":%q,"namespaces":["team-beta"],"policy":{"allowPriorityChange":false,"defaultPriorityId":%q}}`, f.dept, medium)); r.status != 200 {
		t.Fatalf("PUT beta = %d %s", r.status, r.body)
	}
	r = f.submit(t, betaResearcher, "trainings", body(f.beta, `,"priorityClass":"medium"`))
	if w := decode[views.SubmittedWorkload](t, r.body); r.status != 202 || w.PriorityName != "medium" || f.cluster.last(t).Priority != "medium" {
		t.Errorf("beta's own default = %d %s", r.status, r.body)
	}
}

// TestSubmitWithoutCluster: a checked submission, or its dry run, on a server without a
// cluster is a 503 that says so.
func TestSubmitWithoutCluster(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Workloads, d.Submissions = st, st
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research"}`)
	p := create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"alpha","departmentId":%q,"namespaces":["team-alpha"]}`, dept))
	for _, path := range []string{"/api/v1/workloads/trainings", "/api/v1/workloads/trainings?dryRun=true"} {
		r := do(t, srv, "POST", path, "application/json", fmt.Sprintf(`{"name":"a","projectId":%q,"spec":{"image":"python"}}`, p))
		if r.status != 503 || !strings.Contains(r.refusal(t).Message, "no cluster is connected") {
			t.Errorf("POST %s = %d %s", path, r.status, r.body)
		}
	}
}
