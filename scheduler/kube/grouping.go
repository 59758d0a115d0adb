package kube

import (
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/native"
)

// This file files Arbiter's pods under their workloads (S4) and keeps the built workloads
// current: a write marks the workloads it touches dirty, and refresh builds them again (see
// workload.go) before the write lets go of the lock.

// builtWorkload is a workload as last built. Snapshots share it (its Pods and Meta are never
// modified once built), so an unchanged workload costs a copy per cycle rather than a
// regrouping of its pods.
type builtWorkload struct {
	w    scheduler.Workload
	meta *WorkloadMeta
	// times are the workload's entry of Cache.times, nil while it has none: a snapshot reads
	// them here rather than looking each workload up by UID every cycle.
	times *workloadTimes
}

// settingsIndex is what grouping needs of the settings, derived once per settings value.
type settingsIndex struct {
	settings   *Settings
	typeByKind map[[2]string]string
	typeBySlug map[string]string
	projects   map[string]bool
}

// SetSettings gives the cache the configuration it types and assigns workloads by (S4, S6),
// and that its snapshots carry. Settings other than the current ones rebuild every workload.
func (c *Cache) SetSettings(s *Settings) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index.settings == s {
		return
	}
	c.indexSettings(s)
	c.refresh()
}

// indexSettings derives the lookups grouping needs from new settings, and marks every
// workload for rebuilding: types and projects may resolve differently now.
func (c *Cache) indexSettings(s *Settings) {
	x := settingsIndex{
		settings:   s,
		typeByKind: make(map[[2]string]string, len(s.WorkloadTypes)),
		typeBySlug: make(map[string]string, len(s.WorkloadTypes)),
		projects:   make(map[string]bool, len(s.Projects)),
	}
	for _, t := range s.WorkloadTypes {
		x.typeByKind[[2]string{t.Group, t.Name}] = t.Name
		x.typeBySlug[native.TypeSlug(t.Name)] = t.Name
	}
	for _, p := range s.Projects {
		x.projects[p.Name] = true
	}
	c.index = x
	for key := range c.members {
		c.dirty[key] = struct{}{}
	}
	for key := range c.built {
		c.dirty[key] = struct{}{}
	}
	for key, o := range c.owners {
		if arbiterSuspended(o) {
			c.dirty[key] = struct{}{}
		}
	}
}

// place files an Arbiter pod that still wants resources under its workload (S4). A pending
// pod one of whose owners is of a kind Arbiter watches but is not in the cache yet (its watch
// lags the pods') waits for it in awaiting: grouped under the owners seen so far it would make
// a workload of its own for a moment (a ReplicaSet's, before its Deployment's), which a cycle
// could place and the records would keep. A bound pod is placed at once: it holds resources.
func (c *Cache) place(e *podEntry) {
	if !e.ours || !e.active {
		return
	}
	uid := types.UID(e.pod.UID)
	top, _, missing := c.topOwner(e)
	if missing != "" && e.pod.NodeName == "" {
		e.awaitingOwner = missing
		addMember(c.awaiting, missing, uid, e)
		return
	}
	e.workload = top.UID
	addMember(c.members, e.workload, uid, e)
	if e.controller != nil {
		addMember(c.byController, e.controller.UID, uid, e)
	}
	c.dirty[e.workload] = struct{}{}
}

// unplace takes a pod out of its workload, or out of awaiting.
func (c *Cache) unplace(e *podEntry) {
	uid := types.UID(e.pod.UID)
	if e.awaitingOwner != "" {
		removeMember(c.awaiting, e.awaitingOwner, uid)
		e.awaitingOwner = ""
	}
	if e.workload == "" {
		return
	}
	removeMember(c.members, e.workload, uid)
	if e.controller != nil {
		removeMember(c.byController, e.controller.UID, uid)
	}
	c.dirty[e.workload] = struct{}{}
	e.workload = ""
}

// touch marks a pod's workload for rebuilding after the pod's entry changed in place.
func (c *Cache) touch(e *podEntry) {
	if e.workload != "" {
		c.dirty[e.workload] = struct{}{}
	}
}

func addMember(m map[types.UID]map[types.UID]*podEntry, key, uid types.UID, e *podEntry) {
	set := m[key]
	if set == nil {
		set = map[types.UID]*podEntry{}
		m[key] = set
	}
	set[uid] = e
}

