package kube

import (
	"maps"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// This file takes informer events in: nodes, pods and their owners. Each write files what
// changed (grouping.go) and rebuilds it before it lets go of the lock (refresh), and asks for a
// cycle only when the change can change a decision.

// podEntry is a pod as the cache keeps it: converted once, when the informer delivers it.
type podEntry struct {
	pod        scheduler.Pod
	ours       bool // spec.schedulerName is Arbiter's
	active     bool // not Succeeded or Failed
	controller *metav1.OwnerReference
	created    time.Time
	started    time.Time
	// ended is when a pod that succeeded or failed ended: the last of its containers'
	// terminations (zero while it runs, or when no container says)
	ended time.Time
	// phase and containers are what the API answers of the pod (PodMeta): its status.phase
	// and its containers' names and images.
	phase      corev1.PodPhase
	containers []Container
	// bound is when the API server bound the pod: its PodScheduled=True condition's time.
	bound time.Time
	// scheduledReason is the reason of the pod's PodScheduled=False condition, so a reason is
	// written only when it changes (S23), and scheduledAt when it was written.
	scheduledReason string
	scheduledAt     time.Time
	// unseen is a reason this cache wrote and has not yet seen in the pod's updates. Until it
	// has, an update carries a version of the pod from before the write and does not take
	// the remembered reason back: otherwise the next cycle would write the same reason again.
	unseen string
	// minMembers is the pod's arbiter.dev/min-members annotation: the gang of a workload whose
	// top owner is of a kind Arbiter does not watch (S5's fallback).
	minMembers string
	// topology is the pod's topology request (S29), read from its annotations (its template's)
	topology podTopology
	// workload is the top owner's UID the pod is grouped under (S4), or "" for pods that are
	// not Arbiter's, no longer active, or awaiting an owner.
	workload types.UID
	// awaitingOwner is the UID of the owner the pending pod waits for (Cache.awaiting), or "".
	awaitingOwner types.UID
}

// UpsertNode records a node.
func (c *Cache) UpsertNode(n *corev1.Node) {
	sn := schedulingNode(n)
	c.mu.Lock()
	old, known := c.nodes[n.Name]
	if known {
		sn.Name = old.Name // the string pods' node names are made to share (UpsertPod)
	}
	changed := !known || !sameNode(old, sn)
	if changed {
		c.nodes[n.Name] = sn
		c.nodeList = nil
		c.refresh()
	}
	c.mu.Unlock()
	if changed {
		c.notify()
	}
}

// sameNode reports whether two versions of a node schedule alike.
func sameNode(a, b scheduler.Node) bool {
	return a.Ready == b.Ready && a.Unschedulable == b.Unschedulable && a.Capacity == b.Capacity &&
		a.Allocatable == b.Allocatable && maps.Equal(a.Labels, b.Labels) && slices.Equal(a.Taints, b.Taints)
}

// DeleteNode forgets a node.
func (c *Cache) DeleteNode(name string) {
	c.mu.Lock()
	delete(c.nodes, name)
	c.nodeList = nil
	c.refresh()
	c.mu.Unlock()
	c.notify()
}

// UpsertPod records a pod.
func (c *Cache) UpsertPod(p *corev1.Pod) {
	e := &podEntry{
		pod:        schedulingPod(p),
		ours:       p.Spec.SchedulerName == c.schedulerName,
		active:     podActive(p),
		controller: metav1.GetControllerOfNoCopy(p),
		created:    p.CreationTimestamp.Time,
		phase:      p.Status.Phase,
		containers: make([]Container, 0, len(p.Spec.Containers)),
		minMembers: p.Annotations[scheduler.AnnotationMinMembers],
		topology:   readTopology(p.Annotations, "the pod template's"),
	}
	for _, ct := range p.Spec.Containers {
		e.containers = append(e.containers, Container{Name: ct.Name, Image: ct.Image})
	}
	if p.Status.StartTime != nil {
		e.started = p.Status.StartTime.Time
	}
	if !e.active {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.FinishedAt.After(e.ended) {
				e.ended = t.FinishedAt.Time
			}
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
			e.scheduledReason, e.scheduledAt = cond.Reason+"\x00"+cond.Message, cond.LastTransitionTime.Time
		}
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionTrue {
			e.bound = cond.LastTransitionTime.Time
		}
	}
	c.mu.Lock()
	if p.Spec.NodeName != "" {
		delete(c.bindBackoff, p.UID)
	}
	if a, ok := c.assumed[p.UID]; ok {
		if e.pod.NodeName != "" || e.pod.Terminating {
			delete(c.assumed, p.UID) // the API server has caught up
		} else {
			e.pod.NodeName = a.node
		}
	}
	// The pod's node name shares its node's string: each cycle looks every bound pod's node up
	// by name, and with thousands of pods each name of its own was a cache miss or two per
	// lookup (the hash reads it, the comparison reads it again); a few hundred shared names
	// stay in the processor's cache, and equal strings at one address compare at once.
	if n, ok := c.nodes[e.pod.NodeName]; ok {
		e.pod.NodeName = n.Name
	}
	old := c.pods[p.UID]
	if old != nil {
		c.unplace(old)
		c.occupy(old, -1)
		if old.unseen != "" && e.scheduledReason != old.unseen {
			e.scheduledReason, e.scheduledAt, e.unseen = old.scheduledReason, old.scheduledAt, old.unseen
		}
	}
	c.pods[p.UID] = e
	c.place(e)
	if old == nil || controllerUID(old.controller) != controllerUID(e.controller) {
		c.regroupOwnedBy(p.UID)
		c.placeAwaiting(p.UID) // the workers that waited for their leader pod
	}
	c.occupy(e, +1)
	c.refresh()
	c.mu.Unlock()
	if needsCycle(old, e) {
		c.notify()
	}
}

