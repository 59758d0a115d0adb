package kube

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// BenchmarkFirstLists is what a starting scheduler does with the backlog's first lists
// (bench/backlog_test.go) before it can bind: 1,250 nodes × 8 GPUs, 5,000 Jobs and 10,000
// pending one-GPU pods (5,000 of the Jobs, 5,000 bare) taken into a fresh cache one informer
// event at a time, then the first cycle's snapshot and plan, and assuming its binds.
func BenchmarkFirstLists(b *testing.B) {
	const nodes, jobs, bare = 1250, 5000, 5000
	settings := &Settings{
		WorkloadTypes:    []scheduler.WorkloadType{{Name: "Job", Group: "batch", Category: "Train"}, {Name: "Pod", Category: "Train"}},
		Categories:       []scheduler.Category{{Name: "Train"}},
		NodePools:        []scheduler.NodePool{{Name: "a100", LabelKey: "pool", LabelValue: "a100"}},
		Departments:      []scheduler.Department{{Name: "dept", Quotas: map[string]scheduler.Quota{"a100": {Deserved: nodes * 8, Limit: scheduler.NoLimit}}}},
		Projects:         []scheduler.Project{{Name: "proj", Department: "dept", Quotas: map[string]scheduler.Quota{"a100": {Deserved: nodes * 8, Limit: scheduler.NoLimit}}}},
		NamespaceProject: map[string]string{"ns": "proj"},
	}
	var nodeObjs []*corev1.Node
	for i := range nodes {
		nodeObjs = append(nodeObjs, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "node-" + strconv.Itoa(i), Labels: map[string]string{"pool": "a100"}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"),
				corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"), "nvidia.com/gpu": resource.MustParse("8"),
			}, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		})
	}
	var owners []*owner
	var pods []*corev1.Pod
	for i := range jobs {
		name := "job-" + strconv.Itoa(i)
		job := objects.Job(name, "ns").UID("uid-" + name).Created(t0).Obj()
		owners = append(owners, ownerFromJob(job))
		ref := controllerRef("batch/v1", "Job", name, string(job.UID))
		p := gpuPod(name+"-abcde", "pod-"+name, 1, &ref)
		p.Labels = map[string]string{"job-name": name, "batch.kubernetes.io/job-name": name, "controller-uid": string(job.UID)}
		pods = append(pods, p)
	}
	for i := range bare {
		pods = append(pods, gpuPod("bare-"+strconv.Itoa(i), "bare-"+strconv.Itoa(i), 1, nil))
	}
	var ingest, decide, assume time.Duration
	for b.Loop() {
		began := time.Now()
		c := NewCache("arbiter")
		c.SetSettings(settings) // as Scheduler.Run does before it starts the informers
		for _, n := range nodeObjs {
			c.UpsertNode(n)
		}
		for _, o := range owners {
			c.UpsertOwner(o)
		}
		for _, p := range pods {
			c.UpsertPod(p)
		}
		ingested := time.Now()
		view := cycleView(c, t0.Add(time.Hour), settings)
		view.CompareWith(nil)
		plan := view.Snapshot.Plan()
		if len(plan.Binds) != jobs+bare {
			b.Fatalf("binds = %d, want %d", len(plan.Binds), jobs+bare)
		}
		ingest += ingested.Sub(began)
		decided := time.Now()
		decide += decided.Sub(ingested)
		// What apply does for each bind before it hands it to the workers.
		for _, bind := range plan.Binds {
			c.Assume(types.UID(bind.Pod.UID), bind.Node, t0.Add(time.Hour))
		}
		assume += time.Since(decided)
	}
	b.ReportMetric(ingest.Seconds()*1000/float64(b.N), "ingest-ms")
	b.ReportMetric(decide.Seconds()*1000/float64(b.N), "first-cycle-ms")
	b.ReportMetric(assume.Seconds()*1000/float64(b.N), "assume-all-ms")
}

// TestSnapshotSortsWhatTheFirstListsBrought: nodes and pods arrive one event at a time and in
// no order (as the informers' first lists and their watches bring them), and the writes leave
// the sorting to the snapshot. Every snapshot has every node, sorted by name, with what other
// schedulers' pods hold on it (S3), and every workload, sorted by UID, after a burst of
// arrivals, after one more arrival and after a node and a pod went.
func TestSnapshotSortsWhatTheFirstListsBrought(t *testing.T) {
	c := NewCache("arbiter")
	c.SetSettings(foreseeSettings())
	for _, i := range []int{3, 0, 2, 1} {
		c.UpsertNode(gpuNode("node-"+strconv.Itoa(i), 8))
	}
	other := gpuPod("other", "other", 2, nil)
	other.Spec.SchedulerName, other.Spec.NodeName = "default-scheduler", "node-2"
	c.UpsertPod(other)
	for _, i := range []int{40, 7, 99, 0, 13, 5, 61, 28, 33, 2} {
		c.UpsertPod(gpuPod("p"+strconv.Itoa(i), "uid-"+strconv.Itoa(i), 1, nil))
	}
	type seen struct {
		Nodes     []string
		Occupied  map[string]int64
		Workloads []string
	}
	look := func() seen {
		v := c.Snapshot(t0)
		s := seen{Occupied: map[string]int64{}}
		for _, n := range v.Snapshot.Nodes {
			s.Nodes = append(s.Nodes, n.Name)
			if n.Occupied.GPUs != 0 {
				s.Occupied[n.Name] = n.Occupied.GPUs
			}
		}
		for _, w := range v.Snapshot.Workloads {
			s.Workloads = append(s.Workloads, w.UID)
		}
		return s
	}
	want := seen{Nodes: []string{"node-0", "node-1", "node-2", "node-3"}, Occupied: map[string]int64{"node-2": 2},
		Workloads: []string{"uid-0", "uid-13", "uid-2", "uid-28", "uid-33", "uid-40", "uid-5", "uid-61", "uid-7", "uid-99"}}
	if d := cmp.Diff(want, look()); d != "" {
		t.Errorf("after the first lists (-want +got):\n%s", d)
	}
	c.UpsertPod(gpuPod("p3", "uid-3", 1, nil))
	want.Workloads = []string{"uid-0", "uid-13", "uid-2", "uid-28", "uid-3", "uid-33", "uid-40", "uid-5", "uid-61", "uid-7", "uid-99"}
	if d := cmp.Diff(want, look()); d != "" {
		t.Errorf("after one more pod (-want +got):\n%s", d)
	}
	c.DeleteNode("node-1")
	c.DeletePod("uid-40")
	c.DeletePod("other")
	want = seen{Nodes: []string{"node-0", "node-2", "node-3"}, Occupied: map[string]int64{},
		Workloads: []string{"uid-0", "uid-13", "uid-2", "uid-28", "uid-3", "uid-33", "uid-5", "uid-61", "uid-7", "uid-99"}}
	if d := cmp.Diff(want, look()); d != "" {
		t.Errorf("after a node and two pods went (-want +got):\n%s", d)
	}
}
