package kube

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// BenchmarkFirstLists is what a starting scheduler does with the backlog's first lists
// (bench/backlog_test.go) before it can bind: 1,250 nodes × 8 GPUs, 5,000 Jobs and 10,000
// pending one-GPU pods (5,000 of the Jobs, 5,000 bare) taken into a fresh cache one informer
// event at a time, then the first cycle's snapshot and plan.
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
	var ingest, decide time.Duration
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
		decide += time.Since(ingested)
	}
	b.ReportMetric(ingest.Seconds()*1000/float64(b.N), "ingest-ms")
	b.ReportMetric(decide.Seconds()*1000/float64(b.N), "first-cycle-ms")
}
