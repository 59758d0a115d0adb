package kube

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A workload waits since a cycle first saw it, or since Arbiter last evicted it (its seen and
// evicted times, inflight.go): S19 spares work that started after its preemptor began to
// wait. A new leader would see every waiting workload for the first time at its first cycle,
// after any victim started, and evict what its predecessor spared. So each term begins by
// seeding those times from the workload records (server/waiting_seed.go), through the methods
// below.

// WaitingWorkloads lists the workloads that wait now: some pod of theirs is not on a node
// (pending, or one its suspended owner's template will make). Bounded by the cache's workloads.
func (s *Scheduler) WaitingWorkloads() []string { return s.cache.WaitingWorkloads() }

// SeedWaiting gives waiting workloads the times they began to wait as recorded (Cache.SeedWaiting).
func (s *Scheduler) SeedWaiting(since map[string]time.Time, now time.Time) int {
	return s.cache.SeedWaiting(since, now)
}

// WaitingWorkloads lists the UIDs of the workloads that wait now, in UID order.
func (c *Cache) WaitingWorkloads() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	c.sortLists() // the order is left unsorted by the writes since the last snapshot
	var out []string
	for _, b := range c.order {
		if hasUnboundPod(&b.w) {
			out = append(out, b.w.UID)
		}
	}
	return out
}

// SeedWaiting sets, for each workload of since that still waits, when it began to wait: the
// time recorded, but never after now (a clock ahead, or a record read late) nor after what the
// cache already holds (a term's first cycle stamps now, after this; a replica that led before
// keeps its own earlier time). It returns how many workloads it seeded. Evictions this cache
// made itself still count from their own time (Snapshot takes the later of the two).
func (c *Cache) SeedWaiting(since map[string]time.Time, now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	seeded := 0
	for uid, at := range since {
		b := c.built[types.UID(uid)]
		if b == nil || !hasUnboundPod(&b.w) || at.IsZero() {
			continue
		}
		if at.After(now) {
			at = now
		}
		if b.times != nil && !b.times.seen.IsZero() && !at.Before(b.times.seen) {
			continue
		}
		c.timesOf(types.UID(uid)).seen = at
		seeded++
	}
	return seeded
}
