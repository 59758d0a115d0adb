package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A GPU Job for Arbiter: a gang of pods with their GPUs, never retried, and an eviction by
// Arbiter (DisruptionTarget) is not a failure of the Job.
func TestJob(t *testing.T) {
	two, four, zero := int32(2), int32(4), int32(0)
	gpus := resource.MustParse("2")
	want := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "vision",
			Labels: map[string]string{"priorityClassName": "low", "kai.scheduler/preemptibility": "preemptible"}},
		Spec: batchv1.JobSpec{
			Parallelism: &four, Completions: &four, BackoffLimit: &zero,
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"arbiter.dev/run-seconds": "60"}},
				Spec: corev1.PodSpec{SchedulerName: "arbiter", RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "main", Image: "example.invalid/train:1", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), ResourceGPU: gpus},
						Limits:   corev1.ResourceList{ResourceGPU: gpus},
					}}},
				},
			},
		},
	}
	got := Job("train", "vision").Pods(4).GPUs(2).CPU("1").Priority("low").Preemptible().
		PodAnnotation("arbiter.dev/run-seconds", "60").Obj()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}

	d := Deployment("serve", "ads").Replicas(two).GPUs(1).Label("team", "ads").Obj()
	if *d.Spec.Replicas != 2 || d.Spec.Selector.MatchLabels["app"] != "serve" || d.Spec.Template.Labels["app"] != "serve" ||
		d.Labels["team"] != "ads" || d.Spec.Template.Labels["team"] != "ads" || d.Spec.Template.Spec.SchedulerName != "arbiter" {
		t.Errorf("deployment %+v", d)
	}
	if q := d.Spec.Template.Spec.Containers[0].Resources.Limits[ResourceGPU]; q.Value() != 1 {
		t.Errorf("deployment GPUs %v", q)
	}
}
