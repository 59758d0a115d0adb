package kube

import (
	"maps"
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
}

// Cache holds the cluster as informers report it, plus what Arbiter has decided but the API
// server has not yet confirmed (assumed binds, evictions in flight).
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
	// boundAt remembers when Arbiter bound a workload, as its start time until the pods report one.
	boundAt map[string]time.Time

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
		changed:       make(chan struct{}, 1),
	}
}

// Changed is signalled (without blocking, coalescing) whenever the cache changes.
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
	c.nodes[n.Name] = sn
	c.mu.Unlock()
	c.notify()
}

// DeleteNode forgets a node.
func (c *Cache) DeleteNode(name string) {
	c.mu.Lock()
	delete(c.nodes, name)
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
	c.pods[p.UID] = e
	c.mu.Unlock()
	c.notify()
}

// DeletePod forgets a pod.
func (c *Cache) DeletePod(uid types.UID) {
	c.mu.Lock()
	delete(c.pods, uid)
	delete(c.assumed, uid)
	c.mu.Unlock()
	c.notify()
}

// UpsertOwner records a controller object.
func (c *Cache) UpsertOwner(o *owner) {
	c.mu.Lock()
	c.owners[o.UID] = o
	c.mu.Unlock()
	c.notify()
}

// DeleteOwner forgets a controller object.
func (c *Cache) DeleteOwner(uid types.UID) {
	c.mu.Lock()
	delete(c.owners, uid)
	c.mu.Unlock()
	c.notify()
}

// Assume records a bind before the API call, so the next snapshot already counts the pod on
// its node (S22).
func (c *Cache) Assume(pod types.UID, node string, now time.Time) {
	c.mu.Lock()
	c.assumed[pod] = assumedBind{node: node, at: now}
	if e := c.pods[pod]; e != nil {
		e.pod.NodeName = node
	}
	c.mu.Unlock()
}

