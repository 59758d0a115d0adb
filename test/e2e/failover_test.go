package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
)

// failoverEnv starts two replicas with leader election on one database, replica a leading,
// and Jobs arriving every 300 ms.
func failoverEnv(t *testing.T) (e *env, ns string, a, b *replica, feed *jobFeed) {
	e = newEnv(t, 2, 8)
	e.a.stop() // newEnv's in-process Arbiter; the replicas below replace it
	ns = e.project("failover", 16, store.PolicyUpdate{})
	a = e.startReplica("a")
	e.eventually("replica a leads", time.Minute, func() bool { return e.leaseHolder() == "a" })
	b = e.startReplica("b")
	e.eventually("replica b is up and sees a leading", time.Minute, func() bool { return hasLine(b.logText(), `another replica leads" leader=a`) })
	feed = e.feedJobs(ns, 300*time.Millisecond)
	e.eventually("replica a binds the arriving Jobs", time.Minute, func() bool {
		by, _ := e.scheduledBy(ns)
		return len(by["a"]) >= 3
	})
	return e, ns, a, b, feed
}

// TestFailover_LeaderKilled: the leader dies (SIGKILL) while Jobs keep arriving; the standby
// takes over within the lease duration plus a few seconds, every pod is bound exactly once,
// no workload record is lost and pending reasons are written by the new leader.
func TestFailover_LeaderKilled(t *testing.T) {
	t.Parallel()
	e, ns, a, b, feed := failoverEnv(t)
	a.signal(t, syscall.SIGKILL)
	killed := time.Now()
	var firstBind time.Duration
	e.eventually("replica b binds", time.Minute, func() bool {
		by, _ := e.scheduledBy(ns)
		if len(by["b"]) == 0 {
			return false
		}
		firstBind = time.Since(killed)
		return true
	})
	t.Logf("failover: leader killed → first bind by the new leader in %s (lease %s)", firstBind.Round(10*time.Millisecond), testLease)
	if limit := testLease + 15*time.Second; firstBind > limit {
		t.Errorf("failover took %s, more than the lease duration plus 15 s", firstBind)
	}
	if h := e.leaseHolder(); h != "b" {
		t.Errorf("lease held by %q after failover, want b", h)
	}
	jobs := feed.halt()
	// A Job that cannot fit the pool: the new leader says why it waits.
	big := e.job(jobSpec{name: "too-big", namespace: ns, gpus: 9})
	e.eventually("the new leader writes the pending reason", 30*time.Second, func() bool {
		reason, _ := e.pendingReason(ns, "too-big")
		return reason != ""
	})
	e.checkBoundOnce(ns, jobs)
	e.checkRecords(jobs)
	if hasLine(b.logText(), "bind failed") {
		t.Errorf("replica b's binds conflicted with replica a's")
	}
	e.eventually("the waiting Job has its record", 30*time.Second, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(big.UID))
		return err == nil && r.Phase == "Pending"
	})
	if !hasLine(b.logText(), "leading: this replica schedules now") {
		t.Errorf("replica b never said it leads")
	}
}

// TestFailover_LeaderFrozen: the leader is frozen (SIGSTOP) past its lease, the standby takes
// over, and the old leader, resumed, binds and evicts nothing: it notices it no longer holds a
// fresh lease before any call.
func TestFailover_LeaderFrozen(t *testing.T) {
	t.Parallel()
	e, ns, a, _, feed := failoverEnv(t)
	a.signal(t, syscall.SIGSTOP)
	frozen := time.Now()
	e.eventually("replica b takes over and binds", time.Minute, func() bool {
		by, _ := e.scheduledBy(ns)
		return e.leaseHolder() == "b" && len(by["b"]) > 0
	})
	a.signal(t, syscall.SIGCONT)
	e.eventually("replica a notices it no longer leads", time.Minute, func() bool {
		return hasLine(a.logText(), "no longer leading")
	})
	// Jobs keep arriving a little longer after a has woken: only b may bind them.
	feed.mu.Lock()
	after := len(feed.names)
	feed.mu.Unlock()
	e.eventually("more Jobs arrive after a woke", time.Minute, func() bool {
		feed.mu.Lock()
		defer feed.mu.Unlock()
		return len(feed.names) >= after+5
	})
	jobs := feed.halt()
	e.checkBoundOnce(ns, jobs)
	e.checkRecords(jobs)
	by, _ := e.scheduledBy(ns)
	// Event times have a resolution of a second; a's last events before the freeze may carry
	// the freeze's second.
	for _, ev := range by["a"] {
		if ev.FirstTimestamp.Time.After(frozen.Add(time.Second)) {
			t.Errorf("replica a bound %s after it was frozen (at %s)", ev.InvolvedObject.Name, ev.FirstTimestamp.Time.Format(time.RFC3339))
		}
	}
	if hasLine(a.logText(), "bind failed") || hasLine(a.logText(), "eviction failed") {
		t.Errorf("replica a tried to act after waking")
	}
}
