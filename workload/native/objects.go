package native

import (
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// Labels and annotations the objects carry; the scheduler reads them (scheduler/kube).
const (
	LabelWorkloadType   = "arbiter.dev/workload-type"
	LabelProject        = "arbiter.dev/project"
	LabelPriority       = scheduler.LabelPriority
	LabelPreemptibility = scheduler.LabelPreemptibility
	AnnotationSubmitter = scheduler.AnnotationSubmitter
	// LabelWorkload selects an inference's pods for its Deployment and Service.
	LabelWorkload = "arbiter.dev/workload"
	containerName = "main"
)

// Objects are what a submission creates: the top owner (a Job, a Deployment or a PyTorchJob)
// and, for a distributed training made as an indexed Job or an inference, a Service, which the
// caller makes owned by the top owner once created (so deleting the workload deletes it).
type Objects struct {
	Job        *batchv1.Job
	Deployment *appsv1.Deployment
	PyTorchJob *unstructured.Unstructured // training-operator's kubeflow.org/v1 PyTorchJob
	Service    *corev1.Service
}

// Objects builds the workload's Kubernetes objects.
//
//   - Workspace and Standard training: a Job of one pod that does not retry (backoffLimit 0);
//     a workspace runs until it is stopped or deleted, as its command does not end.
//   - Distributed training made as a PyTorchJob (As, DistributedMadeAs): a master and
//     numWorkers workers, which training-operator makes into pods and Services.
//   - Distributed training made as an indexed Job: numWorkers pods whose gang is all of them
//     (arbiter.dev/min-members, S5), and a headless Service of the same name, the pods'
//     subdomain, so worker i is reachable as <name>-<i>.<name>.
//   - Custom inference: a Deployment of minReplicas pods and a Service on its serving port.
//
// Every Job keeps kubejobs' pod-failure policy: a pod Arbiter evicts is not a failure of the
// Job, whose controller makes it again (S20).
func (w Workload) Objects() Objects {
	meta := w.objectMeta()
	switch w.Kind {
	case Inference:
		d := objects.Deployment(w.Name, w.Namespace).Replicas(w.Replicas).Obj()
		d.ObjectMeta = meta
		sel := map[string]string{LabelWorkload: w.Name}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: sel}
		d.Spec.Template.ObjectMeta = w.podMeta(sel)
		d.Spec.Template.Spec = w.podSpec(corev1.RestartPolicyAlways, d.Spec.Template.Spec)
		d.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "serving", ContainerPort: w.Port, Protocol: corev1.ProtocolTCP}}
		svc := &corev1.Service{
			ObjectMeta: w.serviceMeta(),
			Spec: corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{
				Name: "serving", Port: w.Port, TargetPort: intstr.FromInt32(w.Port), Protocol: corev1.ProtocolTCP,
			}}},
		}
		return Objects{Deployment: d, Service: svc}
	case Distributed:
		if w.As == AsPyTorchJob {
			return Objects{PyTorchJob: w.pyTorchJob()}
		}
		fallthrough
	default:
		pods := w.Pods()
		j := objects.Job(w.Name, w.Namespace).Pods(pods).Obj()
		j.ObjectMeta = meta
		j.Spec.Template.ObjectMeta = w.podMeta(nil)
		j.Spec.Template.Spec = w.podSpec(corev1.RestartPolicyNever, j.Spec.Template.Spec)
		if w.Kind != Distributed {
			return Objects{Job: j}
		}
		indexed := batchv1.IndexedCompletion
		j.Spec.CompletionMode = &indexed
		j.Annotations[scheduler.AnnotationMinMembers] = strconv.Itoa(int(pods))
		j.Spec.Template.Spec.Subdomain = w.Name
		svc := &corev1.Service{
			ObjectMeta: w.serviceMeta(),
			Spec: corev1.ServiceSpec{
				ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
				Selector: map[string]string{batchv1.JobNameLabel: w.Name},
			},
		}
		return Objects{Job: j, Service: svc}
	}
}

