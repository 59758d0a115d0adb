package kube

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// The cache does one job per file:
//
//   - cache.go: the Cache itself, its lock and its change signal;
//   - ingest.go: informer events in (nodes, pods, owners);
//   - inflight.go: what Arbiter decided and the API server has not confirmed yet (assumed
//     binds, evictions, nominations; S19, S22), and Settle, which moves those marks on;
//   - grouping.go: which workload each pod belongs to (S4), kept current as events arrive;
//   - workload.go: how one workload is built from its pods or its owner's template (S4, S6);
//   - snapshot.go: the read-only copy a cycle decides from (View).
//
// Every write (an event, a mark, new settings) rebuilds what it made stale before it lets go
// of the lock, so a snapshot only copies, under a read lock, as Kueue's cache does.

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
	// Topologies are Arbiter's own (S29); the cluster's are merged in (topologies.go).
	Topologies []scheduler.Topology
}

// Cache holds the cluster as informers report it, plus what Arbiter has decided but the API
// server has not yet confirmed (assumed binds, evictions in flight). It keeps its workloads
// grouped as events arrive: an event marks the workloads it touches dirty, and the same write
// rebuilds only those.
type Cache struct {
	schedulerName string

	mu      sync.RWMutex
	nodes   map[string]scheduler.Node
	pods    map[types.UID]*podEntry
	owners  map[types.UID]*owner
	assumed map[types.UID]assumedBind
	// evicting maps a victim workload to the workload its eviction makes room for (S19), until
	// the victim has no pods left holding resources.
	evicting map[string]string
	// evictingPods are replicas beyond a semi-preemptible workload's minimum evicted alone
	// (S26): the workload keeps running, so each pod is followed until it is gone.
	evictingPods map[types.UID]podEviction
	// nominated are preemptors whose victims are gone, and workloads just resumed: tried first
	// (S19), so the capacity freed or set aside for them is theirs. An entry lasts until the
	// workload runs, or nominationTTL passes (its pods never came).
	nominated map[string]time.Time
	// bindBackoff holds back the pods whose bind failed (BindFailed), by pod UID, and
	// workloadBackoff the workloads an eviction or a resume failed for (HoldBack), by
	// workload UID (backoff.go says how long each entry lasts).
	bindBackoff     map[types.UID]backoff
	workloadBackoff map[string]backoff
	// resuming are workloads Arbiter resumed whose owners the watch still shows suspended by
	// it, and when (Cache.Resumed): one entry per owner, until the watch confirms the resume,
	// the owner is deleted or resumeTTL passes.
	resuming map[types.UID]time.Time
	// reserved is capacity set aside for workloads that cannot take it at once (S19): a
	// preemptor's place while its victims terminate, a resumed workload's while its pods are
	// made. Each snapshot carries them; Settle ends them (inflight.go).
	reserved map[string]reservation
	// times are when a cycle first saw each workload, when Arbiter last evicted it and when
	// it bound it (workloadTimes), by workload UID; arrived are the workloads built since the
	// last Settle, which stamps their first sighting.
	times   map[types.UID]*workloadTimes
	arrived []types.UID

	// The incremental index (grouping.go). members are the grouped pods of each workload;
	// byController the grouped pods of each direct controller (to regroup them when an owner
	// arrives or changes); built the workloads as last built; dirty those a write has to build
	// again before it lets go of the lock.
	members      map[types.UID]map[types.UID]*podEntry
	byController map[types.UID]map[types.UID]*podEntry
	// awaiting are the pending pods waiting for an owner of theirs the cache has not seen yet,
	// by that owner's UID (place): placed once it arrives, dropped with the pod.
	awaiting map[types.UID]map[types.UID]*podEntry
	// departed keeps, for an owner deleted while pods it controls remain, its own controller,
	// so that the walk up goes on through it (topOwner): the garbage collector deletes a
	// Deployment's ReplicaSet before its pods, which would otherwise be a workload of their own
	// for a moment. Kept for the last maxDeparted owners deleted (departedOrder, oldest first;
	// the garbage collector deletes the pods within seconds), or until the owner comes back.
	departed      map[types.UID]*metav1.OwnerReference
	departedOrder []types.UID
	built         map[types.UID]*builtWorkload
	dirty         map[types.UID]struct{}
	// trainJobSets maps a TrainJob to the JobSet the Trainer made for it, whose replicated jobs
	// give the TrainJob's gang and pods (kinds.go); an entry goes with its JobSet.
	trainJobSets map[types.UID]types.UID
	// ownedByPod lists, for a pod, the owners it controls (a LeaderWorkerSet's leader owns its
	// workers' StatefulSet): the pods under them are walked through it to their top owner, so
	// its coming and going files them again. Entries go with their owners.
	ownedByPod map[types.UID]map[types.UID]struct{}
	// order is built's workloads sorted by UID, or nil to be sorted afresh (see reorder);
	// orderEdits counts workloads that came or went in the current write.
	order      []*builtWorkload
	orderEdits int
	// occupied is what pods of other schedulers hold on each node (S3); nodeList the sorted
	// nodes with it, nil when a node or an occupation changed.
	occupied map[string]scheduler.Resources
	nodeList []scheduler.Node
	// sortMu guards order and nodeList while a reader holding mu for reading sorts them
	// (sortLists); writers, holding mu, need not take it.
	sortMu sync.Mutex
	index  settingsIndex
	// topologies are Kueue's and KAI's Topology objects (topologies.go).
	topologies clusterTopologies

	changed chan struct{}
	// now is the clock the pods of new Jobs are foreseen by (foreseen_pods.go); nil is the
	// wall clock (a simulation sets its own).
	now func() time.Time
}

