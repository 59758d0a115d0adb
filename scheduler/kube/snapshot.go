package kube

import (
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// This file takes a cycle's snapshot: a copy of the cache, under a read lock, that changes
// nothing in it. The workloads are kept built as events arrive (grouping.go) and the eviction
// marks are moved on by Settle (inflight.go), so the snapshot only copies them and sets on its
// copies what each cycle sets.

// WorkloadMeta is what the applier needs of a workload beyond the plan: the object to record
// events on and to suspend or resume, and its pods.
type WorkloadMeta struct {
	Owner ownerRef
	// Bare is set for a workload that is a single pod without a controller.
	Bare bool
	// Suspendable is set when the top owner has a suspend switch Arbiter knows.
	Suspendable bool
	// GroupedBy is a sentence saying which rule grouped the workload's pods (S4, S5): the
	// owner it is grouped by, and for a kind Arbiter does not know, where its gang came from.
	GroupedBy string
	Pods      []PodMeta
}

// PodMeta names a pod and its current PodScheduled=False reason.
type PodMeta struct {
	UID             types.UID
	Namespace, Name string
	NodeName        string
	Terminating     bool
	ScheduledReason string
	ScheduledAt     time.Time // when ScheduledReason was written
	Created         time.Time // the pod's creation
	Started         time.Time // status.startTime; zero until the kubelet starts it
	Phase           string    // status.phase
	Containers      []Container
}

// Container names one of a pod's containers and its image.
type Container struct {
	Name, Image string
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

// Rebuilt yields the workloads built afresh since the previous view (see CompareWith): new
// ones, ones something of which changed, and ones gone since (no longer in the view). Any
// other workload is as the previous view had it, apart from what each cycle sets (StartedAt of
// a pod not yet started, PreemptedBy, Nominated).
func (v *View) Rebuilt() iter.Seq[string] { return maps.Keys(v.rebuilt) }

// CompareWith records which workloads were built afresh since prev, the previous cycle's view
// of the same cache (nil for the first cycle: every workload is new). A workload shares its
// metadata with every view until it is rebuilt, so comparing the two sorted lists is enough.
func (v *View) CompareWith(prev *View) {
	ws := v.Snapshot.Workloads
	v.rebuilt = make(map[string]bool)
	if prev == nil || len(prev.meta) != len(prev.Snapshot.Workloads) || len(v.meta) != len(ws) {
		for _, w := range ws {
			v.rebuilt[w.UID] = true
		}
		if prev != nil {
			for _, w := range prev.Snapshot.Workloads {
				v.rebuilt[w.UID] = true
			}
		}
		return
	}
	pw := prev.Snapshot.Workloads
	i, j := 0, 0
	for i < len(ws) || j < len(pw) {
		switch {
		case j == len(pw) || i < len(ws) && ws[i].UID < pw[j].UID: // new
			v.rebuilt[ws[i].UID] = true
			i++
		case i == len(ws) || pw[j].UID < ws[i].UID: // gone
			v.rebuilt[pw[j].UID] = true
			j++
		default:
			if v.meta[i] != prev.meta[j] {
				v.rebuilt[ws[i].UID] = true
			}
			i++
			j++
		}
	}
}

// Snapshot copies the cache into one cycle's view, under a read lock: the nodes, the workloads
// sorted by UID, and the settings last given (SetSettings). It changes nothing in the cache;
// the eviction marks it shows are as the last Settle left them.
func (c *Cache) Snapshot(now time.Time) *View {
	c.mu.RLock()
	defer c.mu.RUnlock()
	c.sortLists()

	s := c.index.settings
	v := &View{Snapshot: scheduler.Snapshot{
		Now: now, Priorities: s.Priorities, Categories: s.Categories, WorkloadTypes: s.WorkloadTypes,
		NodePools: s.NodePools, Departments: s.Departments, Projects: s.Projects,
		Nodes:      c.nodeList, // never edited in place: a change makes a new list
		Topologies: c.topologies.merged(s.Topologies),
	}}
	snap := &v.Snapshot

	// Workloads: Arbiter's active pods grouped by top owner (S4), and the workloads Arbiter
	// suspended. A running workload's start is when its first pod started, else when Arbiter
	// bound it, else now.
	snap.Workloads = make([]scheduler.Workload, len(c.order))
	v.meta = make([]*WorkloadMeta, len(c.order))
	for i, b := range c.order {
		w := &snap.Workloads[i]
		*w = b.w
		v.meta[i] = b.meta
		var t workloadTimes // zero: none kept
		if b.times != nil {
			t = *b.times
		}
		// It waits since a cycle first saw it, or Arbiter last evicted it (queue times are
		// Kubernetes timestamps, to the second: too coarse to tell what started before).
		w.WaitingSince = t.seen
		if t.evicted.After(w.WaitingSince) {
			w.WaitingSince = t.evicted
		}
		// A pod's start time is to the second too; Arbiter's bind, just before it, is exact.
		if w.Phase == scheduler.PhaseRunning && t.bound.After(w.StartedAt) {
			w.StartedAt = t.bound
		}
		if w.Phase == scheduler.PhaseRunning && w.StartedAt.IsZero() {
			w.StartedAt = now // Arbiter did not bind it, and no pod says when it started
		}
	}

	if len(c.bindBackoff)+len(c.workloadBackoff) > 0 {
		c.holdBack(v, now)
	}

	// Evictions in flight (S19): a victim still holding resources (still Running) shows its
	// preemptor; a nominated workload not yet running is tried first.
	for victim, preemptor := range c.evicting {
		if w, _ := v.Workload(victim); w != nil && w.Phase == scheduler.PhaseRunning {
			w.PreemptedBy = preemptor
		}
	}
	for pod, ev := range c.evictingPods {
		if _, present := c.pods[pod]; !present {
			continue
		}
		if w, _ := v.Workload(ev.workload); w != nil && w.Phase == scheduler.PhaseRunning {
			w.PreemptedBy = ev.preemptor
		}
	}
	for uid := range c.nominated {
		if w, _ := v.Workload(uid); w != nil && hasUnboundPod(w) {
			w.Nominated = true
		}
	}
	if len(c.reserved) > 0 {
		snap.Reservations = make([]scheduler.Reservation, 0, len(c.reserved))
		for _, r := range c.reserved {
			snap.Reservations = append(snap.Reservations, r.Reservation)
		}
		slices.SortFunc(snap.Reservations, func(a, b scheduler.Reservation) int { return strings.Compare(a.Workload, b.Workload) })
	}
	return v
}
