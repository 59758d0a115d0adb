package objects

import corev1 "k8s.io/api/core/v1"

// PodTemplate is the part every workload's builder shares: its pods' template. A builder
// embeds it over its object's template, with itself as W, so that each setter returns the
// builder for chaining: objects.Job(...).GPUs(2).CPU("4") is a *JobWrapper all along. A kind
// with several templates (a JobSet's replicated jobs, a LeaderWorkerSet's leader and workers,
// a RayCluster's head and worker groups) embeds one for its main template and offers the others
// by name.
type PodTemplate[W any] struct {
	self     W
	template *corev1.PodTemplateSpec
}

func podTemplate[W any](self W, t *corev1.PodTemplateSpec) PodTemplate[W] {
	return PodTemplate[W]{self: self, template: t}
}

// GPUs sets each pod's GPUs, requested and limited.
func (p PodTemplate[W]) GPUs(n int64) W { setGPUs(&p.template.Spec, n); return p.self }

// CPU sets each pod's CPU request, a quantity such as "2".
func (p PodTemplate[W]) CPU(q string) W {
	request(&p.template.Spec, corev1.ResourceCPU, q)
	return p.self
}

// Memory sets each pod's memory request, a quantity such as "8Gi".
func (p PodTemplate[W]) Memory(q string) W {
	request(&p.template.Spec, corev1.ResourceMemory, q)
	return p.self
}

// PodLabel sets a label of the pods.
func (p PodTemplate[W]) PodLabel(k, v string) W {
	p.template.Labels = set(p.template.Labels, k, v)
	return p.self
}

// PodAnnotation sets an annotation of the pods (devcluster.AnnotationRunSeconds, say).
func (p PodTemplate[W]) PodAnnotation(k, v string) W {
	p.template.Annotations = set(p.template.Annotations, k, v)
	return p.self
}

// SchedulerName sets the pods' spec.schedulerName.
func (p PodTemplate[W]) SchedulerName(name string) W {
	p.template.Spec.SchedulerName = name
	return p.self
}

// Container names the pods' container and its image.
func (p PodTemplate[W]) Container(name, image string) W {
	c := &p.template.Spec.Containers[0]
	c.Name, c.Image = name, image
	return p.self
}

// NoServiceAccountToken keeps the service account token out of the pods.
func (p PodTemplate[W]) NoServiceAccountToken() W {
	no := false
	p.template.Spec.AutomountServiceAccountToken = &no
	return p.self
}
