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
// plane: Kubeflow training-operator runs its PyTorchJobs.
var Operators = []string{devcluster.OperatorTrainingOperator}

var pyTorchJobs = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}

// The demo's distributed training: one PyTorchJob at a time in nlp, a master and a worker of 4
// GPUs each, which its controller turns into two pods that Arbiter places as one gang.
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
			"template": map[string]any{
				"metadata": map[string]any{
					"labels":      map[string]any{Label: "true"},
					"annotations": map[string]any{devcluster.AnnotationRunSeconds: strconv.Itoa(pyTorchRunSeconds)},
				},
				"spec": map[string]any{
					"schedulerName":                schedulerName,
					"automountServiceAccountToken": false,
					"containers": []any{map[string]any{
						"name":  "pytorch", // the container name training-operator looks for
						"image": "example.invalid/demo/pytorch-ddp-" + role + ":1",
						"resources": map[string]any{
							"requests": map[string]any{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": strconv.Itoa(pyTorchGPUs)},
							"limits":   map[string]any{"nvidia.com/gpu": strconv.Itoa(pyTorchGPUs)},
						},
					}},
				},
			},
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1",
		"kind":       "PyTorchJob",
		"metadata": map[string]any{
			"generateName": pyTorchPrefix,
			"namespace":    pyTorchProject,
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

// distributed submits the demo's PyTorchJob when none of them is unfinished. On a cluster
// that does not serve PyTorchJobs (no training-operator) it does nothing, and says so once.
func (d *demoRunner) distributed(ctx context.Context) {
	if d.dyn == nil || d.noPyTorchJobs {
		return
	}
	list, err := d.dyn.Resource(pyTorchJobs).Namespace(pyTorchProject).List(ctx, metav1.ListOptions{LabelSelector: Label + "=true"})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		d.noPyTorchJobs = true
		d.log.Info("demo: the cluster serves no PyTorchJobs (Kubeflow training-operator); the demo runs no distributed training")
		return
	}
	if err != nil {
		d.warn(ctx, "listing demo PyTorchJobs", err)
		return
	}
	for i := range list.Items {
		if !kubeflowJobFinished(&list.Items[i]) {
			return
		}
	}
	created, err := d.dyn.Resource(pyTorchJobs).Namespace(pyTorchProject).Create(ctx, PyTorchJob(d.schedulerName), metav1.CreateOptions{})
	if err != nil {
		d.warn(ctx, "submitting a demo PyTorchJob", err)
		return
	}
	d.log.Debug("demo PyTorchJob submitted", "pytorchjob", fmt.Sprintf("%s/%s", pyTorchProject, created.GetName()))
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
