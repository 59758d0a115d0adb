package kube

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// This file keeps what Arbiter has decided but the API server has not confirmed yet: binds
// assumed before their API call (S22), evictions in flight and the workloads nominated for the
// capacity they free (S19), and the PodScheduled reasons written (S23). The applier sets the
// marks; Settle, called once at the start of each cycle, moves them on.

type assumedBind struct {
	node string
	at   time.Time
}

// Assume records a bind before the API call, so the next snapshot already counts the pod on
// its node (S22). It returns when the pod was created (zero for a pod the cache does not
// hold), for the bind latency metric: read here, under the lookup Assume makes anyway, rather
// than for every bind of a plan before the first is sent.
func (c *Cache) Assume(pod types.UID, node string, now time.Time) (created time.Time) {
	c.mu.Lock()
	c.assumed[pod] = assumedBind{node: node, at: now}
	if e := c.pods[pod]; e != nil {
		created = e.created
		if b := c.built[e.workload]; b != nil && b.w.Phase != scheduler.PhaseRunning {
			c.timesOf(e.workload).bound = now // it starts (again, after an eviction) now
		}
		e.pod.NodeName = node
		c.touch(e)
	}
	c.refresh()
	c.mu.Unlock()
	return created
}

// Forget rolls back an assumed bind whose API call failed.
func (c *Cache) Forget(pod types.UID) {
	c.mu.Lock()
	delete(c.assumed, pod)
	if e := c.pods[pod]; e != nil {
		e.pod.NodeName = ""
		c.touch(e)
	}
	c.refresh()
	c.mu.Unlock()
	c.notify()
}

// MarkEvicting records that victim is being evicted for preemptor, at now.
func (c *Cache) MarkEvicting(victim, preemptor string, now time.Time) {
	c.mu.Lock()
	c.evicting[victim] = preemptor
	c.timesOf(types.UID(victim)).evicted = now
	c.mu.Unlock()
}

// Unmark takes back the marks of an eviction the API server refused, or that failed: the
// victim (or those of its pods, S26) still holds its resources, so its preemptor is not to
// wait for it. It asks for no cycle: the preemptor is held back meanwhile (HoldBack).
func (c *Cache) Unmark(victim string, pods []types.UID) {
	c.mu.Lock()
	if len(pods) == 0 {
		delete(c.evicting, victim)
	}
	for _, p := range pods {
		delete(c.evictingPods, p)
	}
	c.mu.Unlock()
}

type podEviction struct{ workload, preemptor string }

// MarkEvictingPods records that some of victim's pods, replicas beyond its minimum, are
// being evicted for preemptor (S26).
func (c *Cache) MarkEvictingPods(victim, preemptor string, pods []types.UID) {
	c.mu.Lock()
	for _, p := range pods {
		c.evictingPods[p] = podEviction{workload: victim, preemptor: preemptor}
	}
	c.mu.Unlock()
}

// nominationTTL bounds how long a nomination waits for its workload's pods to appear.
const nominationTTL = 30 * time.Second

// resumeTTL bounds how long a resume waits for the watch to say so (see Cache.Resumed).
const resumeTTL = 30 * time.Second

// Nominate makes a workload first in line for the capacity set aside for it (a resumed
// workload whose controller is recreating its pods).
func (c *Cache) Nominate(workload string, now time.Time) {
	c.mu.Lock()
	c.nominated[workload] = now
	c.mu.Unlock()
}

// Resumed records that a workload Arbiter suspended was resumed: its resume call succeeded.
// It is nominated (its pods, when they come, are tried first), and until the watch brings the
// resume back (UpsertOwner) the cache builds nothing from its suspended template: the cycles in
// between read the owner as still suspended, and resumed it again (a second Resumed event and
// history entry). Absent, it is as it will be once the watch says so, its reservation holding
// its place. A resume not confirmed within resumeTTL is dropped and the workload read as
// suspended again (Settle).
func (c *Cache) Resumed(workload string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nominated[workload] = now
	delete(c.workloadBackoff, workload)
	key := types.UID(workload)
	if o := c.owners[key]; o != nil && arbiterSuspended(o) {
		c.resuming[key] = now
		c.dirty[key] = struct{}{}
		c.refresh()
	}
}

// reservation is a plan's reservation and when it was last needed: made, or its workload
// still waiting for evictions made for it.
type reservation struct {
	scheduler.Reservation
	since time.Time
}

// Reserve keeps capacity a plan set aside for a workload until its pods are bound (S19); a
// later reservation for the same workload replaces it.
func (c *Cache) Reserve(r scheduler.Reservation, now time.Time) {
	c.mu.Lock()
	c.reserved[r.Workload] = reservation{Reservation: r, since: now}
	c.mu.Unlock()
}

// MarkBound records when Arbiter bound a workload's pods.
func (c *Cache) MarkBound(workload string, at time.Time) {
	c.mu.Lock()
	if b := c.built[types.UID(workload)]; b != nil && (b.times == nil || b.times.bound.IsZero()) {
		c.timesOf(types.UID(workload)).bound = at
	}
	delete(c.nominated, workload)
	delete(c.workloadBackoff, workload)
	c.mu.Unlock()
}