// Forget rolls back an assumed bind whose API call failed.
func (c *Cache) Forget(pod types.UID) {
	c.mu.Lock()
	delete(c.assumed, pod)
	if e := c.pods[pod]; e != nil {
		e.pod.NodeName = ""
	}
	c.mu.Unlock()
	c.notify()
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
	if _, ok := c.boundAt[workload]; !ok {
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

// Snapshot builds one cycle's scheduler.Snapshot from the cache and the settings, with the
// metadata the applier needs, keyed by workload UID.
func (c *Cache) Snapshot(now time.Time, s *Settings) (scheduler.Snapshot, map[string]*WorkloadMeta) {
	c.mu.Lock()
	defer c.mu.Unlock()

	snap := scheduler.Snapshot{
		Now: now, Priorities: s.Priorities, Categories: s.Categories, WorkloadTypes: s.WorkloadTypes,
		NodePools: s.NodePools, Departments: s.Departments, Projects: s.Projects,
	}
	typeByKind := make(map[[2]string]string, len(s.WorkloadTypes))
	typeBySlug := make(map[string]string, len(s.WorkloadTypes))
	for _, t := range s.WorkloadTypes {
		typeByKind[[2]string{t.Group, t.Name}] = t.Name
		typeBySlug[typeSlug(t.Name)] = t.Name
	}
	projects := make(map[string]bool, len(s.Projects))
	for _, p := range s.Projects {
		projects[p.Name] = true
	}

	// Nodes, with what pods that are not Arbiter's hold on them (S3).
	occupied := make(map[string]scheduler.Resources)
	for _, e := range c.pods {
		if !e.ours && e.active && e.pod.NodeName != "" {
			occupied[e.pod.NodeName] = addResources(occupied[e.pod.NodeName], e.pod.Requests)
		}
	}
	snap.Nodes = make([]scheduler.Node, 0, len(c.nodes))
	for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
		n := c.nodes[name]
		n.Occupied = occupied[name]
		snap.Nodes = append(snap.Nodes, n)
	}

	// Workloads: Arbiter's active pods grouped by top owner (S4).
	byUID := map[string]*scheduler.Workload{}
	meta := map[string]*WorkloadMeta{}
	for _, e := range c.pods {
		if !e.ours || !e.active {
			continue
		}
		top, bare := c.topOwner(e)
		key := string(top.UID)
		w := byUID[key]
		if w == nil {
			w = &scheduler.Workload{
				UID: key, Namespace: top.Namespace, Name: top.Name, Kind: top.Kind, Group: top.Group,
				Labels: top.Labels, Annotations: top.Annotations, Gang: top.Gang, Phase: scheduler.PhasePending,
				QueuedAt: queuedAt(top, e.created),
			}
			w.Type = workloadType(top, typeByKind, typeBySlug)
			byUID[key] = w
			meta[key] = &WorkloadMeta{Owner: top.ref(), Bare: bare, Suspendable: scheduler.CanSuspend(top.Kind)}
		}
		if bare && w.QueuedAt.After(e.created) {
			w.QueuedAt = e.created
		}
		if w.Project == "" {
			w.Project = projectOf(top.Labels, e.pod.Labels, top.Namespace, s.NamespaceProject, projects)
		}
		w.Pods = append(w.Pods, e.pod)
		if e.pod.NodeName != "" {
			w.Phase = scheduler.PhaseRunning
			if !e.started.IsZero() && (w.StartedAt.IsZero() || e.started.Before(w.StartedAt)) {
				w.StartedAt = e.started
			}
		}
		meta[key].Pods = append(meta[key].Pods, PodMeta{UID: types.UID(e.pod.UID), Namespace: e.pod.Namespace, Name: e.pod.Name,
			NodeName: e.pod.NodeName, Terminating: e.pod.Terminating, ScheduledReason: e.scheduledReason})
	}

	// Workloads Arbiter suspended: pending work whose pods will be made from the template (S20).
	for _, o := range c.owners {
		if !o.Suspended || o.Annotations[AnnotationSuspendedBy] == "" || o.Template == nil || o.Finished {
			continue
		}
		key := string(o.UID)
		if _, ok := byUID[key]; ok {
			continue // pods still terminating; the workload is still counted by them
		}
		w := &scheduler.Workload{
			UID: key, Namespace: o.Namespace, Name: o.Name, Kind: o.Kind, Group: o.Group,
			Labels: o.Labels, Annotations: o.Annotations, Gang: o.Gang, Phase: scheduler.PhaseSuspended,
			QueuedAt: queuedAt(o, o.Created),
		}
		w.Type = workloadType(o, typeByKind, typeBySlug)
		w.Project = projectOf(o.Labels, o.Template.Labels, o.Namespace, s.NamespaceProject, projects)
		template := corev1.Pod{ObjectMeta: o.Template.ObjectMeta, Spec: o.Template.Spec}
		template.Namespace = o.Namespace
		for i := int32(0); i < max(o.TemplateCount, 1); i++ {
			p := schedulingPod(&template)
			p.UID, p.Name = "", ""
			w.Pods = append(w.Pods, p)
		}
		byUID[key] = w
		meta[key] = &WorkloadMeta{Owner: o.ref(), Suspendable: true}
	}

	// Eviction bookkeeping (S19): a victim stays marked while any of its pods still hold
	// resources; once gone, its preemptor is nominated.
	for victim, preemptor := range c.evicting {
		w, ok := byUID[victim]
		holding := false
		if ok {
			for _, p := range w.Pods {
				if p.NodeName != "" {
					holding = true
					break
				}
			}
		}
		if holding {
			w.PreemptedBy = preemptor
			continue
		}
		delete(c.evicting, victim)
		c.nominated[preemptor] = now
	}
	for uid, since := range c.nominated {
		w, ok := byUID[uid]
		switch {
		case ok && w.Phase != scheduler.PhaseRunning:
			w.Nominated = true
		case ok || now.Sub(since) > nominationTTL:
			delete(c.nominated, uid)
		}
	}

	keys := slices.Sorted(maps.Keys(byUID))
	snap.Workloads = make([]scheduler.Workload, 0, len(keys))
	for _, k := range keys {
		w := byUID[k]
		if w.Phase == scheduler.PhaseRunning && w.StartedAt.IsZero() {
			if at, ok := c.boundAt[k]; ok {
				w.StartedAt = at
			} else {
				w.StartedAt = now
			}
		}
		sort.Slice(w.Pods, func(i, j int) bool { return w.Pods[i].Name < w.Pods[j].Name })
		sort.Slice(meta[k].Pods, func(i, j int) bool { return meta[k].Pods[i].Name < meta[k].Pods[j].Name })
		snap.Workloads = append(snap.Workloads, *w)
	}
	for k := range c.boundAt {
		if _, ok := byUID[k]; !ok {
			delete(c.boundAt, k)
		}
	}
	return snap, meta
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

func addResources(a, b scheduler.Resources) scheduler.Resources {
	return scheduler.Resources{MilliCPU: a.MilliCPU + b.MilliCPU, Memory: a.Memory + b.Memory, GPUs: a.GPUs + b.GPUs, Pods: a.Pods + b.Pods}
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
