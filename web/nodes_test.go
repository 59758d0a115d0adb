package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// fakeCycles is a scheduler's last cycle as the Nodes page reads it.
type fakeCycles struct {
	snap *scheduler.Snapshot
	plan *scheduler.Plan
}

func (f fakeCycles) LastCycle() (*scheduler.Snapshot, *scheduler.Plan) { return f.snap, f.plan }

func TestNodesWithoutCluster(t *testing.T) {
	srv, _ := newAPI(t)
	body := string(get(t, srv, "/nodes?pool=a100").body)
	for _, want := range []string{"No cluster connected", `href="/nodes" aria-current="page"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the Nodes page without a cluster has no %q:\n%.3000s", want, body)
		}
	}
	if pools := string(get(t, srv, "/node-pools").body); !strings.Contains(pools, `href="/nodes?pool=`) {
		t.Errorf("the Node pools page does not link each pool to its nodes")
	}
}

func TestNodesBeforeTheFirstCycle(t *testing.T) {
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Cycles = fakeCycles{}
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	if body := string(get(t, srv, "/nodes").body); !strings.Contains(body, "has not finished its first cycle") {
		t.Errorf("the Nodes page before a cycle:\n%.3000s", body)
	}
}

// A caller who may read one project sees its workloads named and the others' cells only as
// held by another project; an admin sees every workload named.
func TestNodesNameOnlyReadableWorkloads(t *testing.T) {
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Workloads = st
	cycles := &fakeCycles{}
	d.Cycles = cycles
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research"}`)
	alpha := create(t, srv, "/api/v1/org-unit/projects", `{"name":"alpha","departmentId":"`+dept+`"}`)
	create(t, srv, "/api/v1/org-unit/projects", `{"name":"beta","departmentId":"`+dept+`"}`)

	pod := func(name string, gpus int64) scheduler.Pod {
		return scheduler.Pod{UID: name, Namespace: "ml", Name: name, NodeName: "gpu-1", Requests: scheduler.Resources{GPUs: gpus}}
	}
	cycles.snap = &scheduler.Snapshot{
		NodePools: []scheduler.NodePool{{Name: "a100", LabelKey: "pool", LabelValue: "a100"}},
		Projects:  []scheduler.Project{{Name: "alpha"}, {Name: "beta"}},
		Nodes: []scheduler.Node{
			{Name: "gpu-1", Labels: map[string]string{"pool": "a100"}, Ready: true, Allocatable: scheduler.Resources{GPUs: 4}},
			{Name: "gpu-2", Ready: false, Allocatable: scheduler.Resources{GPUs: 2}},
		},
		Workloads: []scheduler.Workload{
			{UID: "a", Namespace: "ml", Name: "train-alpha", Project: "alpha", Pods: []scheduler.Pod{pod("train-alpha-0", 2)}},
			{UID: "b", Namespace: "ml", Name: "train-beta", Project: "beta", Pods: []scheduler.Pod{pod("train-beta-0", 1)}},
		},
	}
	cycles.plan = &scheduler.Plan{Running: []scheduler.RunningWorkload{
		{Workload: "a", Priority: scheduler.Priority{Name: "high"}, Preemptibility: scheduler.NonPreemptible},
		{Workload: "b", Priority: scheduler.Priority{Name: "low"}, Preemptibility: scheduler.Preemptible},
	}}
	alphaCell := `title="GPU 1: ml/train-alpha (project alpha, priority high, non-preemptible)"`
	betaCell := `title="GPU 3: ml/train-beta (project beta, priority low, preemptible)"`

	admin := string(get(t, srv, "/nodes").body)
	for _, want := range []string{alphaCell, betaCell, "Not ready", `id="node-gpu-2"`, "3 of 4 GPUs held"} {
		if !strings.Contains(admin, want) {
			t.Errorf("the admin's Nodes page has no %q", want)
		}
	}
	researcher := newAPIKey(t, st, "researcher", "project", alpha)
	r := doAs(t, srv, researcher, "GET", "/nodes?pool=a100", "", "")
	body := string(r.body)
	if r.status != 200 || !strings.Contains(body, alphaCell) || !strings.Contains(body, "GPU 3: held by another project") {
		t.Errorf("a researcher of alpha: %d, alpha's cell named %v, beta's hidden %v", r.status,
			strings.Contains(body, alphaCell), strings.Contains(body, "GPU 3: held by another project"))
	}
	if strings.Contains(body, "train-beta") || strings.Contains(body, `value="beta"`) || strings.Contains(body, "gpu-2") {
		t.Errorf("a researcher of alpha sees beta's workload, beta in the filter, or a node outside pool a100:\n%.4000s", body)
	}
	if !strings.Contains(body, `<option value="a100" selected>`) {
		t.Errorf("the pool filter is not kept from the URL")
	}
}