// clock is the time now, by the cache's clock.
func (c *Cache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// NewCache returns an empty cache for pods whose spec.schedulerName is schedulerName.
func NewCache(schedulerName string) *Cache {
	c := &Cache{
		schedulerName:   schedulerName,
		nodes:           map[string]scheduler.Node{},
		pods:            map[types.UID]*podEntry{},
		owners:          map[types.UID]*owner{},
		assumed:         map[types.UID]assumedBind{},
		evicting:        map[string]string{},
		evictingPods:    map[types.UID]podEviction{},
		nominated:       map[string]time.Time{},
		resuming:        map[types.UID]time.Time{},
		bindBackoff:     map[types.UID]backoff{},
		workloadBackoff: map[string]backoff{},
		reserved:        map[string]reservation{},
		times:           map[types.UID]*workloadTimes{},
		members:         map[types.UID]map[types.UID]*podEntry{},
		byController:    map[types.UID]map[types.UID]*podEntry{},
		awaiting:        map[types.UID]map[types.UID]*podEntry{},
		departed:        map[types.UID]*metav1.OwnerReference{},
		built:           map[types.UID]*builtWorkload{},
		dirty:           map[types.UID]struct{}{},
		trainJobSets:    map[types.UID]types.UID{},
		ownedByPod:      map[types.UID]map[types.UID]struct{}{},
		occupied:        map[string]scheduler.Resources{},
		changed:         make(chan struct{}, 1),
	}
	c.indexSettings(&Settings{})
	c.refresh()
	return c
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

// OwnerStopped reports whether a top owner the cache holds is suspended and not by Arbiter.
func (c *Cache) OwnerStopped(uid string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	o, ok := c.owners[types.UID(uid)]
	return ok && o.Suspended && !o.Finished && o.Annotations[AnnotationSuspendedBy] == ""
}

// OwnerOutcome reports whether a top owner the cache still holds has finished, and whether it
// failed (a Job's Complete or Failed condition); known is false for owners it does not hold.
func (c *Cache) OwnerOutcome(uid string) (finished, failed, known bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	o, ok := c.owners[types.UID(uid)]
	if !ok {
		return false, false, false
	}
	return o.Finished, o.Failed, true
}

// OwnerEnded is when a finished top owner the cache holds ended, as the cluster says (a Job's
// completion time, else its Complete or Failed condition's); zero when not known.
func (c *Cache) OwnerEnded(uid string) time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if o, ok := c.owners[types.UID(uid)]; ok && o.Finished {
		return o.Ended
	}
	return time.Time{}
}