func removeMember(m map[types.UID]map[types.UID]*podEntry, key, uid types.UID) {
	if set := m[key]; set != nil {
		delete(set, uid)
		if len(set) == 0 {
			delete(m, key)
		}
	}
}

// regroup files again the pods an owner's arrival, change or departure can move: those it
// controls directly and those grouped under it. The owner's own workload (a suspended Job
// with no pods, say) is rebuilt too. It returns how many pods it filed again.
func (c *Cache) regroup(uid types.UID) int {
	// Copied first: regrouping edits both maps. A pod can be in both (a Job's own pods).
	moved := map[types.UID]*podEntry{}
	maps.Copy(moved, c.byController[uid])
	maps.Copy(moved, c.members[uid])
	for _, e := range moved {
		c.unplace(e)
		c.place(e)
	}
	c.dirty[uid] = struct{}{}
	return len(moved)
}

// topOwner follows controller references up from a pod to its workload's top owner (S4): a
// Job owned by a CronJob is its own workload; a bare pod is its own workload; an owner that is
// not cached (a kind Arbiter does not watch) ends the walk with what its reference says. A
// controller that is a pod (a LeaderWorkerSet's leader owns its group's workers) is walked
// through to the pod's own controller. unseen is the UID of the owner the walk stopped at when
// that owner is of a kind Arbiter watches (watchedOwners), or a pod, that the cache has not
// seen yet (place holds a pending pod until it comes); "" otherwise. An owner deleted before
// its bound pods (Cache.departed) is walked through to the controller it had.
func (c *Cache) topOwner(e *podEntry) (top *owner, bare bool, unseen types.UID) {
	if e.controller == nil {
		return &owner{
			UID: types.UID(e.pod.UID), Kind: "Pod", APIVersion: "v1", Namespace: e.pod.Namespace,
			Name: e.pod.Name, Labels: e.pod.Labels, Created: e.created,
		}, true, ""
	}
	ref, namespace, created := e.controller, e.pod.Namespace, e.created
	var cur *owner
	for depth := 0; depth < 10; depth++ {
		next := c.owners[ref.UID]
		if up := c.departed[ref.UID]; next == nil && up != nil && e.pod.NodeName != "" {
			// deleted before its bound pods: on to its controller, the workload they were in
			// (a pending pod waits for the owner instead, as for one not seen yet)
			ref = up
			continue
		}
		if next == nil && ref.Kind == "Pod" && ref.APIVersion == "v1" {
			p := c.pods[ref.UID]
			if p == nil {
				// A leader pod not seen yet, or deleted while its controller makes its group
				// again: its workers would be a gang of their own under it.
				return ownerFromRef(ref, namespace, created), false, ref.UID
			}
			if p.controller != nil {
				ref = p.controller
				continue
			}
		}
		if next == nil {
			top := ownerFromRef(ref, namespace, created)
			if !top.Unknown { // a watched kind, not in the cache yet
				unseen = ref.UID
			}
			return top, false, unseen
		}
		cur = next
		if cur.Controller == nil || (cur.Kind == "Job" && cur.Group == "batch" && cur.Controller.Kind == "CronJob") {
			break
		}
		ref, namespace, created = cur.Controller, cur.Namespace, cur.Created
	}
	if cur == nil {
		return ownerFromRef(ref, namespace, created), false, ""
	}
	return cur, false, ""
}

// placeAwaiting places the pods that waited for the owner uid, now in the cache; it returns
// how many there were.
func (c *Cache) placeAwaiting(uid types.UID) int {
	waiting := c.awaiting[uid]
	n := len(waiting) // placing takes each out of waiting
	for _, e := range waiting {
		c.unplace(e)
		c.place(e)
	}
	return n
}

// ownerFromRef is an owner that is not cached, as its reference names it. Unknown marks a
// kind Arbiter does not watch: its workload is grouped by the fallback rule (S5).
func ownerFromRef(ref *metav1.OwnerReference, namespace string, created time.Time) *owner {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	_, known := resourceOf(gv.Group, ref.Kind)
	return &owner{UID: ref.UID, Kind: ref.Kind, Group: gv.Group, APIVersion: ref.APIVersion, Namespace: namespace,
		Name: ref.Name, Created: created, Unknown: !known}
}

// arbiterSuspended reports whether an owner is a workload Arbiter suspended (S20): pending
// work whose pods will be made from its templates.
func arbiterSuspended(o *owner) bool {
	return o.Suspended && o.Annotations[AnnotationSuspendedBy] != "" && !o.Finished
}

