package kube

import (
	"iter"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

var runtimeConverter = runtime.DefaultUnstructuredConverter

// Settings are the parts of a snapshot that come from Arbiter's configuration rather than from
// the cluster: the dictionary, categories, types and the organisation.
type Settings struct {
	Priorities    []scheduler.Priority
	Categories    []scheduler.Category
	WorkloadTypes []scheduler.WorkloadType
	NodePools     []scheduler.NodePool
	Departments   []scheduler.Department
	Projects      []scheduler.Project
	// NamespaceProject maps each namespace a project owns to that project (S6).
	NamespaceProject map[string]string
}

// podEntry is a pod as the cache keeps it: converted once, when the informer delivers it.
type podEntry struct {
	pod        scheduler.Pod
	ours       bool // spec.schedulerName is Arbiter's
	active     bool // not Succeeded or Failed
	controller *metav1.OwnerReference
	created    time.Time
	started    time.Time
	// scheduledReason is the reason of the pod's PodScheduled=False condition, so a reason is
	// written only when it changes (S23).
	scheduledReason string
	// workload is the top owner's UID the pod is grouped under (S4), or "" for pods that are
	// not Arbiter's or no longer active.
	workload types.UID
}

// builtWorkload is a workload as the last snapshot that needed it built it. Snapshots share
// it (its Pods and Meta are never modified once built), so an unchanged workload costs a
// copy per cycle rather than a regrouping of its pods.
type builtWorkload struct {
	w    scheduler.Workload
	meta *WorkloadMeta
}

// settingsIndex is what grouping needs of the settings, derived once per settings value.
type settingsIndex struct {
	settings   *Settings
	typeByKind map[[2]string]string
	typeBySlug map[string]string
	projects   map[string]bool
}

// Cache holds the cluster as informers report it, plus what Arbiter has decided but the API
// server has not yet confirmed (assumed binds, evictions in flight). It keeps its workloads
// grouped as events arrive: an event marks the workloads it touches dirty, and a snapshot
// rebuilds only those.
type Cache struct {
	schedulerName string

	mu      sync.Mutex
	nodes   map[string]scheduler.Node
	pods    map[types.UID]*podEntry
	owners  map[types.UID]*owner
	assumed map[types.UID]assumedBind
	// evicting maps a victim workload to the workload its eviction makes room for (S19), until
	// the victim has no pods left holding resources.
	evicting map[string]string
	// nominated are preemptors whose victims are gone, and workloads just resumed: tried first
	// (S19), so the capacity freed or set aside for them is theirs. An entry lasts until the
	// workload runs, or nominationTTL passes (its pods never came).
	nominated map[string]time.Time
	// boundAt remembers when Arbiter bound a workload, as its start time until the pods report
	// one; an entry goes with its workload.
	boundAt map[string]time.Time

	// The incremental index. members are the grouped pods of each workload; byController the
	// grouped pods of each direct controller (to regroup them when an owner arrives or
	// changes); built the workloads as last built; dirty those to build again.
	members      map[types.UID]map[types.UID]*podEntry
	byController map[types.UID]map[types.UID]*podEntry
	built        map[types.UID]*builtWorkload
	dirty        map[types.UID]struct{}
	// order is built's workloads sorted by UID, or nil to be sorted at the next snapshot (see
	// reorder); orderEdits counts workloads that came or went since the last snapshot.
	order      []*builtWorkload
	orderEdits int
	// occupied is what pods of other schedulers hold on each node (S3); nodeList the sorted
	// nodes with it, nil when a node or an occupation changed.
	occupied map[string]scheduler.Resources
	nodeList []scheduler.Node
	index    settingsIndex

	changed chan struct{}
}

type assumedBind struct {
	node string
	at   time.Time
}

// NewCache returns an empty cache for pods whose spec.schedulerName is schedulerName.
func NewCache(schedulerName string) *Cache {
	return &Cache{
		schedulerName: schedulerName,
		nodes:         map[string]scheduler.Node{},
		pods:          map[types.UID]*podEntry{},
		owners:        map[types.UID]*owner{},
		assumed:       map[types.UID]assumedBind{},
		evicting:      map[string]string{},
		nominated:     map[string]time.Time{},
		boundAt:       map[string]time.Time{},
		members:       map[types.UID]map[types.UID]*podEntry{},
		byController:  map[types.UID]map[types.UID]*podEntry{},
		built:         map[types.UID]*builtWorkload{},
		dirty:         map[types.UID]struct{}{},
		occupied:      map[string]scheduler.Resources{},
		changed:       make(chan struct{}, 1),
	}
}

// Changed is signalled (without blocking, coalescing) whenever the cache changes in a way
// that can change a decision. Changes that cannot (a bound pod reporting Running, a Job's
// status counters, a node's heartbeat) are taken into the next cycle without asking for one.
func (c *Cache) Changed() <-chan struct{} { return c.changed }

func (c *Cache) notify() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// UpsertNode records a node.
func (c *Cache) UpsertNode(n *corev1.Node) {
	sn := schedulingNode(n)
	c.mu.Lock()
	old, known := c.nodes[n.Name]
	changed := !known || !sameNode(old, sn)
	if changed {
		c.nodes[n.Name] = sn
		c.nodeList = nil
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
	}
	if p.Status.StartTime != nil {
		e.started = p.Status.StartTime.Time
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
			e.scheduledReason = cond.Reason + "\x00" + cond.Message
		}
	}
	c.mu.Lock()
	if a, ok := c.assumed[p.UID]; ok {
		if e.pod.NodeName != "" || e.pod.Terminating {
			delete(c.assumed, p.UID) // the API server has caught up
		} else {
			e.pod.NodeName = a.node
		}
	}
	old := c.pods[p.UID]
	if old != nil {
		c.unplace(old)
		c.occupy(old, -1)
	}
	c.pods[p.UID] = e
	c.place(e)
	c.occupy(e, +1)
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
		!maps.Equal(old.pod.Labels, e.pod.Labels) || controllerUID(old.controller) != controllerUID(e.controller)
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
	c.mu.Unlock()
	if e == nil || e.ours || holds(e) {
		c.notify()
	}
}

