package kube

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/native"
)

// This file builds one workload: from the pods grouped under its top owner (S4), or from the
// template of an owner Arbiter suspended (S20); its type (S4), project (S6) and queue time
// (S10) come from the owner and the settings.

// groupWorkload builds a workload from its grouped pods, or returns nil when it has none.
func (c *Cache) groupWorkload(key types.UID) *builtWorkload {
	set := c.members[key]
	if len(set) == 0 {
		return nil
	}
	pods := slices.SortedFunc(maps.Values(set), func(a, b *podEntry) int { return strings.Compare(a.pod.Name, b.pod.Name) })
	top, bare, _ := c.topOwner(pods[0])
	x := &c.index
	w := scheduler.Workload{
		UID: string(key), Namespace: top.Namespace, Name: top.Name, Kind: top.Kind, Group: top.Group,
		Labels: top.Labels, Annotations: top.Annotations, Gang: c.gangOf(top), Phase: scheduler.PhasePending,
		QueuedAt: queuedAt(top, pods[0].created), Type: workloadType(top, x.typeByKind, x.typeBySlug),
		Deadline: top.Deadline, Pods: make([]scheduler.Pod, 0, len(pods)),
	}
	m := &WorkloadMeta{Owner: top.ref(), Bare: bare, Suspendable: scheduler.CanSuspend(top.Kind), Pods: make([]PodMeta, 0, len(pods))}
	switch {
	case bare:
		m.GroupedBy = "A pod without a controller: its own workload."
	case top.Unknown:
		m.GroupedBy = unknownKindGang(&w, top, pods)
	default:
		m.GroupedBy = "Grouped by owner " + top.Kind + "/" + top.Name + "."
	}
	topologies := make([]podTopology, 0, len(pods))
	for _, e := range pods {
		topologies = append(topologies, e.topology)
		if bare && w.QueuedAt.After(e.created) {
			w.QueuedAt = e.created
		}
		if w.Project == "" {
			w.Project = projectOf(top.Labels, e.pod.Labels, top.Namespace, x.settings.NamespaceProject, x.projects)
		}
		w.Pods = append(w.Pods, e.pod)
		if e.pod.NodeName != "" {
			w.Phase = scheduler.PhaseRunning
			if !e.started.IsZero() && (w.StartedAt.IsZero() || e.started.Before(w.StartedAt)) {
				w.StartedAt = e.started
			}
		}
		m.Pods = append(m.Pods, PodMeta{UID: types.UID(e.pod.UID), Namespace: e.pod.Namespace, Name: e.pod.Name,
			NodeName: e.pod.NodeName, Terminating: e.pod.Terminating, ScheduledReason: e.scheduledReason, ScheduledAt: e.scheduledAt, Created: e.created,
			Started: e.started, Phase: string(e.phase), Containers: e.containers})
	}
	owner := top.Annotations
	if bare {
		owner = nil // a bare pod's annotations are its own, read as its template's
	}
	applyTopology(&w, owner, topologies)
	if c.foreseesPodsOf(top) {
		made := map[string]int{}
		for _, e := range pods {
			if !e.pod.Terminating {
				made[e.pod.PodSet]++
			}
		}
		c.addForeseenPods(&w, top, made)
	}
	return &builtWorkload{w: w, meta: m}
}

// unknownKindGang is S5's fallback for a top owner of a kind Arbiter does not watch, which it
// knows only by reference: the gang is the arbiter.dev/min-members annotation of its pods
// (the owner's own annotations are not read), else the pods that exist. It returns the
// sentence that says so.
func unknownKindGang(w *scheduler.Workload, top *owner, pods []*podEntry) string {
	by := "Grouped by owner " + top.Kind + "/" + top.Name + " (kind not known: "
	for _, e := range pods {
		if e.minMembers != "" {
			w.Annotations = map[string]string{scheduler.AnnotationMinMembers: e.minMembers}
			return by + "gang from " + scheduler.AnnotationMinMembers + " on its pods)."
		}
	}
	w.Gang = scheduler.GangSpec{Existing: int32(len(pods))}
	return by + "gang = the " + strconv.Itoa(len(pods)) + " pods that exist)."
}

// gangOf is the gang spec of a top owner (S5): its own, but a TrainJob's is that of the JobSet
// the Trainer made for it once it is known (the runtime's replicated jobs, with the
// TrainJob's nodes written in), since the runtime may start initializers before the nodes.
func (c *Cache) gangOf(o *owner) scheduler.GangSpec {
	if child := c.trainJobSet(o); child != nil {
		return child.Gang
	}
	return o.Gang
}