// ours reports whether a suspended owner's roles make pods for this scheduler: some, and each
// role's template names it (S3: another scheduler's suspended work is not Arbiter's, as its
// pods would not be; another Arbiter may share the cluster under another name).
func (c *Cache) ours(roles []podRole) bool {
	for _, r := range roles {
		if r.Template == nil || r.Template.Spec.SchedulerName != c.schedulerName {
			return false
		}
	}
	return len(roles) > 0
}

// refresh rebuilds the workloads the current write made dirty. Every write calls it before it
// lets go of the lock, so that a snapshot finds the workloads whole.
func (c *Cache) refresh() {
	for key := range c.dirty {
		c.build(key)
	}
	clear(c.dirty)
	c.orderEdits = 0
}

// sortLists sorts the workloads and the node list afresh where a write left them to be
// (order or nodeList nil). The snapshot calls it, not each write: the informers' first lists
// bring thousands of nodes and workloads one event at a time, and sorting all of them after
// each made taking in the backlog's 1,250 nodes and 10,000 pods quadratic (seconds, before
// the first cycle could start). The caller holds c.mu for reading, so no write runs; sortMu
// keeps two readers from sorting at once.
func (c *Cache) sortLists() {
	c.sortMu.Lock()
	defer c.sortMu.Unlock()
	if c.order == nil {
		c.order = slices.SortedFunc(maps.Values(c.built), byUID)
	}
	// Nodes, with what pods that are not Arbiter's hold on them (S3).
	if c.nodeList == nil {
		c.nodeList = make([]scheduler.Node, 0, len(c.nodes))
		for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
			n := c.nodes[name]
			n.Occupied = c.occupied[name]
			c.nodeList = append(c.nodeList, n)
		}
	}
}

// build makes the workload keyed by a top owner's UID from its pods, or from its owner's
// template when Arbiter suspended it (and has not just resumed it: Cache.Resumed) or it is a
// new Job whose pods are foreseen (foreseen_pods.go); a key with none of these is dropped.
func (c *Cache) build(key types.UID) {
	b := c.groupWorkload(key)
	if o := c.owners[key]; b == nil && o != nil {
		switch {
		case arbiterSuspended(o) && c.resuming[key].IsZero() && c.ours(c.rolesOf(o)):
			b = c.suspendedWorkload(o)
		case c.foreseesPodsOf(o):
			b = c.foreseenWorkload(o)
		}
	}
	if b != nil {
		b.w.PrepareLookups()
	}
	old := c.built[key]
	switch {
	case b == nil && old != nil:
		delete(c.built, key)
		c.clearTimes(key, func(t *workloadTimes) { t.bound = time.Time{} })
		if c.owners[key] == nil {
			// Kept while its owner is: a Job whose evicted pods are gone has no pods until its
			// controller makes new ones, and still waits since it was evicted.
			c.forgetWaiting(key)
		}
		c.reorder(old, -1)
	case b != nil:
		b.times = c.times[key]
		c.built[key] = b
		if old == nil {
			c.reorder(b, +1)
			c.arrived = append(c.arrived, key)
		} else {
			c.reorder(b, 0)
		}
	}
}

// maxOrderEdits is how many workloads may come or go in one write before the order is sorted
// afresh rather than edited in place (each edit moves up to the whole slice).
const maxOrderEdits = 32

func byUID(a, b *builtWorkload) int { return strings.Compare(a.w.UID, b.w.UID) }

// reorder keeps order sorted as a workload comes (+1), goes (-1) or is rebuilt (0). In a fill
// a workload arrives nearly every cycle, and sorting thousands of them for each was a quarter
// of a cycle's snapshot; keeping the workloads themselves in order spares looking each up.
//
// Snapshots share no order slice with the cache (they copy the workloads out of it), so it is
// edited in place.
func (c *Cache) reorder(b *builtWorkload, change int) {
	if c.order == nil {
		return
	}
	if change != 0 {
		if c.orderEdits++; c.orderEdits > maxOrderEdits {
			c.order = nil
			return
		}
	}
	i, found := slices.BinarySearchFunc(c.order, b, byUID)
	switch {
	case change > 0 && !found:
		c.order = slices.Insert(c.order, i, b)
	case change < 0 && found:
		c.order = slices.Delete(c.order, i, i+1)
	case change == 0 && found:
		c.order[i] = b
	}
}
