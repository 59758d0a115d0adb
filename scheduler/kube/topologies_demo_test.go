package kube

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/internal/dev/demo"
	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/scheduler"
)

// TestS29_TheDemosTrainingsAskForOneRack: on the local cluster's a100 nodes (their rack and
// block labels) with the demo's organization and topology, the demo's JobSet, whose pod
// template requires one rack in Kueue's spelling, and its PyTorchJob, which prefers one in KAI's,
// are each placed inside one rack of topology racks, as docs/demo.md says.
func TestS29_TheDemosTrainingsAskForOneRack(t *testing.T) {
	c := NewCache("arbiter")
	pool := devcluster.Pool{Name: "a100", Nodes: 4, GPUs: 8}
	for i := range pool.Nodes {
		n := pool.Node(i)
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}} // as kwok makes it
		c.UpsertNode(n)
	}
	add := func(u *unstructured.Unstructured, uid, namespace string, pods []podOf) {
		u.SetName(strings.TrimSuffix(u.GetGenerateName(), "-"))
		u.SetUID(types.UID(uid))
		u.SetNamespace(namespace)
		c.UpsertOwner(ownerFrom(u))
		ref := controllerRef(u.GetAPIVersion(), u.GetKind(), u.GetName(), uid)
		for i, p := range pods {
			pod := gpuPod(u.GetName()+"-"+strconv.Itoa(i), uid+"-"+strconv.Itoa(i), p.gpus, &ref)
			pod.Namespace, pod.Labels, pod.Annotations = namespace, p.labels, p.annotations
			c.UpsertPod(pod)
		}
	}
	jobSet := demo.JobSet("arbiter")
	replicated, _, _ := unstructured.NestedSlice(jobSet.Object, "spec", "replicatedJobs")
	annotations, _, _ := unstructured.NestedStringMap(replicated[0].(map[string]any), "template", "spec", "template", "metadata", "annotations")
	workers := map[string]string{"jobset.sigs.k8s.io/replicatedjob-name": "workers"}
	add(jobSet, "js", "ads", []podOf{{2, workers, annotations}, {2, workers, annotations}})
	add(demo.PyTorchJob("arbiter"), "pt", "nlp", []podOf{
		{4, map[string]string{"training.kubeflow.org/replica-type": "master"}, nil},
		{4, map[string]string{"training.kubeflow.org/replica-type": "worker"}, nil},
	})

	view := cycleView(c, t0.Add(time.Hour), simSettings())
	plan := view.Snapshot.Plan()
	var got []scheduler.TopologyPlacement
	for _, p := range plan.Topology {
		p.Domain = "" // which rack is the search's choice; that it is one rack is the point
		got = append(got, p)
	}
	want := []scheduler.TopologyPlacement{
		{Workload: "js", PodSet: "workers", Topology: demo.TopologyName, Required: true, Level: devcluster.LabelTopologyRack},
		{Workload: "pt", Topology: demo.TopologyName, Level: devcluster.LabelTopologyRack},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("where the demo's trainings are placed (-want +got):\n%s\nplan: %d binds, pending %+v", d, len(plan.Binds), plan.Pending)
	}
}

// podOf is one pod of a demo owner: its GPUs, labels and annotations.
type podOf struct {
	gpus        int64
	labels      map[string]string
	annotations map[string]string
}
