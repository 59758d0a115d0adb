// Package kube is where Arbiter reads and writes the cluster's workloads, pods, nodes and
// PriorityClasses (server, besides, holds the leader election's Lease and asks the API server
// whether it answers; the development harness makes its own). Informers fill a cache from
// which each cycle's scheduler.Snapshot is taken; the applier carries out the plan (binds,
// evictions, suspensions, resumes, pending reasons) with bounded concurrency, assuming its
// decisions in the cache first so the next cycle never decides them again.
package kube

import (
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/native"
)

// Labels and annotations Arbiter reads and writes.
const (
	LabelProject        = native.LabelProject // written by submissions, read here (S6)
	LabelKAIQueue       = "kai.scheduler/queue"
	LabelRunAIQueue     = "runai/queue"
	LabelWorkloadType   = native.LabelWorkloadType // its value is native.TypeSlug (S4)
	LabelPriority       = scheduler.LabelPriority
	LabelPreemptibility = scheduler.LabelPreemptibility
	// AnnotationSuspendedBy marks a workload Arbiter suspended (S20 suspend mode), so that only
	// those are resumed by Arbiter; a workload its owner created suspended stays as it is.
	AnnotationSuspendedBy = "arbiter.dev/suspended-by"
	// AnnotationQueuedAt keeps a workload's original queue time across re-creation (S10).
	AnnotationQueuedAt = "arbiter.dev/queued-at"
	resourceGPU        = corev1.ResourceName("nvidia.com/gpu")
	// labelLWSGroupIndex is the group a LeaderWorkerSet's pod belongs to, set by its
	// controller on the leader and its workers: each group is a gang (S5).
	labelLWSGroupIndex = "leaderworkerset.sigs.k8s.io/group-index"
)

// ownerKind is a kind of top owner Arbiter watches, and how.
type ownerKind struct {
	GVR   schema.GroupVersionResource
	Kind  string
	Watch ownerWatch
}

// ownerWatch is how a kind's objects are watched: each kind at the least cost that still
// gives Arbiter what it reads of them.
type ownerWatch int

const (
	// watchDynamic: custom resources, whose gang and suspend fields are read from the
	// unstructured object.
	watchDynamic ownerWatch = iota
	// watchMetadata: owners of which Arbiter needs only metadata (labels, annotations,
	// controller, creation time), watched as PartialObjectMetadata in protobuf.
	watchMetadata
	// watchJobs: Jobs, watched typed in protobuf for their parallelism, completions, suspend
	// switch, template and outcome.
	watchJobs
)

// watchedOwners are the kinds whose objects Arbiter caches to find a pod's top owner (S4) and
// its gang (S5). Custom resources are watched only when the API server serves them.
var watchedOwners = []ownerKind{
	{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, "Job", watchJobs},
	{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, "CronJob", watchMetadata},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", watchMetadata},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, "ReplicaSet", watchMetadata},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "StatefulSet", watchMetadata},
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}, "PyTorchJob", watchDynamic},
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}, "TFJob", watchDynamic},
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "jaxjobs"}, "JAXJob", watchDynamic},
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "xgboostjobs"}, "XGBoostJob", watchDynamic},
	// MPIJob is served at v1 by Kubeflow's training-operator and at v2beta1 by mpi-operator.
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}, "MPIJob", watchDynamic},
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}, "MPIJob", watchDynamic},
	{schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, "JobSet", watchDynamic},
	{schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}, "TrainJob", watchDynamic},
	{schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}, "RayCluster", watchDynamic},
	{schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}, "RayJob", watchDynamic},
	{schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}, "LeaderWorkerSet", watchDynamic},
}

