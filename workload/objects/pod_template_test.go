package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// Every builder's pods are set by the one PodTemplate: the same calls give a Job's and a
// Deployment's pods the same template, and each call returns the builder for chaining.
func TestPodTemplate_JobsAndDeploymentsSetTheirPodsAlike(t *testing.T) {
	job := Job("j", "ns").GPUs(2).CPU("4").Memory("8Gi").PodLabel("team", "vision").
		PodAnnotation("note", "x").SchedulerName("kai-scheduler").Container("trainer", "img:1").
		NoServiceAccountToken().Obj()
	dep := Deployment("d", "ns").GPUs(2).CPU("4").Memory("8Gi").PodLabel("team", "vision").
		PodAnnotation("note", "x").SchedulerName("kai-scheduler").Container("trainer", "img:1").
		NoServiceAccountToken().Obj()
	c := job.Spec.Template.Spec.Containers[0]
	if c.Name != "trainer" || c.Image != "img:1" || c.Resources.Limits[ResourceGPU] != c.Resources.Requests[ResourceGPU] ||
		c.Resources.Requests.Cpu().String() != "4" || c.Resources.Requests.Memory().String() != "8Gi" {
		t.Errorf("the Job's container is %+v", c)
	}
	if job.Spec.Template.Labels["team"] != "vision" || job.Spec.Template.Annotations["note"] != "x" ||
		job.Spec.Template.Spec.SchedulerName != "kai-scheduler" || *job.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Errorf("the Job's pod template is %+v", job.Spec.Template)
	}
	// The Deployment's template differs only where a Deployment's must: its selector's label
	// and its restart policy.
	want := job.Spec.Template.DeepCopy()
	want.Labels["app"] = "d"
	want.Spec.RestartPolicy = corev1.RestartPolicy("")
	if diff := cmp.Diff(want, &dep.Spec.Template); diff != "" {
		t.Errorf("the Deployment's pods differ from the Job's (-job +deployment):\n%s", diff)
	}
}
