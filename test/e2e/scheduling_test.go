package e2e

import (
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
)

// TestOSMOQueueOrderOnTwoGPUs is OSMO's WF1-WF6 example on a real cluster: WF1 and WF2 hold
// both GPUs; WF3 (low), WF4 (high), WF5 (medium-high) and WF6 (high) queue; as GPUs free up
// they start by priority, then by queue time: WF4 and WF6, then WF5, then WF3 (S10).
func TestOSMOQueueOrderOnTwoGPUs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("osmo", 4, store.PolicyUpdate{})
	prio := func(p string) map[string]string { return map[string]string{"priorityClassName": p} }

	uid := map[string]string{}
	uid["wf1"] = string(e.job(jobSpec{name: "wf1", namespace: ns, runSeconds: "8", labels: prio("medium-high")}).UID)
	uid["wf2"] = string(e.job(jobSpec{name: "wf2", namespace: ns, runSeconds: "8", labels: prio("medium-high")}).UID)
	e.eventually("WF1 and WF2 run", time.Minute, func() bool { return e.running(ns, "wf1") == 1 && e.running(ns, "wf2") == 1 })

	// WF6 runs longer than WF4, so the two GPUs free one at a time and each goes to the
	// head of the queue: WF5 first, then WF3.
	for _, wf := range []struct{ name, prio, run string }{{"wf3", "low", "2"}, {"wf4", "high", "2"}, {"wf5", "medium-high", "2"}, {"wf6", "high", "5"}} {
		uid[wf.name] = string(e.job(jobSpec{name: wf.name, namespace: ns, runSeconds: wf.run, labels: prio(wf.prio)}).UID)
		time.Sleep(1100 * time.Millisecond) // distinct creation times (they have 1 s resolution)
	}
	// While WF1 and WF2 hold the GPUs, the queue says why it waits.
	if reason, msg := e.pendingReason(ns, "wf3"); reason != "InsufficientCapacity" || msg == "" {
		t.Errorf("WF3 waits with %q %q, want InsufficientCapacity and a sentence", reason, msg)
	}

	start := map[string]time.Time{}
	for _, wf := range []string{"wf1", "wf2", "wf3", "wf4", "wf5", "wf6"} {
		e.eventually(wf+" is admitted", 2*time.Minute, func() bool { start[wf] = e.admittedAt(uid[wf]); return !start[wf].IsZero() })
	}
	before := func(a, b string) {
		if !start[a].Before(start[b]) {
			t.Errorf("%s started at %s, not before %s at %s", a, start[a].Format("15:04:05.000"), b, start[b].Format("15:04:05.000"))
		}
	}
	before("wf2", "wf4")
	before("wf2", "wf6")
	before("wf4", "wf5")
	before("wf6", "wf3")
	before("wf5", "wf3")
	if !hasEvent(e.events(ns, "wf3"), "InsufficientCapacity") {
		t.Errorf("WF3 has no InsufficientCapacity event: %s", fmtEvents(e.events(ns, "wf3")))
	}
}