// owner is what the cache keeps of a controller object: enough to walk up to the top owner,
// to name the workload and to compute its gang.
type owner struct {
	UID         types.UID
	Kind        string
	Group       string
	APIVersion  string
	Namespace   string
	Name        string
	Controller  *metav1.OwnerReference
	Labels      map[string]string
	Annotations map[string]string
	Created     time.Time
	Gang        scheduler.GangSpec
	// Suspended is the kind's suspend switch (see kinds.go): spec.suspend, or
	// spec.runPolicy.suspend for Kubeflow's jobs.
	Suspended bool
	// Template is the pod template of a Job (or of an object a dry run reads), with how many
	// pods it makes, so a suspended workload can be admitted before its pods exist (S20).
	Template      *corev1.PodTemplateSpec
	TemplateCount int32
	// Roles are the pods a custom resource makes, one entry per template (a PyTorchJob's
	// master and workers, a RayCluster's head and worker groups), for the same purpose: one
	// template cannot describe them all.
	Roles []podRole
	// Unknown is set for an owner that is not cached because Arbiter does not watch its kind:
	// only its reference from a pod or another owner is known.
	Unknown bool
	// Finished is set for a Job that completed or failed; Started and Ended are its
	// status.startTime and when it finished (its completionTime, else the condition's time).
	Finished       bool
	Failed         bool
	Started, Ended time.Time
	// Deadline is when a Job's activeDeadlineSeconds runs out, counted from its
	// status.startTime (else its creation); zero without one. The start estimate reads it.
	Deadline time.Time
}

func (o *owner) ref() ownerRef {
	return ownerRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID}
}

// ownerRef names an object events can be recorded on.
type ownerRef struct {
	APIVersion, Kind, Namespace, Name string
	UID                               types.UID
}

// ownerOf is what every owner has: its identity, labels, annotations and controller.
// apiVersion and kind are passed because typed and metadata informers leave TypeMeta empty.
func ownerOf(m metav1.Object, apiVersion, kind string) *owner {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return &owner{
		UID: m.GetUID(), Kind: kind, Group: gv.Group, APIVersion: apiVersion,
		Namespace: m.GetNamespace(), Name: m.GetName(), Controller: metav1.GetControllerOfNoCopy(m),
		Labels: m.GetLabels(), Annotations: m.GetAnnotations(), Created: m.GetCreationTimestamp().Time,
	}
}

// ownerFromJob reads a Job's gang (S5), suspend switch, pod template and outcome.
func ownerFromJob(j *batchv1.Job) *owner {
	o := ownerOf(j, "batch/v1", "Job")
	o.Gang.Parallelism = ptr32(1)
	if j.Spec.Parallelism != nil {
		o.Gang.Parallelism = ptr32(int64(*j.Spec.Parallelism))
	}
	if j.Spec.Completions != nil {
		o.Gang.Completions = ptr32(int64(*j.Spec.Completions))
	}
	o.Gang.Succeeded = j.Status.Succeeded
	o.Suspended = j.Spec.Suspend != nil && *j.Spec.Suspend
	if ads := j.Spec.ActiveDeadlineSeconds; ads != nil && !o.Suspended {
		start := o.Created
		if j.Status.StartTime != nil {
			start = j.Status.StartTime.Time
		}
		o.Deadline = start.Add(time.Duration(*ads) * time.Second)
	}
	o.Template = &j.Spec.Template
	o.TemplateCount = *o.Gang.Parallelism
	if o.Gang.Completions != nil {
		o.TemplateCount = min(o.TemplateCount, *o.Gang.Completions-o.Gang.Succeeded)
	}
	if j.Status.StartTime != nil {
		o.Started = j.Status.StartTime.Time
	}
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			o.Finished = true
			o.Failed = c.Type == batchv1.JobFailed
			o.Ended = c.LastTransitionTime.Time
		}
	}
	if o.Finished && j.Status.CompletionTime != nil {
		o.Ended = j.Status.CompletionTime.Time
	}
	return o
}

func ptr32(v int64) *int32 {
	x := int32(v)
	return &x
}

// podRequests sums a pod's container requests (and the largest init container's, which run
// before them) into the resources the scheduler checks, plus one pod slot.
func podRequests(spec *corev1.PodSpec) scheduler.Resources {
	var r scheduler.Resources
	for i := range spec.Containers {
		addRequests(&r, spec.Containers[i].Resources)
	}
	var init scheduler.Resources
	for i := range spec.InitContainers {
		var c scheduler.Resources
		addRequests(&c, spec.InitContainers[i].Resources)
		init.MilliCPU = max(init.MilliCPU, c.MilliCPU)
		init.Memory = max(init.Memory, c.Memory)
		init.GPUs = max(init.GPUs, c.GPUs)
	}
	r.MilliCPU = max(r.MilliCPU, init.MilliCPU)
	r.Memory = max(r.Memory, init.Memory)
	r.GPUs = max(r.GPUs, init.GPUs)
	for name, q := range spec.Overhead {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory += q.Value()
		}
	}
	r.Pods = 1
	return r
}

