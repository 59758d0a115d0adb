package kube

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestS24_AKindsOutcomeEndsItsWorkload: a workload of a custom kind that completed or failed by
// its controller's own status is finished (its record ends, with the controller's time), not
// "between pods" forever as a live owner without pods: a JobSet's and a TrainJob's Completed /
// Complete or Failed condition, a Kubeflow job's Succeeded or Failed, a RayJob's deployment
// status Complete or Failed.
func TestS24_AKindsOutcomeEndsItsWorkload(t *testing.T) {
	at := "2026-11-26T10:36:52Z"
	ended, _ := time.Parse(time.RFC3339, at)
	condition := func(kind string) map[string]any {
		return map[string]any{"conditions": []any{
			map[string]any{"type": "Suspended", "status": "False", "lastTransitionTime": "2026-11-26T10:00:00Z"},
			map[string]any{"type": kind, "status": "True", "lastTransitionTime": at},
		}}
	}
	for _, tc := range []struct {
		file           string
		status         map[string]any
		finished, fail bool
	}{
		{"jobset.yaml", condition("Completed"), true, false},
		{"jobset.yaml", condition("Failed"), true, true},
		{"jobset.yaml", map[string]any{"conditions": []any{map[string]any{"type": "Completed", "status": "False"}}}, false, false},
		{"trainjob.yaml", condition("Complete"), true, false},
		{"pytorchjob.yaml", condition("Succeeded"), true, false},
		{"mpijob-v1.yaml", condition("Failed"), true, true},
		{"pytorchjob.yaml", condition("Running"), false, false},
		{"rayjob.yaml", map[string]any{"jobDeploymentStatus": "Complete", "endTime": at}, true, false},
		{"rayjob.yaml", map[string]any{"jobDeploymentStatus": "Running"}, false, false},
	} {
		u := readKind(t, tc.file)
		obj := u.DeepCopy()
		_ = unstructured.SetNestedField(obj.Object, tc.status, "status")
		o := ownerFrom(obj)
		if o.Finished != tc.finished || o.Failed != tc.fail || tc.finished && !o.Ended.Equal(ended) {
			t.Errorf("%s with status %v: finished %v failed %v ended %s; want %v %v at %s", tc.file, tc.status, o.Finished, o.Failed, o.Ended, tc.finished, tc.fail, at)
		}
	}
}
