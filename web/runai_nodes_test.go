package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
)

// runAINode is the part of Run:ai's Node these tests read, with Arbiter's GPU figures.
type runAINode struct {
	Name          string    `json:"name"`
	NodePool      string    `json:"nodePool"`
	Status        string    `json:"status"`
	ClusterUUID   string    `json:"clusterUuid"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	Unschedulable bool      `json:"unschedulable"`
	Taints        []struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Effect string `json:"effect"`
	} `json:"taints"`
	GPUs struct {
		Allocatable int `json:"allocatable"`
		Allocated   int `json:"allocated"`
		Free        int `json:"free"`
	} `json:"gpus"`
}

var cycleTime = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// nodesCycle is a last cycle of two pools' nodes: gpu-1 (a100, ready, 3 of 4 GPUs held: 2 by
// a workload, 1 by a pod Arbiter does not schedule), gpu-2 (no pool's label, not ready,
// tainted) and cpu-1 (a100, no GPUs).
func nodesCycle() fakeCycles {
	return fakeCycles{snap: &scheduler.Snapshot{
		Now:       cycleTime,
		NodePools: []scheduler.NodePool{{Name: "a100", LabelKey: "pool", LabelValue: "a100"}},
		Projects:  []scheduler.Project{{Name: "alpha"}},
		Nodes: []scheduler.Node{
			{Name: "gpu-1", Labels: map[string]string{"pool": "a100"}, Ready: true, Allocatable: scheduler.Resources{GPUs: 4}, Occupied: scheduler.Resources{GPUs: 1}},
			{Name: "gpu-2", Ready: false, Allocatable: scheduler.Resources{GPUs: 2}, Taints: []scheduler.Taint{{Key: "gpu", Value: "broken", Effect: "NoSchedule"}}},
			{Name: "cpu-1", Labels: map[string]string{"pool": "a100"}, Ready: true},
		},
		Workloads: []scheduler.Workload{{UID: "a", Namespace: "ml", Name: "train", Project: "alpha",
			Pods: []scheduler.Pod{{UID: "p", Namespace: "ml", Name: "train-0", NodeName: "gpu-1", Requests: scheduler.Resources{GPUs: 2}}}}},
	}}
}

// Run:ai's nodes list shows each node of the scheduler's last cycle as the Nodes page does:
// its pool by the cycle's rule, readiness, taints and GPUs allocatable, held and free; its
// count counts what the list shows for the same filterBy and search; a researcher reads what
// the Nodes page shows them, every node.
func TestRunAINodesAreTheNodesPageFigures(t *testing.T) {
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Cycles = nodesCycle()
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))

	nodes := decode[struct {
		Nodes []runAINode `json:"nodes"`
	}](t, get(t, srv, "/api/v1/nodes").body).Nodes
	type figures struct {
		Name, Pool, Status                   string
		Allocatable, Allocated, Free, Taints int
	}
	var got []figures
	for _, n := range nodes {
		if n.ClusterUUID == "" || !n.UpdatedAt.Equal(cycleTime) {
			t.Errorf("node %s has clusterUuid %q, updatedAt %v (the cycle's view is of %v)", n.Name, n.ClusterUUID, n.UpdatedAt, cycleTime)
		}
		got = append(got, figures{n.Name, n.NodePool, n.Status, n.GPUs.Allocatable, n.GPUs.Allocated, n.GPUs.Free, len(n.Taints)})
	}
	want := []figures{
		{"cpu-1", "a100", "Ready", 0, 0, 0, 0},
		{"gpu-1", "a100", "Ready", 4, 3, 1, 0},
		{"gpu-2", "", "NotReady", 2, 0, 2, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}

	for query, names := range map[string][]string{
		"?filterBy=nodePool==a100&sortBy=name&sortOrder=desc": {"gpu-1", "cpu-1"},
		"?filterBy=status==NotReady":                          {"gpu-2"},
		"?search=GPU&limit=1&offset=1":                        {"gpu-2"},
	} {
		listed := decode[struct {
			Nodes []runAINode `json:"nodes"`
		}](t, get(t, srv, "/api/v1/nodes"+query).body).Nodes
		var gotNames []string
		for _, n := range listed {
			gotNames = append(gotNames, n.Name)
		}
		if diff := cmp.Diff(names, gotNames); diff != "" {
			t.Errorf("GET /api/v1/nodes%s (-want +got):\n%s", query, diff)
		}
	}
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research"}`)
	alpha := create(t, srv, "/api/v1/org-unit/projects", `{"name":"alpha","departmentId":"`+dept+`"}`)
	researcher := newAPIKey(t, st, "researcher", "project", alpha)
	for query, want := range map[string]int{"": 3, "?filterBy=nodePool==a100": 2, "?search=gpu": 2} {
		if r := doAs(t, srv, researcher, "GET", "/api/v1/nodes/count"+query, "", ""); r.status != 200 ||
			decode[struct{ Count int }](t, r.body).Count != want {
			t.Errorf("a researcher's GET /api/v1/nodes/count%s = %d %s, want %d", query, r.status, r.body, want)
		}
	}
	if r := do(t, srv, "GET", "/api/v1/nodes?sortBy=gpuType", "", ""); r.status != 400 || !strings.Contains(string(r.body), "nodePool") {
		t.Errorf("sortBy=gpuType = %d %s, want a 400 naming the fields nodes sort by", r.status, r.body)
	}
}

// Without a cluster the Nodes page says no cluster is connected; the API lists no node.
func TestRunAINodesWithoutCluster(t *testing.T) {
	srv, _ := newAPI(t)
	if r := get(t, srv, "/api/v1/nodes"); r.status != 200 || string(r.body) != "{\"nodes\":[]}\n" {
		t.Errorf("GET /api/v1/nodes without a cluster = %d %s", r.status, r.body)
	}
	if r := get(t, srv, "/api/v1/nodes/count"); r.status != 200 || string(r.body) != "{\"count\":0}\n" {
		t.Errorf("GET /api/v1/nodes/count without a cluster = %d %s", r.status, r.body)
	}
}
