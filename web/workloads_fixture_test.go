package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"k8s.io/utils/ptr"
)

// fakeLabeler stands in for the cluster edge (kube.Workloads.PatchWorkloadLabels, tested
// against a cluster elsewhere): it records each call and answers err.
type fakeLabeler struct {
	mu    sync.Mutex
	calls []labelCall
	err   error
}

type labelCall struct {
	uid string
	set map[string]*string
}

func (f *fakeLabeler) PatchWorkloadLabels(_ context.Context, uid string, set map[string]*string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.calls = append(f.calls, labelCall{uid, set})
	return nil
}

func (f *fakeLabeler) last(t *testing.T) labelCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("the labeler was not called")
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeLabeler) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// goneError is how the cluster edge says the workload is no longer there.
type goneError struct{}

func (goneError) Error() string  { return "gone" }
func (goneError) NotFound() bool { return true }

// unwatchedError is how the cluster edge says the workload's top owner is of a kind Arbiter
// does not watch (kube.UnwatchedKindError).
type unwatchedError struct{}

func (unwatchedError) Error() string {
	return "workload g is a Gadget.example.com, a kind Arbiter does not watch: its labels cannot be changed here; set priorityClassName on its pods instead"
}
func (unwatchedError) Unwatched() bool { return true }

// trainABasis is the fixture's start estimate of train-a: 90 minutes after t0.
const trainABasis = "Simulated: it starts after the end of 1 running workload (the last, team-alpha/train-b at its activeDeadlineSeconds)."

// workloadFixture is an API over seeded workload records:
//
//	department research: alpha (priority changes allowed), beta (allowPriorityChange false)
//	department ops:      gamma (priority between medium-low and high; allowPreemptibilityChange false)
//	trainA   alpha Pending   low (40), preemptible, queue 1, 4 GPUs, queued first
//	trainB   alpha Running   high (125), non-preemptible, 8 GPUs on n1, n2
//	serveC   alpha Completed (history only)
//	betaJob  beta  Pending   very-low (25), queue 2, InsufficientCapacity
//	gammaJob gamma Pending   medium (80), queue 3
//	orphan   (no project)    Pending medium-low (65), NoProject
type workloadFixture struct {
	srv                                               *httptest.Server
	st                                                *store.Store
	labeler                                           *fakeLabeler
	research, ops, alpha, beta, gamma                 string
	trainA, trainB, serveC, betaJob, gammaJob, orphan string
	t0                                                time.Time
}

func newWorkloadAPI(t *testing.T, labeler web.WorkloadLabeler) *workloadFixture {
	t.Helper()
	return newWorkloadAPIWith(t, labeler, nil)
}