// place files an Arbiter pod that still wants resources under its workload (S4).
func (c *Cache) place(e *podEntry) {
	if !e.ours || !e.active {
		return
	}
	top, _ := c.topOwner(e)
	e.workload = top.UID
	uid := types.UID(e.pod.UID)
	addMember(c.members, e.workload, uid, e)
	if e.controller != nil {
		addMember(c.byController, e.controller.UID, uid, e)
	}
	c.dirty[e.workload] = struct{}{}
}

// unplace takes a pod out of its workload.
func (c *Cache) unplace(e *podEntry) {
	if e.workload == "" {
		return
	}
	uid := types.UID(e.pod.UID)
	removeMember(c.members, e.workload, uid)
	if e.controller != nil {
		removeMember(c.byController, e.controller.UID, uid)
	}
	c.dirty[e.workload] = struct{}{}
	e.workload = ""
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
// once Arbiter suspended it. A Job arriving before its pods (every Job does) waits for them,
// and so do the Jobs of other schedulers.
func (c *Cache) UpsertOwner(o *owner) {
	c.mu.Lock()
	old := c.owners[o.UID]
	c.owners[o.UID] = o
	decides := false
	if old == nil || !sameOwnerDecision(old, o) {
		moved := c.regroup(o.UID)
		decides = moved > 0 || arbiterSuspended(o) || old != nil && arbiterSuspended(old)
	}
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
		a.Created.Equal(b.Created) && maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		reflect.DeepEqual(a.Gang, b.Gang) && (!a.Suspended || reflect.DeepEqual(a.Template, b.Template))
}

// DeleteOwner forgets a controller object, asking for a cycle when that can change a decision
// (see UpsertOwner).
func (c *Cache) DeleteOwner(uid types.UID) {
	c.mu.Lock()
	old := c.owners[uid]
	delete(c.owners, uid)
	decides := c.regroup(uid) > 0 || old != nil && arbiterSuspended(old)
	c.mu.Unlock()
	if decides {
		c.notify()
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

// Assume records a bind before the API call, so the next snapshot already counts the pod on
// its node (S22).
func (c *Cache) Assume(pod types.UID, node string, now time.Time) {
	c.mu.Lock()
	c.assumed[pod] = assumedBind{node: node, at: now}
	if e := c.pods[pod]; e != nil {
		e.pod.NodeName = node
		c.touch(e)
	}
	c.mu.Unlock()
}

// Forget rolls back an assumed bind whose API call failed.
func (c *Cache) Forget(pod types.UID) {
	c.mu.Lock()
	delete(c.assumed, pod)
	if e := c.pods[pod]; e != nil {
		e.pod.NodeName = ""
		c.touch(e)
	}
	c.mu.Unlock()
	c.notify()
}

// touch marks a pod's workload for rebuilding after the pod's entry changed in place.
func (c *Cache) touch(e *podEntry) {
	if e.workload != "" {
		c.dirty[e.workload] = struct{}{}
	}
}

// MarkEvicting records that victim is being evicted for preemptor.
func (c *Cache) MarkEvicting(victim, preemptor string) {
	c.mu.Lock()
	c.evicting[victim] = preemptor
	c.mu.Unlock()
}

// nominationTTL bounds how long a nomination waits for its workload's pods to appear.
const nominationTTL = 30 * time.Second

// Nominate makes a workload first in line for the capacity set aside for it (a resumed
// workload whose controller is recreating its pods).
func (c *Cache) Nominate(workload string, now time.Time) {
	c.mu.Lock()
	c.nominated[workload] = now
	c.mu.Unlock()
}

// MarkBound records when Arbiter bound a workload's pods.
func (c *Cache) MarkBound(workload string, at time.Time) {
	c.mu.Lock()
	if _, ok := c.boundAt[workload]; !ok && c.built[types.UID(workload)] != nil {
		c.boundAt[workload] = at
	}
	delete(c.nominated, workload)
	c.mu.Unlock()
}

// SetScheduledReason remembers the PodScheduled reason written to a pod.
func (c *Cache) SetScheduledReason(pod types.UID, reason string) {
	c.mu.Lock()
	if e := c.pods[pod]; e != nil {
		e.scheduledReason = reason
		c.touch(e)
	}
	c.mu.Unlock()
}

// WorkloadMeta is what the applier needs of a workload beyond the plan: the object to record
// events on and to suspend or resume, and its pods.
type WorkloadMeta struct {
	Owner ownerRef
	// Bare is set for a workload that is a single pod without a controller.
	Bare bool
	// Suspendable is set when the top owner has a suspend switch Arbiter knows.
	Suspendable bool
	Pods        []PodMeta
}

// PodMeta names a pod and its current PodScheduled=False reason.
type PodMeta struct {
	UID             types.UID
	Namespace, Name string
	NodeName        string
	Terminating     bool
	ScheduledReason string
}

// View is one cycle's snapshot with what the applier and the recorder need beyond it.
type View struct {
	// Snapshot's workloads are sorted by UID.
	Snapshot scheduler.Snapshot
	meta     []*WorkloadMeta // meta[i] is of Snapshot.Workloads[i]
	rebuilt  map[string]bool
}

// Workload finds a workload of the view and its metadata; nil when the view has none.
func (v *View) Workload(uid string) (*scheduler.Workload, *WorkloadMeta) {
	ws := v.Snapshot.Workloads
	i := sort.Search(len(ws), func(i int) bool { return ws[i].UID >= uid })
	if i == len(ws) || ws[i].UID != uid {
		return nil, nil
	}
	if i >= len(v.meta) { // a view made elsewhere than Cache.Snapshot
		return &ws[i], nil
	}
	return &ws[i], v.meta[i]
}

// Rebuilt yields the workloads built afresh for this view: new ones, ones something of which
// changed since the previous view, and ones gone since (no longer in the view). Any other
// workload is as the previous view had it, apart from what each cycle sets (StartedAt of a
// pod not yet started, PreemptedBy, Nominated).
func (v *View) Rebuilt() iter.Seq[string] { return maps.Keys(v.rebuilt) }

// Snapshot builds one cycle's view from the cache and the settings. It rebuilds only the
// workloads changed since the last snapshot (all of them when the settings changed).
func (c *Cache) Snapshot(now time.Time, s *Settings) *View {
	c.mu.Lock()
	defer c.mu.Unlock()

	v := &View{Snapshot: scheduler.Snapshot{
		Now: now, Priorities: s.Priorities, Categories: s.Categories, WorkloadTypes: s.WorkloadTypes,
		NodePools: s.NodePools, Departments: s.Departments, Projects: s.Projects,
	}}
	snap := &v.Snapshot
	if c.index.settings != s {
		c.indexSettings(s)
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
	snap.Nodes = c.nodeList

	// Workloads: Arbiter's active pods grouped by top owner (S4), and the workloads Arbiter
	// suspended.
	v.rebuilt = make(map[string]bool, len(c.dirty))
	for key := range c.dirty {
		c.build(key)
		v.rebuilt[string(key)] = true
	}
	clear(c.dirty)
	c.orderEdits = 0
	if c.order == nil {
		c.order = slices.SortedFunc(maps.Values(c.built), byUID)
	}
	snap.Workloads = make([]scheduler.Workload, len(c.order))
	v.meta = make([]*WorkloadMeta, len(c.order))
	for i, b := range c.order {
		w := &snap.Workloads[i]
		*w = b.w
		v.meta[i] = b.meta
		if w.Phase == scheduler.PhaseRunning && w.StartedAt.IsZero() {
			if at, ok := c.boundAt[w.UID]; ok {
				w.StartedAt = at
			} else {
				w.StartedAt = now
			}
		}
	}
	find := func(uid string) *scheduler.Workload {
		w, _ := v.Workload(uid)
		return w
	}

	// Eviction bookkeeping (S19): a victim stays marked while any of its pods still hold
	// resources; once gone, its preemptor is nominated.
	for victim, preemptor := range c.evicting {
		holding := false
		for _, e := range c.members[types.UID(victim)] {
			if e.pod.NodeName != "" {
				holding = true
				break
			}
		}
		if holding {
			if w := find(victim); w != nil {
				w.PreemptedBy = preemptor
			}
			continue
		}
		delete(c.evicting, victim)
		c.nominated[preemptor] = now
	}
	for uid, since := range c.nominated {
		w := find(uid)
		switch {
		case w != nil && w.Phase != scheduler.PhaseRunning:
			w.Nominated = true
		case w != nil || now.Sub(since) > nominationTTL:
			delete(c.nominated, uid)
		}
	}
	return v
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
		x.typeBySlug[typeSlug(t.Name)] = t.Name
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

// arbiterSuspended reports whether an owner is a workload Arbiter suspended (S20): pending
// work whose pods will be made from its template.
func arbiterSuspended(o *owner) bool {
	return o.Suspended && o.Annotations[AnnotationSuspendedBy] != "" && o.Template != nil && !o.Finished
}

// build makes the workload keyed by a top owner's UID from its pods, or from its owner's
// template when Arbiter suspended it; a key with neither is dropped.
func (c *Cache) build(key types.UID) {
	b := c.groupWorkload(key)
	if b == nil {
		if o := c.owners[key]; o != nil && arbiterSuspended(o) {
			b = c.suspendedWorkload(o)
		}
	}
	if b != nil {
		b.w.PrepareLookups()
	}
	old := c.built[key]
	switch {
	case b == nil && old != nil:
		delete(c.built, key)
		delete(c.boundAt, string(key))
		c.reorder(old, -1)
	case b != nil:
		c.built[key] = b
		if old == nil {
			c.reorder(b, +1)
		} else {
			c.reorder(b, 0)
		}
	}
}

// maxOrderEdits is how many workloads may come or go in one snapshot before the order is
// sorted afresh rather than edited in place (each edit moves up to the whole slice).
const maxOrderEdits = 32

func byUID(a, b *builtWorkload) int { return strings.Compare(a.w.UID, b.w.UID) }

// reorder keeps order sorted as a workload comes (+1), goes (-1) or is rebuilt (0). In a fill
// a workload arrives nearly every cycle, and sorting thousands of them for each was a quarter
// of a cycle's snapshot; keeping the workloads themselves in order spares looking each up.
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

// groupWorkload builds a workload from its grouped pods, or returns nil when it has none.
func (c *Cache) groupWorkload(key types.UID) *builtWorkload {
	set := c.members[key]
	if len(set) == 0 {
		return nil
	}
	pods := slices.SortedFunc(maps.Values(set), func(a, b *podEntry) int { return strings.Compare(a.pod.Name, b.pod.Name) })
	top, bare := c.topOwner(pods[0])
	x := &c.index
	w := scheduler.Workload{
		UID: string(key), Namespace: top.Namespace, Name: top.Name, Kind: top.Kind, Group: top.Group,
		Labels: top.Labels, Annotations: top.Annotations, Gang: top.Gang, Phase: scheduler.PhasePending,
		QueuedAt: queuedAt(top, pods[0].created), Type: workloadType(top, x.typeByKind, x.typeBySlug),
		Pods: make([]scheduler.Pod, 0, len(pods)),
	}
	m := &WorkloadMeta{Owner: top.ref(), Bare: bare, Suspendable: scheduler.CanSuspend(top.Kind), Pods: make([]PodMeta, 0, len(pods))}
	for _, e := range pods {
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
			NodeName: e.pod.NodeName, Terminating: e.pod.Terminating, ScheduledReason: e.scheduledReason})
	}
	return &builtWorkload{w: w, meta: m}
}

// suspendedWorkload builds a workload Arbiter suspended from its owner's pod template (S20).
func (c *Cache) suspendedWorkload(o *owner) *builtWorkload {
	x := &c.index
	w := scheduler.Workload{
		UID: string(o.UID), Namespace: o.Namespace, Name: o.Name, Kind: o.Kind, Group: o.Group,
		Labels: o.Labels, Annotations: o.Annotations, Gang: o.Gang, Phase: scheduler.PhaseSuspended,
		QueuedAt: queuedAt(o, o.Created), Type: workloadType(o, x.typeByKind, x.typeBySlug),
	}
	w.Project = projectOf(o.Labels, o.Template.Labels, o.Namespace, x.settings.NamespaceProject, x.projects)
	template := corev1.Pod{ObjectMeta: o.Template.ObjectMeta, Spec: o.Template.Spec}
	template.Namespace = o.Namespace
	for i := int32(0); i < max(o.TemplateCount, 1); i++ {
		p := schedulingPod(&template)
		p.UID, p.Name = "", ""
		w.Pods = append(w.Pods, p)
	}
	return &builtWorkload{w: w, meta: &WorkloadMeta{Owner: o.ref(), Suspendable: true}}
}

// topOwner follows controller references up from a pod to its workload's top owner (S4): a
// Job owned by a CronJob is its own workload; a bare pod is its own workload; an owner that is
// not cached (a kind Arbiter does not watch) ends the walk with what its reference says.
func (c *Cache) topOwner(e *podEntry) (*owner, bool) {
	if e.controller == nil {
		return &owner{
			UID: types.UID(e.pod.UID), Kind: "Pod", APIVersion: "v1", Namespace: e.pod.Namespace,
			Name: e.pod.Name, Labels: e.pod.Labels, Created: e.created,
		}, true
	}
	ref := e.controller
	cur := c.owners[ref.UID]
	if cur == nil {
		return ownerFromRef(ref, e.pod.Namespace, e.created), false
	}
	for depth := 0; depth < 10; depth++ {
		if cur.Controller == nil || (cur.Kind == "Job" && cur.Group == "batch" && cur.Controller.Kind == "CronJob") {
			break
		}
		next := c.owners[cur.Controller.UID]
		if next == nil {
			return ownerFromRef(cur.Controller, cur.Namespace, cur.Created), false
		}
		cur = next
	}
	return cur, false
}

func ownerFromRef(ref *metav1.OwnerReference, namespace string, created time.Time) *owner {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return &owner{UID: ref.UID, Kind: ref.Kind, Group: gv.Group, APIVersion: ref.APIVersion, Namespace: namespace, Name: ref.Name, Created: created}
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
		if name, ok := bySlug[typeSlug(t)]; ok {
			return name
		}
		return t
	}
	if t, ok := byKind[[2]string{o.Group, o.Kind}]; ok {
		return t
	}
	return o.Kind
}

// typeSlug is a type name as a label value can hold it: lower case, spaces as dashes.
func typeSlug(name string) string { return strings.ToLower(strings.ReplaceAll(name, " ", "-")) }

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

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// OwnerOutcome reports whether a top owner the cache still holds has finished, and whether it
// failed (a Job's Complete or Failed condition); known is false for owners it does not hold.
func (c *Cache) OwnerOutcome(uid string) (finished, failed, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.owners[types.UID(uid)]
	if !ok {
		return false, false, false
	}
	return o.Finished, o.Failed, true
}
