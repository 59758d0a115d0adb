package kube

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// This file holds back what the API server refused, or whose call failed: a pod whose bind
// failed, a workload for which an eviction failed, and a workload whose resume failed. Tried
// again at once, a refused bind made a loop of its own (the rollback asks for a cycle, which
// bound it again: 118 binds a second for one pod, each refused), and a refused eviction or
// resume was tried at every cycle. Each is tried again after a delay doubling from
// backoffFirst to backoffMost, as kube-scheduler backs off a pod (its
// podInitialBackoffSeconds and podMaxBackoffSeconds); meanwhile the snapshots leave its
// workload out (holdBack).

const (
	backoffFirst = time.Second
	backoffMost  = 10 * time.Second
)

// backoff is how long something is held back after its last failure, and until when.
type backoff struct {
	delay time.Duration
	until time.Time
}

// next is the backoff after one more failure at now.
func (b backoff) next(now time.Time) backoff {
	b.delay = min(max(2*b.delay, backoffFirst), backoffMost)
	b.until = now.Add(b.delay)
	return b
}

// BindFailed rolls back an assumed bind the API server refused, or that failed, and holds the
// pod back. Its entry lasts until the pod is bound or deleted.
func (c *Cache) BindFailed(pod types.UID, now time.Time) {
	c.mu.Lock()
	c.bindBackoff[pod] = c.bindBackoff[pod].next(now)
	c.mu.Unlock()
	c.Forget(pod)
}

// HoldBack holds a workload back after a call made for it failed or was refused: an
// eviction for it as the preemptor (the victim's marks are taken back: Unmark), or its
// resume. Its entry lasts until the workload is bound (MarkBound) or resumed (Resumed), or
// backoffMost after its delay ended (Settle).
func (c *Cache) HoldBack(workload string, now time.Time) {
	if workload == "" {
		return
	}
	c.mu.Lock()
	c.workloadBackoff[workload] = c.workloadBackoff[workload].next(now)
	c.mu.Unlock()
}

// settleBackoffs forgets the workloads' backoffs not renewed for backoffMost after their
// delay ended: the refusal is over, or the workload no longer asks. The caller holds c.mu.
func (c *Cache) settleBackoffs(now time.Time) {
	for uid, b := range c.workloadBackoff {
		if now.Sub(b.until) > backoffMost {
			delete(c.workloadBackoff, uid)
		}
	}
}

// holdBack leaves out of a view the workloads held back at now — a pod of which waits after a
// failed bind, or held back by HoldBack — unless they run (a pod of theirs is bound): those
// hold nothing, and are tried again once the delay has passed (the loop's interval brings a
// cycle); one that runs stays, since what its pods hold must be counted. The caller holds
// c.mu.
func (c *Cache) holdBack(v *View, now time.Time) {
	held := map[string]bool{}
	for pod, b := range c.bindBackoff {
		if e := c.pods[pod]; e != nil && e.workload != "" && now.Before(b.until) {
			held[string(e.workload)] = true
		}
	}
	for uid, b := range c.workloadBackoff {
		if now.Before(b.until) {
			held[uid] = true
		}
	}
	if len(held) == 0 {
		return
	}
	ws, n := v.Snapshot.Workloads, 0
	for i := range ws {
		if held[ws[i].UID] && ws[i].Phase != scheduler.PhaseRunning {
			continue
		}
		ws[n], v.meta[n] = ws[i], v.meta[i]
		n++
	}
	v.Snapshot.Workloads, v.meta = ws[:n], v.meta[:n]
}