// needsCycle reports whether a pod's new version can change a decision. Arbiter's pods do
// when they arrive or when anything a decision reads of them changes, but not when one goes
// Running or a condition Arbiter wrote comes back. Other schedulers' pods do only when they
// give capacity back: their binds only take away, and the next cycle counts them.
func needsCycle(old, e *podEntry) bool {
	if old == nil {
		return e.ours
	}
	if !old.ours && !e.ours {
		return holds(old) && !holds(e)
	}
	return old.ours != e.ours || old.active != e.active || old.pod.NodeName != e.pod.NodeName ||
		old.pod.Terminating != e.pod.Terminating || old.pod.PriorityClassName != e.pod.PriorityClassName ||
		!maps.Equal(old.pod.Labels, e.pod.Labels) || controllerUID(old.controller) != controllerUID(e.controller) ||
		old.minMembers != e.minMembers || old.pod.PodSet != e.pod.PodSet || !old.topology.equal(e.topology)
}

// holds reports whether a pod of another scheduler holds capacity on a node (S3).
func holds(e *podEntry) bool { return !e.ours && e.active && e.pod.NodeName != "" }

func controllerUID(ref *metav1.OwnerReference) types.UID {
	if ref == nil {
		return ""
	}
	return ref.UID
}

// DeletePod forgets a pod.
func (c *Cache) DeletePod(uid types.UID) {
	c.mu.Lock()
	e := c.pods[uid]
	if e != nil {
		c.unplace(e)
		c.occupy(e, -1)
	}
	delete(c.pods, uid)
	delete(c.assumed, uid)
	delete(c.bindBackoff, uid)
	if e != nil {
		c.regroupOwnedBy(uid)
	}
	c.refresh()
	c.mu.Unlock()
	if e == nil || e.ours || holds(e) {
		c.notify()
	}
}

// occupy adds (sign +1) or removes (-1) what a pod of another scheduler holds on its node (S3).
func (c *Cache) occupy(e *podEntry, sign int64) {
	if !holds(e) {
		return
	}
	r := e.pod.Requests
	r.MilliCPU, r.Memory, r.GPUs, r.Pods = sign*r.MilliCPU, sign*r.Memory, sign*r.GPUs, sign*r.Pods
	sum := c.occupied[e.pod.NodeName].Add(r)
	if sum == (scheduler.Resources{}) {
		delete(c.occupied, e.pod.NodeName)
	} else {
		c.occupied[e.pod.NodeName] = sum
	}
	c.nodeList = nil
}

// UpsertOwner records a controller object. It asks for a cycle only when the change can
// change a decision: an owner weighs in one through the pods it groups, or through its template
// once Arbiter suspended it or while the pods of a new Job are foreseen (foreseen_pods.go).
// The Jobs of other schedulers do not.
func (c *Cache) UpsertOwner(o *owner) {
	c.mu.Lock()
	old := c.owners[o.UID]
	c.owners[o.UID] = o
	c.indexOwnedByPod(old, o)
	if !arbiterSuspended(o) {
		delete(c.resuming, o.UID) // the resume is confirmed, or someone else decides now
	}
	delete(c.departed, o.UID)
	decides := false
	if old == nil || !sameOwnerDecision(old, o) {
		moved := c.regroup(o.UID)
		decides = moved > 0 || arbiterSuspended(o) || old != nil && arbiterSuspended(old) ||
			c.foreseesPodsOf(o) || c.foreseesPodsOf(old)
		if parent, ok := trainJobOf(old); ok && c.trainJobSets[parent] == o.UID {
			delete(c.trainJobSets, parent) // put back just below if it still has that parent
			decides = c.parentChanged(parent) || decides
		}
		if parent, ok := trainJobOf(o); ok {
			c.trainJobSets[parent] = o.UID
			decides = c.parentChanged(parent) || decides
		}
	}
	if c.placeAwaiting(o.UID) > 0 {
		decides = true
	}
	c.refresh()
	c.mu.Unlock()
	if decides {
		c.notify()
	}
}