// objectMeta is the top owner's: the labels the scheduler reads (type, project, and priority
// and preemptibility only when the request gave them, so the type's defaults apply otherwise)
// and the submitter.
func (w *Workload) objectMeta() metav1.ObjectMeta {
	labels := map[string]string{LabelWorkloadType: TypeSlug(w.Kind.Type)}
	if len(validation.IsValidLabelValue(w.Project)) == 0 && w.Project != "" {
		labels[LabelProject] = w.Project
	}
	if w.Priority != "" {
		labels[LabelPriority] = w.Priority
	}
	if w.Preemptibility != "" {
		labels[LabelPreemptibility] = w.Preemptibility
	}
	annotations := map[string]string{}
	if w.Submitter != "" {
		annotations[AnnotationSubmitter] = w.Submitter
	}
	return metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace, Labels: labels, Annotations: annotations}
}

// podMeta is the pods': the type and project labels too (S6 reads the project from the pod as
// well as from its owner), and the selector's labels.
func (w *Workload) podMeta(selector map[string]string) metav1.ObjectMeta {
	labels := map[string]string{LabelWorkloadType: TypeSlug(w.Kind.Type)}
	if len(validation.IsValidLabelValue(w.Project)) == 0 && w.Project != "" {
		labels[LabelProject] = w.Project
	}
	for k, v := range selector {
		labels[k] = v
	}
	return metav1.ObjectMeta{Labels: labels}
}

func (w *Workload) serviceMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace,
		Labels: map[string]string{LabelWorkloadType: TypeSlug(w.Kind.Type), LabelWorkload: w.Name}}
}

// podSpec fills the builder's pod spec with the submission: Arbiter's scheduler name, the
// container, its resources, and the node pools as a required node affinity (any of them).
func (w *Workload) podSpec(restart corev1.RestartPolicy, s corev1.PodSpec) corev1.PodSpec {
	s.SchedulerName, s.RestartPolicy = w.SchedulerName, restart
	c := &s.Containers[0]
	c.Name, c.Image, c.Command, c.Args = containerName, w.Image, w.Command, w.Args
	c.Env = nil
	for _, e := range w.Env {
		c.Env = append(c.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
	}
	c.Resources = corev1.ResourceRequirements{}
	if w.GPUs > 0 {
		q := *resourceQuantity(w.GPUs)
		c.Resources.Requests = corev1.ResourceList{objects.ResourceGPU: q}
		c.Resources.Limits = corev1.ResourceList{objects.ResourceGPU: q}
	}
	if w.CPU != nil {
		c.Resources.Requests = withRequest(c.Resources.Requests, corev1.ResourceCPU, w.CPU.DeepCopy())
	}
	if w.Memory != nil {
		c.Resources.Requests = withRequest(c.Resources.Requests, corev1.ResourceMemory, w.Memory.DeepCopy())
	}
	// A pool without a node label (the default pool: nodes no other pool claims) cannot be
	// written as an affinity term; asking for it lifts the restriction.
	if len(w.Pools) > 0 && !slices.ContainsFunc(w.Pools, func(p Pool) bool { return p.LabelKey == "" }) {
		terms := make([]corev1.NodeSelectorTerm, 0, len(w.Pools))
		for _, p := range w.Pools {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: p.LabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{p.LabelValue},
			}}})
		}
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	return s
}

// TypeSlug is a workload type's name as a label value holds it, as the scheduler reads it back
// (S4): lower case, spaces as dashes ("Standard training" is "standard-training").
func TypeSlug(name string) string { return strings.ToLower(strings.ReplaceAll(name, " ", "-")) }

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }

func withRequest(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) corev1.ResourceList {
	if l == nil {
		l = corev1.ResourceList{}
	}
	l[name] = q
	return l
}
