// Package objects builds the Kubernetes objects workloads are made of — batch/v1 Jobs and
// apps/v1 Deployments — for the native types' submissions (workload/native), the demo, the
// end-to-end tests and the benchmarks: one fluent builder per object (in the style of Kueue's
// pkg/util/testingjobs) over one shared pod template builder (PodTemplate), so that what every
// GPU workload needs — the pod-failure policy above all — is written once.
//
//	job := objects.Job("train", "vision").Pods(4).GPUs(2).Priority("low").Preemptible().Obj()
package objects

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// ResourceGPU is the extended resource a pod asks GPUs of.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// DefaultSchedulerName is the schedulerName a built object's pods carry unless told otherwise:
// Arbiter's default (--scheduler-name).
const DefaultSchedulerName = "arbiter"

// JobWrapper builds a Job; Obj returns it.
type JobWrapper struct {
	batchv1.Job
	PodTemplate[*JobWrapper]
}

// Job starts a Job of one pod with one GPU (requested and limited), for Arbiter, that never
// restarts its pods and does not retry (backoffLimit 0). Its pod-failure policy ignores pods
// evicted by Arbiter (condition DisruptionTarget, S20), as docs/scheduling.md recommends: an
// eviction is not a failure of the Job, whose controller makes the pod again.
func Job(name, namespace string) *JobWrapper {
	one, backoff := int32(1), int32(0)
	j := &JobWrapper{Job: batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: batchv1.JobSpec{
			Parallelism: &one, Completions: &one, BackoffLimit: &backoff,
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}}},
			Template: corev1.PodTemplateSpec{Spec: podSpec("main", "example.invalid/train:1", corev1.RestartPolicyNever, 1)},
		},
	}}
	j.PodTemplate = podTemplate(j, &j.Spec.Template)
	return j
}

// Obj is the Job built.
func (j *JobWrapper) Obj() *batchv1.Job { return &j.Job }

// GenerateName lets the API server name the Job: prefix and a random suffix.
func (j *JobWrapper) GenerateName(prefix string) *JobWrapper {
	j.ObjectMeta.Name, j.ObjectMeta.GenerateName = "", prefix
	return j
}

// UID sets what the API server would, for objects that never reach one.
func (j *JobWrapper) UID(uid string) *JobWrapper { j.ObjectMeta.UID = types.UID(uid); return j }

// Created sets the creation time.
func (j *JobWrapper) Created(t time.Time) *JobWrapper {
	j.ObjectMeta.CreationTimestamp = metav1.NewTime(t)
	return j
}

// Pods makes the Job a gang of n pods: parallelism = completions = n (S5).
func (j *JobWrapper) Pods(n int32) *JobWrapper {
	j.Spec.Parallelism, j.Spec.Completions = &n, &n
	return j
}

// Priority asks for a priority by the label Arbiter reads (S7).
func (j *JobWrapper) Priority(name string) *JobWrapper {
	return j.Label(scheduler.LabelPriority, name)
}

// Preemptible asks to be preemptible by the label Arbiter reads (S8).
func (j *JobWrapper) Preemptible() *JobWrapper {
	return j.Label(scheduler.LabelPreemptibility, string(scheduler.Preemptible))
}

// Label sets a label of the Job.
func (j *JobWrapper) Label(k, v string) *JobWrapper {
	j.ObjectMeta.Labels = set(j.ObjectMeta.Labels, k, v)
	return j
}

// Labels sets labels of the Job.
func (j *JobWrapper) Labels(l map[string]string) *JobWrapper {
	for k, v := range l {
		j.Label(k, v)
	}
	return j
}

// Annotations sets annotations of the Job.
func (j *JobWrapper) Annotations(a map[string]string) *JobWrapper {
	for k, v := range a {
		j.ObjectMeta.Annotations = set(j.ObjectMeta.Annotations, k, v)
	}
	return j
}

// BackoffLimit sets how many failed pods the Job retries.
func (j *JobWrapper) BackoffLimit(n int32) *JobWrapper { j.Spec.BackoffLimit = &n; return j }

// TTLAfterFinished sets how long the finished Job stays.
func (j *JobWrapper) TTLAfterFinished(seconds int32) *JobWrapper {
	j.Spec.TTLSecondsAfterFinished = &seconds
	return j
}

// Suspend sets spec.suspend; nil leaves it unset.
func (j *JobWrapper) Suspend(s *bool) *JobWrapper { j.Spec.Suspend = s; return j }

// Finished marks the Job complete, or failed, as its controller would.
func (j *JobWrapper) Finished(failed bool) *JobWrapper {
	c := batchv1.JobComplete
	if failed {
		c = batchv1.JobFailed
	}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
	return j
}

// Succeeded sets how many of its pods succeeded.
func (j *JobWrapper) Succeeded(n int32) *JobWrapper { j.Status.Succeeded = n; return j }

func podSpec(container, image string, restart corev1.RestartPolicy, gpus int64) corev1.PodSpec {
	s := corev1.PodSpec{SchedulerName: DefaultSchedulerName, RestartPolicy: restart,
		Containers: []corev1.Container{{Name: container, Image: image}}}
	setGPUs(&s, gpus)
	return s
}

func setGPUs(s *corev1.PodSpec, n int64) {
	r := &s.Containers[0].Resources
	if n <= 0 {
		delete(r.Requests, ResourceGPU)
		delete(r.Limits, ResourceGPU)
		return
	}
	q := *resource.NewQuantity(n, resource.DecimalSI)
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	if r.Limits == nil {
		r.Limits = corev1.ResourceList{}
	}
	r.Requests[ResourceGPU], r.Limits[ResourceGPU] = q, q
}

func request(s *corev1.PodSpec, name corev1.ResourceName, q string) {
	r := &s.Containers[0].Resources
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	r.Requests[name] = resource.MustParse(q)
}

func set(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