// rolesOf is what a suspended top owner's pods will be: its own roles or template, or for a
// TrainJob its JobSet's.
func (c *Cache) rolesOf(o *owner) []podRole {
	if o.Kind == "TrainJob" {
		if child := c.trainJobSet(o); child != nil {
			return child.podRoles()
		}
		return nil
	}
	return o.podRoles()
}

func (c *Cache) trainJobSet(o *owner) *owner {
	if o.Kind != "TrainJob" {
		return nil
	}
	if uid, ok := c.trainJobSets[o.UID]; ok {
		return c.owners[uid]
	}
	return nil
}

// suspendedWorkload builds a workload Arbiter suspended from its owner's pod templates (S20).
func (c *Cache) suspendedWorkload(o *owner) *builtWorkload {
	w := c.templateWorkload(o, scheduler.PhaseSuspended, o.Created)
	for i := range w.Pods {
		w.Pods[i].UID, w.Pods[i].Name = "", ""
	}
	return &builtWorkload{w: w, meta: &WorkloadMeta{Owner: o.ref(), Suspendable: true,
		GroupedBy: "Suspended by Arbiter: its pods are those its templates will make."}}
}

// templateWorkload builds a workload from its owner and the pods its templates make, named
// <owner>-<role>-<i>: a suspended one (S20), or one not created yet (a dry run). Its type (S4),
// project (S6) and queue time (S10, created when the owner has no creation time) are found as
// for a workload built from its pods.
func (c *Cache) templateWorkload(o *owner, phase scheduler.Phase, created time.Time) scheduler.Workload {
	x := &c.index
	w := scheduler.Workload{
		UID: string(o.UID), Namespace: o.Namespace, Name: o.Name, Kind: o.Kind, Group: o.Group,
		Labels: o.Labels, Annotations: o.Annotations, Gang: c.gangOf(o), Phase: phase,
		QueuedAt: queuedAt(o, created), Type: workloadType(o, x.typeByKind, x.typeBySlug), Deadline: o.Deadline,
	}
	var topologies []podTopology
	for _, r := range c.rolesOf(o) {
		if w.Project == "" {
			w.Project = projectOf(o.Labels, r.Template.Labels, o.Namespace, x.settings.NamespaceProject, x.projects)
		}
		template := corev1.Pod{ObjectMeta: r.Template.ObjectMeta, Spec: r.Template.Spec}
		template.Namespace = o.Namespace
		role := ""
		if r.Name != "" {
			role = strings.ToLower(r.Name) + "-"
		}
		topology := readTopology(template.Annotations, "the pod template's")
		for i := range r.Count {
			topologies = append(topologies, topology)
			p := schedulingPod(&template)
			if p.PodSet == "" {
				p.PodSet = strings.ToLower(r.Name) // its controller labels the pods it makes with it
			}
			p.Name = o.Name + "-" + role + strconv.Itoa(int(i))
			p.UID = string(o.UID) + "-" + role + strconv.Itoa(int(i))
			w.Pods = append(w.Pods, p)
		}
	}
	if w.Project == "" {
		w.Project = projectOf(o.Labels, nil, o.Namespace, x.settings.NamespaceProject, x.projects)
	}
	applyTopology(&w, o.Annotations, topologies)
	return w
}

// queuedAt is the top owner's creation time (S10), or the time recorded in its annotation when
// it was re-created.
func queuedAt(o *owner, fallback time.Time) time.Time {
	if v := o.Annotations[AnnotationQueuedAt]; v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	if !o.Created.IsZero() {
		return o.Created
	}
	return fallback
}

// workloadType is S4: the type label on the top owner, else the type of its kind and group,
// else the kind itself (an unknown type, which gets the cluster default).
func workloadType(o *owner, byKind map[[2]string]string, bySlug map[string]string) string {
	if t := o.Labels[LabelWorkloadType]; t != "" {
		// Label values cannot hold spaces: "standard-training" names "Standard training".
		if name, ok := bySlug[native.TypeSlug(t)]; ok {
			return name
		}
		return t
	}
	if t, ok := byKind[[2]string{o.Group, o.Kind}]; ok {
		return t
	}
	return o.Kind
}

// projectOf is S6: the project label on the top owner or the pod, then KAI's and Run:ai's
// queue labels, then the project owning the namespace. A label naming no project is skipped.
func projectOf(ownerLabels, podLabels map[string]string, namespace string, byNamespace map[string]string, known map[string]bool) string {
	for _, key := range []string{LabelProject, LabelKAIQueue, LabelRunAIQueue} {
		for _, labels := range []map[string]string{ownerLabels, podLabels} {
			if v := labels[key]; v != "" && known[v] {
				return v
			}
		}
	}
	return byNamespace[namespace]
}
