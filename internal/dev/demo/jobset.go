package demo

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/scheduler"
)

var jobSets = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

// The demo's JobSet: one at a time in ads, a replicated job of two Jobs of one pod of 2 GPUs
// each, which JobSet's controller makes into Jobs and the Job controller into pods, that
// Arbiter places as one gang (replicas × parallelism, S5), both pods in one rack: its pod
// template asks so in Kueue's spelling (kueue.x-k8s.io/podset-required-topology, S29).
const (
	jobSetProject    = "ads"
	jobSetPrefix     = "ads-jobset-sweep-"
	jobSetReplicas   = 2
	jobSetGPUs       = 2
	jobSetRunSeconds = 180
)

// JobSet is the demo's JobSet (jobset.x-k8s.io/v1alpha2), its pods for schedulerName.
func JobSet(schedulerName string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata": map[string]any{
			"generateName": jobSetPrefix,
			"namespace":    jobSetProject,
			"labels": map[string]any{
				Label:                         "true",
				scheduler.LabelPriority:       "medium-low",
				scheduler.LabelPreemptibility: string(scheduler.Preemptible),
			},
		},
		"spec": map[string]any{
			"ttlSecondsAfterFinished": int64(demoTTL),
			"replicatedJobs": []any{map[string]any{
				"name":     "workers",
				"replicas": int64(jobSetReplicas),
				"template": map[string]any{"spec": map[string]any{
					"parallelism":  int64(1),
					"completions":  int64(1),
					"backoffLimit": int64(0),
					"template":     inOneRack(podTemplate(schedulerName, "main", "example.invalid/demo/sweep:1", jobSetGPUs, jobSetRunSeconds, "Never")),
				}},
			}},
		},
	}}
}

// jobSetFinished reports whether a JobSet has the condition Completed or Failed.
func jobSetFinished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == "Completed" || m["type"] == "Failed") && m["status"] == "True" {
			return true
		}
	}
	return false
}

// inOneRack is a pod template that asks, in Kueue's spelling, that its pods go into one rack.
func inOneRack(template map[string]any) map[string]any {
	annotations := template["metadata"].(map[string]any)["annotations"].(map[string]any)
	annotations["kueue.x-k8s.io/podset-required-topology"] = devcluster.LabelTopologyRack
	return template
}