// sameOwnerDecision reports whether two versions of an owner weigh alike in a decision: a
// Job's counters of active and ready pods do not.
func sameOwnerDecision(a, b *owner) bool {
	return controllerUID(a.Controller) == controllerUID(b.Controller) && a.Suspended == b.Suspended &&
		a.Finished == b.Finished && a.Failed == b.Failed && a.TemplateCount == b.TemplateCount &&
		a.Created.Equal(b.Created) && a.Deadline.Equal(b.Deadline) && maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		reflect.DeepEqual(a.Gang, b.Gang) && (!a.Suspended || reflect.DeepEqual(a.Template, b.Template) && reflect.DeepEqual(a.Roles, b.Roles))
}

// DeleteOwner forgets a controller object, asking for a cycle when that can change a decision
// (see UpsertOwner).
func (c *Cache) DeleteOwner(uid types.UID) {
	c.mu.Lock()
	old := c.owners[uid]
	delete(c.owners, uid)
	delete(c.resuming, uid)
	c.indexOwnedByPod(old, nil)
	if old != nil && old.Controller != nil {
		c.keepDeparted(uid, old.Controller)
	}
	if c.built[uid] == nil {
		c.forgetWaiting(uid)
	}
	decides := c.regroup(uid) > 0 || old != nil && arbiterSuspended(old) || c.foreseesPodsOf(old)
	if parent, ok := trainJobOf(old); ok && c.trainJobSets[parent] == uid {
		delete(c.trainJobSets, parent)
		decides = c.parentChanged(parent) || decides
	}
	c.refresh()
	c.mu.Unlock()
	if decides {
		c.notify()
	}
}

// maxDeparted bounds Cache.departed: a link is needed only between an owner's deletion and its
// pods', seconds apart.
const maxDeparted = 4096

// keepDeparted remembers a deleted owner's controller (Cache.departed), forgetting the oldest
// link past maxDeparted.
func (c *Cache) keepDeparted(uid types.UID, controller *metav1.OwnerReference) {
	c.departed[uid] = controller
	c.departedOrder = append(c.departedOrder, uid)
	for len(c.departedOrder) > maxDeparted {
		gone := c.departedOrder[0]
		c.departedOrder = c.departedOrder[1:]
		if _, ok := c.owners[gone]; !ok && !slices.Contains(c.departedOrder, gone) {
			delete(c.departed, gone)
		}
	}
}

// trainJobOf reports the TrainJob an owner is the JobSet of.
func trainJobOf(o *owner) (types.UID, bool) {
	if o == nil || o.Kind != "JobSet" || o.Controller == nil || o.Controller.Kind != "TrainJob" {
		return "", false
	}
	return o.Controller.UID, true
}

// parentChanged rebuilds a top owner whose gang or pods come from a child that changed (a
// TrainJob's JobSet), and reports whether that can change a decision.
func (c *Cache) parentChanged(uid types.UID) bool {
	c.dirty[uid] = struct{}{}
	o := c.owners[uid]
	return len(c.members[uid]) > 0 || o != nil && arbiterSuspended(o)
}

// indexOwnedByPod keeps ownedByPod as an owner changes from old to o (either may be nil).
func (c *Cache) indexOwnedByPod(old, o *owner) {
	podController := func(o *owner) types.UID {
		if o == nil || o.Controller == nil || o.Controller.Kind != "Pod" || o.Controller.APIVersion != "v1" {
			return ""
		}
		return o.Controller.UID
	}
	if was := podController(old); was != "" && was != podController(o) {
		if set := c.ownedByPod[was]; set != nil {
			delete(set, old.UID)
			if len(set) == 0 {
				delete(c.ownedByPod, was)
			}
		}
	}
	if now := podController(o); now != "" {
		set := c.ownedByPod[now]
		if set == nil {
			set = map[types.UID]struct{}{}
			c.ownedByPod[now] = set
		}
		set[o.UID] = struct{}{}
	}
}

// regroupOwnedBy files again the pods under the owners a pod controls, whose top owner is
// found through it (see ownedByPod).
func (c *Cache) regroupOwnedBy(pod types.UID) {
	for uid := range c.ownedByPod[pod] {
		c.regroup(uid)
	}
}