// newWorkloadAPIWith is newWorkloadAPI with more dependencies set by more.
func newWorkloadAPIWith(t *testing.T, labeler web.WorkloadLabeler, more func(*web.Deps)) *workloadFixture {
	t.Helper()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Workloads = st
	d.Labeler = labeler
	d.Estimating = true
	if more != nil {
		more(&d)
	}
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	f := &workloadFixture{srv: srv, st: st, t0: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	f.labeler, _ = labeler.(*fakeLabeler)

	f.research = create(t, srv, "/api/v1/org-unit/departments", `{"name":"research"}`)
	f.ops = create(t, srv, "/api/v1/org-unit/departments", `{"name":"ops"}`)
	project := func(name, dept, policy string) string {
		return create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q,"policy":%s}`, name, dept, policy))
	}
	f.alpha = project("alpha", f.research, `{}`)
	f.beta = project("beta", f.research, `{"allowPriorityChange":false}`)
	f.gamma = project("gamma", f.ops, `{"minPriority":"medium-low","maxPriority":"high","allowPreemptibilityChange":false}`)

	f.trainA, f.trainB, f.serveC, f.betaJob, f.gammaJob, f.orphan = uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := f.at
	started, finished := at(2), at(30)
	rec := func(uid, name, project, dept, prio string, value int, preempt, phase string, queued int) store.WorkloadRecord {
		return store.WorkloadRecord{UID: uid, Namespace: "team-" + orDefault(project, "none"), Name: name, Kind: "Job", APIGroup: "batch",
			TypeName: "Job", CategoryName: "Train", ProjectName: project, DepartmentName: dept, PriorityName: prio,
			PriorityValue: value, Preemptibility: preempt, Phase: phase, Gang: 1, QueuedAt: at(queued)}
	}
	records := []store.WorkloadRecord{
		rec(f.trainA, "train-a", "alpha", "research", "low", 40, "preemptible", "Pending", 0),
		rec(f.trainB, "train-b", "alpha", "research", "high", 125, "non-preemptible", "Running", 1),
		rec(f.serveC, "serve-c", "alpha", "research", "very-high", 150, "non-preemptible", "Completed", 2),
		rec(f.betaJob, "beta-job", "beta", "research", "very-low", 25, "preemptible", "Pending", 3),
		rec(f.gammaJob, "gamma-job", "gamma", "ops", "medium", 80, "preemptible", "Pending", 4),
		rec(f.orphan, "orphan", "", "", "medium-low", 65, "preemptible", "Pending", 5),
	}
	records[0].QueuePosition, records[0].RequestedGPUs, records[0].Reason, records[0].Message = 1, 4, "InsufficientCapacity", "Waiting for 4 free GPUs."
	records[1].RequestedGPUs, records[1].AllocatedGPUs, records[1].Nodes, records[1].NodePool, records[1].StartedAt = 8, 8, []string{"n1", "n2"}, "default", &started
	records[1].PriorityFrom, records[1].PreemptibilityFrom = trainBPriorityFrom, trainBPreemptibilityFrom
	records[2].StartedAt, records[2].FinishedAt, records[2].TypeName, records[2].CategoryName = &started, &finished, "InferenceService", "Deploy"
	records[3].QueuePosition, records[3].RequestedGPUs, records[3].Reason = 2, 2, "InsufficientCapacity"
	records[4].QueuePosition, records[4].RequestedGPUs = 3, 1 // distinct positions keep the sort test free of ties
	records[5].Reason, records[5].Namespace = "NoProject", "scratch"
	events := []store.WorkloadEvent{
		{WorkloadUID: f.trainB, At: at(1), Kind: "Queued", Message: "Queued in project alpha."},
		{WorkloadUID: f.trainB, At: at(2), Kind: "Admitted", Message: "Admitted on n1, n2."},
	}
	if err := st.RecordWorkloads(context.Background(), withProjectIDs(t, st, records), events); err != nil {
		t.Fatal(err)
	}
	// train-a's start estimate, as the leader's pass writes it (server/estimates.go, on the
	// pure scheduler.EstimateStarts tested there)
	if err := st.RecordEstimates(context.Background(), []store.WorkloadEstimate{{UID: f.trainA, At: ptr.To(at(90)), Basis: trainABasis}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// withProjectIDs gives each record the id of the project that has its project name now, as
// the scheduler's recorder does (its snapshot's projects carry their ids: server/settings.go,
// scheduler/lifecycle): a workload belongs to its project by id.
func withProjectIDs(t *testing.T, st *store.Store, records []store.WorkloadRecord) []store.WorkloadRecord {
	t.Helper()
	refs, err := st.ProjectRefs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range records {
		for _, p := range refs {
			if p.Name == records[i].ProjectName {
				records[i].ProjectID = &p.ID
			}
		}
	}
	return records
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// at is the fixture's clock: min minutes after t0.
func (f *workloadFixture) at(min int) time.Time { return f.t0.Add(time.Duration(min) * time.Minute) }

// Where train-b's priority and preemptibility came from, as the scheduler's record says.
const (
	trainBPriorityFrom       = "asked for with the label priorityClassName on the Job"
	trainBPreemptibilityFrom = "from its priority high: preemptible below value 100"
)

// view is what the API shows of train-a, train-b or serve-c as the fixture records them.
func (f *workloadFixture) view(uid string) views.Workload {
	w := views.Workload{Kind: "Job", Type: "Job", Category: "Train", ProjectID: &f.alpha, ProjectName: "alpha", DepartmentName: "research",
		Namespace: "team-alpha", Gang: 1, Nodes: []string{}}
	// Run:ai's fields: the one tenant and cluster, alpha's department, created otherwise than
	// through Arbiter; the phase changed at the last phase event, else at the queue time.
	w.TenantID, w.ClusterID, w.DepartmentID, w.Source, w.CurrentNodePools = 1, store.SeedID("cluster", "arbiter").String(), f.research, "Other", []string{}
	switch uid {
	case f.trainA:
		w.ID, w.Name, w.PriorityName, w.PriorityValue, w.Preemptible, w.Phase = f.trainA, "train-a", "low", 40, true, "Pending"
		w.QueuePosition, w.RequestedGPUs, w.Reason, w.Message, w.CreatedAt = ptr.To(1), 4, "InsufficientCapacity", "Waiting for 4 free GPUs.", f.at(0)
		w.EstimatedStartAt, w.EstimateBasis = ptr.To(f.at(90)), trainABasis
		w.RunAIPhase, w.PhaseUpdatedAt = "Pending", f.at(0)
		w.Conditions = []views.RunAICondition{{Type: "Admitted", Status: "False", Reason: w.Reason, Message: w.Message, LastTransitionTime: ptr.To(f.at(0))}}
	case f.trainB:
		w.ID, w.Name, w.PriorityName, w.PriorityValue, w.Phase = f.trainB, "train-b", "high", 125, "Running"
		w.RequestedGPUs, w.AllocatedGPUs, w.Nodes, w.NodePool = 8, 8, []string{"n1", "n2"}, "default"
		w.CreatedAt, w.StartedAt = f.at(1), ptr.To(f.at(2))
		w.PriorityFrom, w.PreemptibilityFrom = trainBPriorityFrom, trainBPreemptibilityFrom
		w.RunAIPhase, w.PhaseUpdatedAt, w.CurrentNodePools = "Running", f.at(2), []string{"default"}
		w.Conditions = []views.RunAICondition{{Type: "Admitted", Status: "True", LastTransitionTime: ptr.To(f.at(2))}}
	case f.serveC:
		w.ID, w.Name, w.PriorityName, w.PriorityValue, w.Phase, w.Type, w.Category = f.serveC, "serve-c", "very-high", 150, "Completed", "InferenceService", "Deploy"
		w.CreatedAt, w.StartedAt, w.FinishedAt = f.at(2), ptr.To(f.at(2)), ptr.To(f.at(30))
		w.RunAIPhase, w.PhaseUpdatedAt, w.CompletedAt, w.DeletedAt, w.Conditions = "Completed", f.at(2), w.FinishedAt, w.FinishedAt, []views.RunAICondition{}
	}
	w.Priority, w.PriorityClassName, w.PhaseMessage, w.K8sPhaseUpdatedAt = w.PriorityValue, w.PriorityName, w.Message, w.PhaseUpdatedAt
	w.Preemptibility = "non-preemptible"
	if w.Preemptible {
		w.Preemptibility = "preemptible"
	}
	return w
}

// recordClock ignores what the database's clock and the time a test runs decide: when the
// record was written, and the pending and running times that grow while a workload waits or
// runs (checked apart where they are fixed).
var recordClock = cmpopts.IgnoreFields(views.RunAIWorkload{}, "UpdatedAt", "TotalPendingTimeSeconds", "TotalRunningTimeSeconds")

// pendingSeconds grows with the clock: tests that compare a pending workload ignore it and
// check it apart.
var pendingSeconds = cmpopts.IgnoreFields(views.Workload{}, "PendingSeconds")

func workloadNames(ws []views.Workload) string {
	return namesOf(ws, func(w views.Workload) string { return w.Name })
}

// workloads GETs a workload list as the admin and returns the names in it.
func workloads(t *testing.T, srv *httptest.Server, query string) string {
	t.Helper()
	return workloadNames(list[views.Workload](t, srv, "/api/v1/workloads?"+query, "workloads"))
}