func addRequests(r *scheduler.Resources, req corev1.ResourceRequirements) {
	get := func(name corev1.ResourceName) (int64, bool) {
		if q, ok := req.Requests[name]; ok {
			if name == corev1.ResourceCPU {
				return q.MilliValue(), true
			}
			return q.Value(), true
		}
		// A limit without a request is also the request (as in Kubernetes' defaulting).
		if q, ok := req.Limits[name]; ok {
			if name == corev1.ResourceCPU {
				return q.MilliValue(), true
			}
			return q.Value(), true
		}
		return 0, false
	}
	if v, ok := get(corev1.ResourceCPU); ok {
		r.MilliCPU += v
	}
	if v, ok := get(corev1.ResourceMemory); ok {
		r.Memory += v
	}
	if v, ok := get(resourceGPU); ok {
		r.GPUs += v
	}
}

// nodeResources converts a node's resource list.
func nodeResources(l corev1.ResourceList) scheduler.Resources {
	var r scheduler.Resources
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.MilliCPU = q.MilliValue()
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.Memory = q.Value()
	}
	if q, ok := l[resourceGPU]; ok {
		r.GPUs = q.Value()
	}
	if q, ok := l[corev1.ResourcePods]; ok {
		r.Pods = q.Value()
	}
	return r
}

// schedulingPod converts what the scheduler needs of a pod's spec.
func schedulingPod(p *corev1.Pod) scheduler.Pod {
	sp := scheduler.Pod{
		UID: string(p.UID), Namespace: p.Namespace, Name: p.Name, Labels: p.Labels,
		PriorityClassName: p.Spec.PriorityClassName, Requests: podRequests(&p.Spec),
		NodeSelector: p.Spec.NodeSelector, NodeName: p.Spec.NodeName,
		Terminating: p.DeletionTimestamp != nil, GangGroup: p.Labels[labelLWSGroupIndex], PodSet: podSetOf(p.Labels),
	}
	sp.RequiredAffinity = requiredAffinity(&p.Spec)
	for _, t := range p.Spec.Tolerations {
		sp.Tolerations = append(sp.Tolerations, scheduler.Toleration{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect)})
	}
	return sp
}

func requiredAffinity(spec *corev1.PodSpec) []scheduler.NodeSelectorTerm {
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var terms []scheduler.NodeSelectorTerm
	for _, t := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		var term scheduler.NodeSelectorTerm
		for _, e := range t.MatchExpressions {
			term.MatchExpressions = append(term.MatchExpressions, scheduler.NodeSelectorRequirement{Key: e.Key, Operator: string(e.Operator), Values: e.Values})
		}
		terms = append(terms, term)
	}
	return terms
}

// schedulingNode converts a node.
func schedulingNode(n *corev1.Node) scheduler.Node {
	sn := scheduler.Node{
		Name: n.Name, Labels: n.Labels, Unschedulable: n.Spec.Unschedulable,
		Capacity: nodeResources(n.Status.Capacity), Allocatable: nodeResources(n.Status.Allocatable),
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			sn.Ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, t := range n.Spec.Taints {
		sn.Taints = append(sn.Taints, scheduler.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	return sn
}

// podActive reports whether a pod still holds or wants resources.
func podActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// dropManagedFields is every informer's transform: field managers are no input to a decision,
// and they are often the largest part of a pod or Job, so the informers' caches (and the
// garbage collector's work over them) are far smaller without them. kube-scheduler does the same.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil { // typed, metadata-only and unstructured alike
		m.SetManagedFields(nil)
	}
	return obj, nil
}

var runtimeConverter = runtime.DefaultUnstructuredConverter

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
