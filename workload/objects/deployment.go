package objects

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeploymentWrapper builds a Deployment; Obj returns it.
type DeploymentWrapper struct {
	appsv1.Deployment
	PodTemplate[*DeploymentWrapper]
}

// Deployment starts a Deployment of one replica for Arbiter, its pods selected by the label
// app=name, with one container that asks for nothing (no GPU).
func Deployment(name, namespace string) *DeploymentWrapper {
	one := int32(1)
	sel := map[string]string{"app": name}
	d := &DeploymentWrapper{Deployment: appsv1.Deployment{
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
	d.PodTemplate = podTemplate(d, &d.Spec.Template)
	return d
}

// Obj is the Deployment built.
func (d *DeploymentWrapper) Obj() *appsv1.Deployment { return &d.Deployment }

// Replicas sets how many pods it runs.
func (d *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper { d.Spec.Replicas = &n; return d }

// Label sets a label of the Deployment and of its pods.
func (d *DeploymentWrapper) Label(k, v string) *DeploymentWrapper {
	d.ObjectMeta.Labels = set(d.ObjectMeta.Labels, k, v)
	d.Spec.Template.Labels = set(d.Spec.Template.Labels, k, v)
	return d
}
