package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A cycle makes each message of the commonest reasons once and gives it to every waiting
// workload whose failure has the same numbers (messageKey). Each workload must still read the
// sentence of its own failure: its project or department, its pool, what it asks for and the
// bound it met.
func TestMessagesAreEachWorkloadsOwnWhenMadeOnce(t *testing.T) {
	// the node's 8 GPUs: 5 taken by pods of no workload, 3 by ra, rb and rc
	s := snap().node(node("n1").gpus(8).occupied(5)).dept("small", 1, 2).
		project(project("a", 1).limit(1), project("b", 1).limit(1), project("c", 1).dept("small"), project("d", 0)).
		wl(
			wl("ra").in("a").on(1, "n1"), wl("rb").in("b").on(1, "n1"), wl("rc").in("c").on(1, "n1"),
			// the limits of two projects, met with the same numbers
			wl("a2").in("a").queued(2), wl("b2").in("b").queued(2),
			// the department's limit, met by a project of it
			wl("c1").in("c").gpus(2).queued(3),
			// not enough free capacity, for two sizes
			wl("d1").in("d").gpus(2).queued(4), wl("d2").in("d").gpus(3).queued(5), wl("d3").in("d").gpus(2).queued(6),
			// gangs waiting for their pods, two counts
			wl("g1").in("d").gang(3).pods(2).queued(7), wl("g2").in("d").gang(4).pods(2).queued(8),
		).build()
	got := map[string]string{}
	for _, p := range s.Plan().Pending {
		got[p.Name] = p.Message
	}
	capacity := func(n string) string {
		return "Not enough free capacity in pool default for " + n + " GPUs (0 free, or not on nodes that fit its pods); it starts when other work finishes."
	}
	limit := "; wait for its other workloads to finish or ask an administrator to raise the limit."
	want := map[string]string{
		"a2": "project a would use 2 GPUs in pool default, limit 1" + limit,
		"b2": "project b would use 2 GPUs in pool default, limit 1" + limit,
		"c1": "department small would use 3 GPUs in pool default, limit 2" + limit,
		"d1": capacity("2"),
		"d2": capacity("3"),
		"d3": capacity("2"),
		"g1": "Waiting for all 3 pods of the gang; it starts once its controller has created them all.",
		"g2": "Waiting for all 4 pods of the gang; it starts once its controller has created them all.",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
}

// Held-back messages are made once too: each names the workload it is held back for.
func TestHeldBackMessagesNameTheirOwnClaimant(t *testing.T) {
	// Two nodes of 4 GPUs, 2 free on each. In p, wp (4 GPUs) waits for rp, young enough for
	// p's minimum runtime; likewise wq in q. Lower-priority work of each waits behind them.
	s := snap().gpuNodes("n", 2, 4).project(project("p", 4).minRuntime(600), project("q", 4).minRuntime(600)).
		wl(
			wl("rp").in("p").preemptible().prio("low").gpus(2).on(59, "n1"),
			wl("rq").in("q").preemptible().prio("low").gpus(2).on(59, "n2"),
			wl("wp").in("p").preemptible().prio("high").gpus(4).queued(1),
			wl("wq").in("q").preemptible().prio("high").gpus(4).queued(1),
			wl("vp1").in("p").preemptible().prio("low").gpus(2).queued(2),
			wl("vp2").in("p").preemptible().prio("low").gpus(2).queued(3),
			wl("vq1").in("q").preemptible().prio("low").gpus(2).queued(2),
			wl("vq2").in("q").preemptible().prio("low").gpus(2).queued(3),
		).build()
	got := map[string]string{}
	for _, p := range s.Plan().Pending {
		got[p.Name] = p.Message
	}
	preempt := "would preempt it (higher priority in its project, S16)"
	want := map[string]string{
		"vp1": heldMessage("default", "wp", preempt),
		"vp2": heldMessage("default", "wp", preempt),
		"vq1": heldMessage("default", "wq", preempt),
		"vq2": heldMessage("default", "wq", preempt),
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			delete(got, name) // the claimants' own messages are not what this is about
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
}