// SetScheduledReason remembers the PodScheduled reason being written to a pod, and when;
// "" when the write failed, so that the pod's next update says what it has.
func (c *Cache) SetScheduledReason(pod types.UID, reason string, at time.Time) {
	c.mu.Lock()
	if e := c.pods[pod]; e != nil {
		e.scheduledReason, e.scheduledAt, e.unseen = reason, at, reason
		c.touch(e)
	}
	c.refresh()
	c.mu.Unlock()
}

// Settle moves the eviction marks on (S19), once per cycle before its snapshot: a victim stays
// marked while any of its pods still hold resources; once none does, its preemptor is
// nominated. A nomination ends when its workload's pods are all bound (a workload of pods
// placed one by one may run some while the rest wait for their victims), or when
// nominationTTL passes without the workload's pods appearing.
//
// A victim holds resources exactly when its workload is Running: a workload built from pods
// runs as soon as one of them is on a node, and one built from a suspended owner's template
// holds nothing.
func (c *Cache) Settle(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for victim, preemptor := range c.evicting {
		if c.running(victim) {
			continue
		}
		delete(c.evicting, victim)
		c.nominated[preemptor] = now
	}
	for pod, ev := range c.evictingPods {
		if _, present := c.pods[pod]; present {
			continue
		}
		delete(c.evictingPods, pod)
		c.nominated[ev.preemptor] = now
	}
	for uid, since := range c.nominated {
		_, present := c.built[types.UID(uid)]
		if c.allBound(uid) || !present && now.Sub(since) > nominationTTL {
			delete(c.nominated, uid)
		}
	}
	c.settleReservations(now)
	c.settleBackoffs(now)
	lapsed := false
	for key, since := range c.resuming {
		if now.Sub(since) > resumeTTL {
			delete(c.resuming, key)
			c.dirty[key] = struct{}{}
			lapsed = true
		}
	}
	if lapsed {
		c.refresh() // read as suspended again
	}
	for _, key := range c.arrived {
		if b := c.built[key]; b != nil && (b.times == nil || b.times.seen.IsZero()) {
			c.timesOf(key).seen = now
		}
	}
	c.arrived = c.arrived[:0]
}

// settleReservations ends the reservations whose work is done: the workload's pods are all
// bound, or it neither waits for evictions made for it nor is nominated, or it has been
// nominated for reservationTTL without its pods being bound (the capacity goes back to
// everyone). A workload of several pods placed one by one may run with some of them while the
// others wait for their victims: its reservation lasts until they are bound too.
func (c *Cache) settleReservations(now time.Time) {
	if len(c.reserved) == 0 {
		return
	}
	waiting := map[string]bool{}
	for _, preemptor := range c.evicting {
		waiting[preemptor] = true
	}
	for _, ev := range c.evictingPods {
		waiting[ev.preemptor] = true
	}
	for uid, r := range c.reserved {
		_, nominated := c.nominated[uid]
		switch {
		case c.allBound(uid):
			delete(c.reserved, uid)
		case waiting[uid]:
			r.since = now
			c.reserved[uid] = r
		case !nominated || now.Sub(r.since) > reservationTTL:
			delete(c.reserved, uid)
		}
	}
}

// reservationTTL bounds how long a reservation outlives the evictions made for it: its
// workload, nominated, is bound in the next cycle unless its pods are still being made.
const reservationTTL = 2 * nominationTTL

// forgetWaiting drops what says since when a workload waits (seen, evicted): it and its
// owner are gone.
func (c *Cache) forgetWaiting(key types.UID) {
	c.clearTimes(key, func(t *workloadTimes) { t.seen, t.evicted = time.Time{}, time.Time{} })
}

// workloadTimes are the times the cache keeps of a workload across its rebuilds, each zero
// while not known: when a cycle first saw it and when Arbiter last evicted it (it waits since
// the later: S19's WaitingSince), kept while it or its owner is; and when Arbiter bound it (its
// start time until its pods report one), kept while it is.
type workloadTimes struct {
	seen, evicted, bound time.Time
}

// timesOf is key's entry of Cache.times, made if it has none (and given to its built workload).
func (c *Cache) timesOf(key types.UID) *workloadTimes {
	t := c.times[key]
	if t == nil {
		t = &workloadTimes{}
		c.times[key] = t
		if b := c.built[key]; b != nil {
			b.times = t
		}
	}
	return t
}

// clearTimes clears some of key's times, and drops its entry once none is left.
func (c *Cache) clearTimes(key types.UID, drop func(*workloadTimes)) {
	t := c.times[key]
	if t == nil {
		return
	}
	drop(t)
	if *t == (workloadTimes{}) {
		delete(c.times, key)
		if b := c.built[key]; b != nil && b.times == t {
			b.times = nil
		}
	}
}

// allBound reports whether a workload is built and every pod of it is on a node.
func (c *Cache) allBound(uid string) bool {
	b := c.built[types.UID(uid)]
	return b != nil && b.w.Phase == scheduler.PhaseRunning && !hasUnboundPod(&b.w)
}

// hasUnboundPod reports whether some pod of the workload is not on a node (pending, or one its
// suspended owner's template will make).
func hasUnboundPod(w *scheduler.Workload) bool {
	return slices.ContainsFunc(w.Pods, func(p scheduler.Pod) bool { return p.NodeName == "" })
}

// running reports whether a workload is built and Running.
func (c *Cache) running(uid string) bool {
	b := c.built[types.UID(uid)]
	return b != nil && b.w.Phase == scheduler.PhaseRunning
}
