package objects

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeploymentWrapper builds a Deployment; Obj returns it.
type DeploymentWrapper struct{ appsv1.Deployment }

// Deployment starts a Deployment of one replica for Arbiter, its pods selected by the label
// app=name, with one container that asks for nothing (no GPU).
func Deployment(name, namespace string) *DeploymentWrapper {
	one := int32(1)
	sel := map[string]string{"app": name}
	return &DeploymentWrapper{appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       podSpec("main", "example.invalid/"+name+":1", "", 0),
			},
		},
	}}
}

// Obj is the Deployment built.
func (d *DeploymentWrapper) Obj() *appsv1.Deployment { return &d.Deployment }

// Replicas sets how many pods it runs.
func (d *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper { d.Spec.Replicas = &n; return d }

// GPUs sets each pod's GPUs, requested and limited.
func (d *DeploymentWrapper) GPUs(n int64) *DeploymentWrapper {
	setGPUs(&d.Spec.Template.Spec, n)
	return d
}

// CPU sets each pod's CPU request, a quantity such as "2".
func (d *DeploymentWrapper) CPU(q string) *DeploymentWrapper {
	request(&d.Spec.Template.Spec, corev1.ResourceCPU, q)
	return d
}

// Memory sets each pod's memory request, a quantity such as "8Gi".
func (d *DeploymentWrapper) Memory(q string) *DeploymentWrapper {
	request(&d.Spec.Template.Spec, corev1.ResourceMemory, q)
	return d
}

// Label sets a label of the Deployment and of its pods.
func (d *DeploymentWrapper) Label(k, v string) *DeploymentWrapper {
	d.ObjectMeta.Labels = set(d.ObjectMeta.Labels, k, v)
	d.Spec.Template.Labels = set(d.Spec.Template.Labels, k, v)
	return d
}

// SchedulerName sets the pods' spec.schedulerName.
func (d *DeploymentWrapper) SchedulerName(name string) *DeploymentWrapper {
	d.Spec.Template.Spec.SchedulerName = name
	return d
}

// Container names the pods' container and its image.
func (d *DeploymentWrapper) Container(name, image string) *DeploymentWrapper {
	c := &d.Spec.Template.Spec.Containers[0]
	c.Name, c.Image = name, image
	return d
}

// NoServiceAccountToken keeps the service account token out of the pods.
func (d *DeploymentWrapper) NoServiceAccountToken() *DeploymentWrapper {
	no := false
	d.Spec.Template.Spec.AutomountServiceAccountToken = &no
	return d
}
