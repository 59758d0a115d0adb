package native

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// This file decides what a distributed training is made as, and builds and reads back the
// PyTorchJob it is made as when the cluster runs Kubeflow training-operator. The field names
// are training-operator's (kubeflow.org/v1, v1.9): spec.pytorchReplicaSpecs.Master and .Worker,
// each with replicas, restartPolicy and template, and spec.runPolicy.suspend, its switch.

// MadeAs is the object a distributed training is made as, and why, in words the Submit page
// and the submission's answer show.
type MadeAs struct {
	Object   string // "PyTorchJob" or "Job"
	APIGroup string // "kubeflow.org" or "batch"
	Reason   string
}

// The two objects a distributed training is made as.
var (
	AsPyTorchJob = MadeAs{Object: "PyTorchJob", APIGroup: "kubeflow.org",
		Reason: "PyTorchJob: the cluster runs Kubeflow training-operator"}
	AsIndexedJob = MadeAs{Object: "Job", APIGroup: "batch",
		Reason: "indexed Job: no PyTorchJob CRD is served"}
)

// DistributedMadeAs is what a distributed training is made as: a PyTorchJob, a master and
// numWorkers workers that training-operator runs with their rendezvous set up, when the
// cluster serves training-operator's PyTorchJob; else an indexed Job of numWorkers pods with
// a headless Service, which needs nothing but Kubernetes.
func DistributedMadeAs(servesPyTorchJobs bool) MadeAs {
	if servesPyTorchJobs {
		return AsPyTorchJob
	}
	return AsIndexedJob
}

// PyTorchJobResource is training-operator's PyTorchJob resource.
const (
	PyTorchJobGroup    = "kubeflow.org"
	PyTorchJobVersion  = "v1"
	PyTorchJobResource = "pytorchjobs"
	// pyTorchContainer is the container training-operator gives the rendezvous' environment
	// (MASTER_ADDR, WORLD_SIZE, RANK) and reads the exit code of.
	pyTorchContainer = "pytorch"
)

// pyTorchJob builds the PyTorchJob of a distributed training: a Master of one pod and Worker
// of numWorkers pods, each pod as the indexed Job's (Arbiter's scheduler name, the labels, the
// GPUs asked), restarted on failure by the controller. Its gang is every pod (S5 reads the
// replicas), so no min-members annotation is needed.
func (w *Workload) pyTorchJob() *unstructured.Unstructured {
	meta := w.objectMeta()
	replica := func(n int32) map[string]any {
		spec := w.podSpec(corev1.RestartPolicyOnFailure, corev1.PodSpec{Containers: []corev1.Container{{}}})
		spec.Containers[0].Name = pyTorchContainer
		spec.RestartPolicy = "" // the replica's restartPolicy sets it
		t := corev1.PodTemplateSpec{ObjectMeta: w.podMeta(nil), Spec: spec}
		template, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&t)
		if err != nil { // a PodTemplateSpec always converts
			panic(err)
		}
		delete(template, "metadata") // creationTimestamp: null
		template["metadata"] = map[string]any{"labels": stringMap(t.Labels)}
		return map[string]any{"replicas": int64(n), "restartPolicy": "OnFailure", "template": template}
	}
	metadata := map[string]any{"name": meta.Name, "namespace": meta.Namespace, "labels": stringMap(meta.Labels)}
	if len(meta.Annotations) > 0 {
		metadata["annotations"] = stringMap(meta.Annotations)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": PyTorchJobGroup + "/" + PyTorchJobVersion,
		"kind":       "PyTorchJob",
		"metadata":   metadata,
		"spec": map[string]any{
			"runPolicy": map[string]any{"suspend": false},
			"pytorchReplicaSpecs": map[string]any{
				"Master": replica(1),
				"Worker": replica(w.Workers),
			},
		},
	}}
}

// pyTorchJobRequest reads back what a PyTorchJob was built from: its labels, its Worker's
// template and count (numWorkers); false when it has no Worker template.
func pyTorchJobRequest(u *unstructured.Unstructured) (labels map[string]string, pod corev1.PodSpec, workers int, ok bool) {
	worker, found, _ := unstructured.NestedMap(u.Object, "spec", "pytorchReplicaSpecs", "Worker")
	if !found {
		return nil, pod, 0, false
	}
	raw, found, _ := unstructured.NestedMap(worker, "template")
	var t corev1.PodTemplateSpec
	if !found || runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &t) != nil {
		return nil, pod, 0, false
	}
	n, found, _ := unstructured.NestedInt64(worker, "replicas")
	if !found {
		n = 1
	}
	return u.GetLabels(), t.Spec, int(n), true
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
