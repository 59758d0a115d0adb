package conformance

import (
	"context"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// workloadOrg is what the workload checks submit to and what they submitted.
type workloadOrg struct {
	org
	submitted map[string]string // workload id by submission kind (trainings, workspaces, …)
}

// submission is a request body of Run:ai's WorkloadCreationMeta and the kind's spec.
func submission(name string, o *workloadOrg, cluster string, spec map[string]any) map[string]any {
	return map[string]any{"name": name, "useGivenNameAsPrefix": true, "projectId": o.projectID, "clusterId": cluster, "spec": spec}
}

// submitKind is the check of POST /api/v1/workloads/{kind}: the submission is accepted as the
// kind's Run:ai schema says.
func submitKind(kind string, spec map[string]any) func(t *testing.T, c *client, o *workloadOrg) {
	return func(t *testing.T, c *client, o *workloadOrg) {
		var w struct{ WorkloadID, ClusterID string }
		c.do(t, exchange{method: "POST", route: "/api/v1/workloads/" + kind, body: submission("conformance", o, c.clusterID(t, &o.org), spec), want: 202, out: &w})
		if w.WorkloadID == "" {
			t.Fatalf("the submitted %s has no workloadId", kind)
		}
		if w.ClusterID != c.clusterID(t, &o.org) {
			t.Errorf("the submitted %s's clusterId is %q, want the one cluster's %s", kind, w.ClusterID, c.clusterID(t, &o.org))
		}
		o.submitted[kind] = w.WorkloadID
	}
}

// byKind is a check of a submission route with a workload id of kind.
func byKind(method, kind, suffix string, want int) func(t *testing.T, c *client, o *workloadOrg) {
	return func(t *testing.T, c *client, o *workloadOrg) {
		id := o.submitted[kind]
		if id == "" {
			t.Fatalf("no %s was submitted", kind)
		}
		c.do(t, exchange{method: method, route: "/api/v1/workloads/" + kind + "/{workloadId}" + suffix, params: map[string]string{"workloadId": id}, want: want})
	}
}

var gpuSpec = map[string]any{"image": "busybox", "compute": map[string]any{"gpuDevicesRequest": 1}}

// checkedOnCluster are the shared pairs that need a cluster (the workloads and the nodes), called in order against one Arbiter on the
// local control plane.
var checkedOnCluster = []struct {
	route string
	check func(t *testing.T, c *client, o *workloadOrg)
}{
	{"GET /api/v1/nodes", func(t *testing.T, c *client, o *workloadOrg) {
		// the nodes are the scheduler's last cycle's: the pool made above places its node from
		// the next cycle on
		var got struct {
			Nodes []struct {
				Name, NodePool, Status string
				GPUs                   struct{ Allocatable, Allocated, Free int }
			}
		}
		poll.Until(t, "the nodes list shows the pool's node", time.Minute, func() bool {
			got.Nodes = nil
			c.do(t, exchange{method: "GET", route: "/api/v1/nodes", query: url.Values{"filterBy": {"nodePool==" + clusterPool.Name},
				"sortBy": {"name"}, "sortOrder": {"asc"}, "offset": {"0"}, "limit": {"10"}, "search": {""}}, want: 200, out: &got})
			return len(got.Nodes) > 0
		})
		if n := got.Nodes[0]; len(got.Nodes) != clusterPool.Nodes || n.Status != "Ready" || n.GPUs.Allocatable != clusterPool.GPUs ||
			n.GPUs.Allocated+n.GPUs.Free != clusterPool.GPUs {
			t.Errorf("the pool's nodes are %+v: want %d, Ready, with %d GPUs allocated or free", got.Nodes, clusterPool.Nodes, clusterPool.GPUs)
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/nodes", query: url.Values{"filterBy": {"name==" + got.Nodes[0].Name}}, want: 200})
	}},
	{"GET /api/v1/nodes/count", func(t *testing.T, c *client, o *workloadOrg) {
		counted(t, c, "/api/v1/nodes/count", url.Values{"filterBy": {"nodePool==" + clusterPool.Name}}, clusterPool.Nodes)
		counted(t, c, "/api/v1/nodes/count", url.Values{"filterBy": {"status==NotReady"}}, 0)
	}},
	{"POST /api/v1/workloads/trainings", submitKind("trainings", gpuSpec)},
	{"POST /api/v1/workloads/workspaces", submitKind("workspaces", gpuSpec)},
	{"POST /api/v1/workloads/distributed", submitKind("distributed", map[string]any{"image": "busybox", "numWorkers": 2,
		"compute": map[string]any{"gpuDevicesRequest": 1}})},
	{"POST /api/v1/workloads/inferences", submitKind("inferences", map[string]any{"image": "busybox", "servingPort": map[string]any{"container": 8000, "protocol": "http"},
		"compute": map[string]any{"gpuDevicesRequest": 1}})},
	{"GET /api/v1/workloads/trainings/{workloadId}", byKind("GET", "trainings", "", 200)},
	{"GET /api/v1/workloads/workspaces/{workloadId}", byKind("GET", "workspaces", "", 200)},
	{"GET /api/v1/workloads/distributed/{workloadId}", byKind("GET", "distributed", "", 200)},
	{"GET /api/v1/workloads/inferences/{workloadId}", byKind("GET", "inferences", "", 200)},
	{"GET /api/v1/workloads/count", func(t *testing.T, c *client, o *workloadOrg) {
		counted(t, c, "/api/v1/workloads/count", url.Values{"filterBy": {"projectId==" + o.projectID}}, len(o.submitted))
		counted(t, c, "/api/v1/workloads/count", url.Values{"filterBy": {"projectName==nothing-is-called-this"}}, 0)
		counted(t, c, "/api/v1/workloads/count", url.Values{"search": {"conformance"}}, len(o.submitted))
		counted(t, c, "/api/v1/workloads/count", url.Values{"search": {"conformance"}, "deleted": {"true"}}, 0) // none is deleted yet
	}},
	{"POST /api/v1/workloads/trainings/{workloadId}/suspend", byKind("POST", "trainings", "/suspend", 202)},
	{"POST /api/v1/workloads/trainings/{workloadId}/resume", byKind("POST", "trainings", "/resume", 202)},
	{"POST /api/v1/workloads/workspaces/{workloadId}/suspend", byKind("POST", "workspaces", "/suspend", 202)},
	{"POST /api/v1/workloads/workspaces/{workloadId}/resume", byKind("POST", "workspaces", "/resume", 202)},
	{"POST /api/v1/workloads/distributed/{workloadId}/suspend", byKind("POST", "distributed", "/suspend", 202)},
	{"POST /api/v1/workloads/distributed/{workloadId}/resume", byKind("POST", "distributed", "/resume", 202)},
	{"GET /api/v1/workloads/{workloadId}/events", func(t *testing.T, c *client, o *workloadOrg) {
		for kind, id := range o.submitted {
			var got struct {
				Events []struct {
					Type, ClusterID string
					InvolvedObject  struct{ UID string }
				}
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/workloads/{workloadId}/events", params: map[string]string{"workloadId": id}, want: 200, out: &got})
			if kind == "trainings" && len(got.Events) == 0 {
				t.Errorf("the training, stopped and run again above, has no events")
			}
			for _, e := range got.Events {
				if e.InvolvedObject.UID != id || e.ClusterID != c.clusterID(t, &o.org) || (e.Type != "Normal" && e.Type != "Warning") {
					t.Errorf("an event of the %s (%s) is %+v: want it about the workload, in the one cluster, Normal or Warning", kind, id, e)
				}
			}
		}
	}},
	{"DELETE /api/v1/workloads/trainings/{workloadId}", byKind("DELETE", "trainings", "", 202)},
	{"DELETE /api/v1/workloads/workspaces/{workloadId}", byKind("DELETE", "workspaces", "", 202)},
	{"DELETE /api/v1/workloads/distributed/{workloadId}", byKind("DELETE", "distributed", "", 202)},
	{"DELETE /api/v1/workloads/inferences/{workloadId}", byKind("DELETE", "inferences", "", 202)},
}

// TestWorkloadRoutesConform calls every route in checkedOnCluster against one Arbiter on the
// local control plane, with a node pool of its fake GPU nodes, a department and a project.
func TestWorkloadRoutesConform(t *testing.T) {
	t.Parallel()
	c := serveOnCluster(t)
	o := &workloadOrg{submitted: map[string]string{}}
	var pool struct{ ID string }
	c.arbiter(t, "POST", "/api/v1/node-pools", map[string]any{"name": clusterPool.Name, "labelKey": devcluster.LabelNodePool, "labelValue": clusterPool.Name}, &pool)
	var dept struct{ ID string }
	c.arbiter(t, "POST", "/api/v1/org-unit/departments", map[string]any{"name": "research", "resources": gpus(pool.ID, 4)}, &dept)
	const namespace = "runai-conformance-vision"
	kube := sharedCluster(t).Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var proj struct{ ID string }
	c.arbiter(t, "POST", "/api/v1/org-unit/projects", map[string]any{"name": "vision", "departmentId": dept.ID, "namespaces": []string{namespace},
		"resources": gpus(pool.ID, 4)}, &proj)
	o.poolID, o.departmentID, o.projectID = pool.ID, dept.ID, proj.ID
	for _, ch := range checkedOnCluster {
		t.Run(ch.route, func(t *testing.T) { ch.check(t, c, o) })
	}
}
