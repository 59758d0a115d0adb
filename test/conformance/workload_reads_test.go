package conformance

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// The Workload API's reads: the list and one workload in Run:ai's Workload shape, a
// workload's pods and history, and every pod the caller may see. They run after the
// submission checks have deleted what those submitted, so they submit a training of their own,
// wait until it runs, and read it (and the deleted ones, with deleted=true).
func init() {
	checkedOnCluster = append(checkedOnCluster, workloadReads...)
}

// readsKind is the key of the reads' own training in workloadOrg.submitted.
const readsKind = "reads"

// runAIWorkload are the fields of Run:ai's Workload the checks compare.
type runAIWorkload struct {
	ID, Name, Phase, K8sPhase, PriorityClassName, PriorityName, ClusterID, ProjectID, DepartmentID, Source string
	Priority, TenantID, RunningPods                                                                        int
	DeletedAt                                                                                              *time.Time
}

// readsTraining is the id of the reads' running training.
func readsTraining(t *testing.T, o *workloadOrg) string {
	t.Helper()
	id := o.submitted[readsKind]
	if id == "" {
		t.Fatal("the reads' training was not submitted")
	}
	return id
}

var workloadReads = []struct {
	route string
	check func(t *testing.T, c *client, o *workloadOrg)
}{
	{"GET /api/v1/workloads", func(t *testing.T, c *client, o *workloadOrg) {
		// Run:ai's deleted=true lists only deleted workloads: the four the submission checks
		// deleted, once their pods are gone (a deleted workload runs until then).
		deletedCount := len(o.submitted)
		var deleted struct{ Workloads []runAIWorkload }
		poll.Until(t, "the deleted workloads are listed with deleted=true", 2*time.Minute, func() bool {
			c.do(t, exchange{method: "GET", route: "/api/v1/workloads", query: url.Values{"deleted": {"true"}, "search": {"conformance"}, "sortBy": {"name"}}, want: 200, out: &deleted})
			return len(deleted.Workloads) == deletedCount
		})
		var w struct{ WorkloadID string }
		c.do(t, exchange{method: "POST", route: "/api/v1/workloads/trainings", body: submission("reads", o, c.clusterID(t, &o.org), gpuSpec), want: 202, out: &w})
		o.submitted[readsKind] = w.WorkloadID
		var running struct{ Workloads []runAIWorkload }
		poll.Until(t, "the reads' training runs, by Run:ai's phase", 2*time.Minute, func() bool {
			c.do(t, exchange{method: "GET", route: "/api/v1/workloads", query: url.Values{"filterBy": {"projectId==" + o.projectID + ",phase==Running"},
				"sortBy": {"createdAt"}, "sortOrder": {"desc"}, "offset": {"0"}, "limit": {"10"}}, want: 200, out: &running})
			return len(running.Workloads) == 1
		})
		if got := running.Workloads[0]; got.ID != w.WorkloadID || got.K8sPhase != "Running" || got.ClusterID != c.clusterID(t, &o.org) || got.TenantID != 1 {
			t.Errorf("the running workload is %+v: want the reads' training %s, Running, in the one cluster and tenant", got, w.WorkloadID)
		}
		for _, d := range deleted.Workloads {
			if d.DeletedAt == nil || d.ID == w.WorkloadID {
				t.Errorf("deleted=true lists %+v: want only deleted workloads, each with deletedAt", d)
			}
		}
		// Sorted by Run:ai's priority (a number) and paged one at a time, every page is one workload.
		var page struct {
			Workloads []runAIWorkload
			Next      *int
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads", query: url.Values{"deleted": {"true"}, "sortBy": {"priority"}, "offset": {"1"}, "limit": {"1"}}, want: 200, out: &page})
		if len(page.Workloads) != 1 || page.Next == nil || *page.Next != 2 {
			t.Errorf("the second page of one deleted workload is %+v, next %v: want one workload and next 2", page.Workloads, page.Next)
		}
		for _, filter := range []string{"priorityClassName==" + running.Workloads[0].PriorityClassName, "priority>=" + strconv.Itoa(running.Workloads[0].Priority),
			"departmentId==" + o.departmentID, "clusterId==" + c.clusterID(t, &o.org), "submittedBy=@admin", "nodepool==" + clusterPool.Name} {
			var got struct{ Workloads []runAIWorkload }
			c.do(t, exchange{method: "GET", route: "/api/v1/workloads", query: url.Values{"filterBy": {filter}}, want: 200, out: &got})
			if len(got.Workloads) != 1 || got.Workloads[0].ID != w.WorkloadID {
				t.Errorf("filterBy=%s lists %+v: want the running training alone", filter, got.Workloads)
			}
		}
	}},
	{"GET /api/v1/workloads/{workloadId}", func(t *testing.T, c *client, o *workloadOrg) {
		// its pod runs from the next cycle after the kubelet says so
		var got runAIWorkload
		poll.Until(t, "the training's pod runs", time.Minute, func() bool {
			c.do(t, exchange{method: "GET", route: "/api/v1/workloads/{workloadId}", params: map[string]string{"workloadId": readsTraining(t, o)}, want: 200, out: &got})
			return got.RunningPods > 0
		})
		var prios struct{ Priorities []struct{ Value int } }
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-priorities", query: url.Values{"filterBy": {"name==" + got.PriorityClassName}}, want: 200, out: &prios})
		if len(prios.Priorities) != 1 || got.Priority != prios.Priorities[0].Value || got.PriorityName != got.PriorityClassName {
			t.Errorf("the training's priority is %d (%q, %q); the dictionary holds %v: want its value and name", got.Priority, got.PriorityClassName, got.PriorityName, prios.Priorities)
		}
		if got.Phase != "Running" || got.RunningPods != 1 || got.DepartmentID != o.departmentID || got.ProjectID != o.projectID || got.Source != "Control-plane" || got.DeletedAt != nil {
			t.Errorf("the running training is %+v: want Running with one running pod, in vision of research, from the control plane, not deleted", got)
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/{workloadId}", params: map[string]string{"workloadId": foreignClusterID}, want: 404})
		var training struct{ RunningPods int }
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/trainings/{workloadId}", params: map[string]string{"workloadId": got.ID}, want: 200, out: &training})
		if training.RunningPods != 1 {
			t.Errorf("the training by its kind's route has runningPods %d, want 1 as the Workload API", training.RunningPods)
		}
	}},
	{"GET /api/v1/workloads/{workloadId}/pods", func(t *testing.T, c *client, o *workloadOrg) {
		id := readsTraining(t, o)
		var got struct {
			Pods []struct {
				ID, Name, WorkloadID, ClusterID, NodeName, K8sPhase string
				Containers                                          []struct{ Name, Image string }
			}
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/{workloadId}/pods", params: map[string]string{"workloadId": id},
			query: url.Values{"offset": {"0"}, "limit": {"5"}}, want: 200, out: &got})
		if len(got.Pods) != 1 {
			t.Fatalf("the training's pods are %+v: want its one pod", got.Pods)
		}
		if p := got.Pods[0]; p.WorkloadID != id || p.ClusterID != c.clusterID(t, &o.org) || p.NodeName == "" || p.K8sPhase != "Running" ||
			len(p.Containers) != 1 || p.Containers[0].Image != "busybox" {
			t.Errorf("the training's pod is %+v: want it of the training, in the one cluster, Running on a node, one busybox container", p)
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/{workloadId}/pods", params: map[string]string{"workloadId": foreignClusterID}, want: 404})
	}},
	{"GET /api/v1/workloads/{workloadId}/history", func(t *testing.T, c *client, o *workloadOrg) {
		id := readsTraining(t, o)
		var all struct {
			Records []struct {
				Meta struct{ Type string }
				Spec struct {
					PhaseUpdate *struct{ Phase string }
					Event       *struct{ Type, Message string }
				}
			}
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/{workloadId}/history", params: map[string]string{"workloadId": id}, want: 200, out: &all})
		phases := []string{}
		for _, r := range all.Records {
			if r.Meta.Type == "PhaseUpdate" && r.Spec.PhaseUpdate != nil {
				phases = append(phases, r.Spec.PhaseUpdate.Phase)
			}
		}
		if len(phases) < 2 || phases[0] != "Pending" || phases[len(phases)-1] != "Running" {
			t.Errorf("the training's phase updates are %v: want Pending first and Running last", phases)
		}
		var page struct {
			Records []any
			Next    *int
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/{workloadId}/history", params: map[string]string{"workloadId": id},
			query: url.Values{"offset": {"0"}, "limit": {"1"}}, want: 200, out: &page})
		if len(page.Records) != 1 || page.Next == nil || *page.Next != 1 {
			t.Errorf("the first page of one record is %d records, next %v: want one and next 1", len(page.Records), page.Next)
		}
	}},
	{"GET /api/v1/workloads/pods", func(t *testing.T, c *client, o *workloadOrg) {
		id := readsTraining(t, o)
		var got struct {
			Pods []struct{ WorkloadID, WorkloadName, ProjectName string }
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/pods", query: url.Values{"filterBy": {"workloadId==" + id}, "sortBy": {"createdAt"},
			"sortOrder": {"asc"}, "offset": {"0"}, "limit": {"10"}, "verbosity": {"full"}}, want: 200, out: &got})
		if len(got.Pods) != 1 || got.Pods[0].WorkloadID != id || got.Pods[0].ProjectName != "vision" || got.Pods[0].WorkloadName == "" {
			t.Errorf("the pods of the training, in full, are %+v: want its one pod with the workload's and project's names", got.Pods)
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workloads/pods", query: url.Values{"sortBy": {"nodeName"}, "sortOrder": {"desc"}}, want: 200})
	}},
	{"GET /api/v1/workloads/pods/count", func(t *testing.T, c *client, o *workloadOrg) {
		counted(t, c, "/api/v1/workloads/pods/count", url.Values{"filterBy": {"workloadId==" + readsTraining(t, o)}}, 1)
		counted(t, c, "/api/v1/workloads/pods/count", url.Values{"filterBy": {"nodeName==no-node-is-called-this"}}, 0)
		c.do(t, exchange{method: "DELETE", route: "/api/v1/workloads/trainings/{workloadId}", params: map[string]string{"workloadId": readsTraining(t, o)}, want: 202})
	}},
}
