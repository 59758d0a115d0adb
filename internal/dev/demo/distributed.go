package demo

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/scheduler"
)

// Operators are the operators the demo's distributed training needs on the local control
// plane: Kubeflow training-operator runs its PyTorchJobs, JobSet's controller its JobSets.
var Operators = []string{devcluster.OperatorTrainingOperator, devcluster.OperatorJobSet}

// distributedKind is a kind of distributed training the demo keeps one of at a time, run by
// its operator's controller.
type distributedKind struct {
	kind     string // "PyTorchJob"
	operator string // what runs it, as the demo's log says
	gvr      schema.GroupVersionResource
	project  string
	build    func(schedulerName string) *unstructured.Unstructured
	finished func(*unstructured.Unstructured) bool
}

// distributedKinds are the demo's distributed trainings: a PyTorchJob in nlp and a JobSet in
// ads (a project that terminates what it loses, where vision would suspend).
var distributedKinds = []distributedKind{
	{kind: "PyTorchJob", operator: "Kubeflow training-operator", gvr: pyTorchJobs, project: pyTorchProject, build: PyTorchJob, finished: kubeflowJobFinished},
	{kind: "JobSet", operator: "JobSet's controller", gvr: jobSets, project: jobSetProject, build: JobSet, finished: jobSetFinished},
}

var pyTorchJobs = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}

// The demo's distributed training: one PyTorchJob at a time in nlp, a master and a worker of 4
// GPUs each, which its controller turns into two pods that Arbiter places as one gang,
// preferably in one rack of the demo's topology: it asks so in KAI's spelling on the job
// (kai.scheduler/topology and topology-preferred-placement, S29).
const (
	pyTorchProject    = "nlp"
	pyTorchPrefix     = "nlp-pytorch-ddp-"
	pyTorchGPUs       = 4
	pyTorchRunSeconds = 240
)

// PyTorchJob is the demo's distributed training job, its pods for schedulerName.
func PyTorchJob(schedulerName string) *unstructured.Unstructured {
	replica := func(role string) map[string]any {
		return map[string]any{
			"replicas":      int64(1),
			"restartPolicy": "OnFailure",
			// pytorch: the container name training-operator looks for
			"template": podTemplate(schedulerName, "pytorch", "example.invalid/demo/pytorch-ddp-"+role+":1", pyTorchGPUs, pyTorchRunSeconds, ""), // its replica spec has the restart policy
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1",
		"kind":       "PyTorchJob",
		"metadata": map[string]any{
			"generateName": pyTorchPrefix,
			"namespace":    pyTorchProject,
			"annotations": map[string]any{
				"kai.scheduler/topology":                     TopologyName,
				"kai.scheduler/topology-preferred-placement": devcluster.LabelTopologyRack,
			},
			"labels": map[string]any{
				Label:                         "true",
				scheduler.LabelPriority:       "medium",
				scheduler.LabelPreemptibility: string(scheduler.Preemptible),
			},
		},
		"spec": map[string]any{
			"runPolicy": map[string]any{"ttlSecondsAfterFinished": int64(demoTTL)},
			"pytorchReplicaSpecs": map[string]any{
				"Master": replica("master"),
				"Worker": replica("worker"),
			},
		},
	}}
}

// distributed submits each of the demo's distributed trainings when none of its kind is
// unfinished. On a cluster that does not serve a kind (its operator is not there) it submits
// none of it, and says so once.
func (d *demoRunner) distributed(ctx context.Context) {
	if d.dyn == nil {
		return
	}
	for _, k := range distributedKinds {
		d.oneAtATime(ctx, k)
	}
}

func (d *demoRunner) oneAtATime(ctx context.Context, k distributedKind) {
	if d.notServed[k.kind] {
		return
	}
	list, err := d.dyn.Resource(k.gvr).Namespace(k.project).List(ctx, metav1.ListOptions{LabelSelector: Label + "=true"})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		if d.notServed == nil {
			d.notServed = map[string]bool{}
		}
		d.notServed[k.kind] = true // one entry per distributed kind: bounded
		d.log.Info("demo: the cluster serves no "+k.kind+"s ("+k.operator+"); the demo runs none", "kind", k.kind)
		return
	}
	if err != nil {
		d.warn(ctx, "listing demo "+k.kind+"s", err)
		return
	}
	for i := range list.Items {
		if !k.finished(&list.Items[i]) {
			return
		}
	}
	created, err := d.dyn.Resource(k.gvr).Namespace(k.project).Create(ctx, k.build(d.schedulerName), metav1.CreateOptions{})
	if err != nil {
		d.warn(ctx, "submitting a demo "+k.kind, err)
		return
	}
	d.log.Debug("demo "+k.kind+" submitted", "object", fmt.Sprintf("%s/%s", k.project, created.GetName()))
}

// kubeflowJobFinished reports whether a Kubeflow job has the condition Succeeded or Failed.
func kubeflowJobFinished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == "Succeeded" || m["type"] == "Failed") && m["status"] == "True" {
			return true
		}
	}
	return false
}

// podTemplate is the pod template of a demo distributed job's pods: one container asking for
// gpus, run for runSeconds by the local cluster (devcluster.AnnotationRunSeconds), for
// schedulerName, with restartPolicy unless it is empty.
func podTemplate(schedulerName, container, image string, gpus, runSeconds int, restartPolicy string) map[string]any {
	t := map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{Label: "true"},
			"annotations": map[string]any{devcluster.AnnotationRunSeconds: strconv.Itoa(runSeconds)},
		},
		"spec": map[string]any{
			"schedulerName":                schedulerName,
			"automountServiceAccountToken": false,
			"containers": []any{map[string]any{
				"name":  container,
				"image": image,
				"resources": map[string]any{
					"requests": map[string]any{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": strconv.Itoa(gpus)},
					"limits":   map[string]any{"nvidia.com/gpu": strconv.Itoa(gpus)},
				},
			}},
		},
	}
	if restartPolicy != "" {
		t["spec"].(map[string]any)["restartPolicy"] = restartPolicy
	}
	return t
}
