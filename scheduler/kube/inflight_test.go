package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cycleView takes a view as the scheduler's cycle does: the cycle's settings given, the marks
// in flight settled, then the read-only snapshot.
func cycleView(c *Cache, now time.Time, s *Settings) *View {
	c.SetSettings(s)
	c.Settle(now)
	return c.Snapshot(now)
}

// flags is what S19 shows of each workload in a view: whom it is evicted for, or "nominated".
func flags(v *View) map[string]string {
	out := map[string]string{}
	for _, w := range v.Snapshot.Workloads {
		switch {
		case w.PreemptedBy != "":
			out[w.UID] = "evicted for " + w.PreemptedBy
		case w.Nominated:
			out[w.UID] = "nominated"
		default:
			out[w.UID] = ""
		}
	}
	return out
}

// TestS19_SnapshotOnlyCopiesSettleMovesEvictionsOn: a victim shows its preemptor while its pods
// hold resources; once they are gone, snapshots taken without a Settle in between are equal
// and nominate no one, and the Settle that follows nominates the preemptor.
func TestS19_SnapshotOnlyCopiesSettleMovesEvictionsOn(t *testing.T) {
	c := NewCache("arbiter")
	victim := gpuPod("victim", "v1", 8, nil)
	victim.Spec.NodeName = "n1"
	c.UpsertPod(victim)
	c.UpsertPod(gpuPod("preemptor", "p1", 8, nil))
	c.MarkEvicting("v1", "p1")
	settings := &Settings{}

	if d := cmp.Diff(map[string]string{"v1": "evicted for p1", "p1": ""}, flags(cycleView(c, t0, settings))); d != "" {
		t.Errorf("while the victim holds its node (-want +got):\n%s", d)
	}

	c.DeletePod("v1")
	first, second := c.Snapshot(t0.Add(time.Second)), c.Snapshot(t0.Add(time.Second))
	opts := cmp.Options{cmpopts.EquateEmpty(), cmp.AllowUnexported(ownerRef{})}
	if d := cmp.Diff(first.Snapshot, second.Snapshot, opts); d != "" {
		t.Errorf("two snapshots without a Settle differ (-first +second):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"p1": ""}, flags(second)); d != "" {
		t.Errorf("a snapshot moved the eviction on (-want +got):\n%s", d)
	}

	c.Settle(t0.Add(time.Second))
	if d := cmp.Diff(map[string]string{"p1": "nominated"}, flags(c.Snapshot(t0.Add(time.Second)))); d != "" {
		t.Errorf("after Settle (-want +got):\n%s", d)
	}

	// The preemptor bound: the nomination has done its work and ends at the next Settle.
	c.Assume("p1", "n1", t0.Add(2*time.Second))
	c.MarkBound("p1", t0.Add(2*time.Second))
	if d := cmp.Diff(map[string]string{"p1": ""}, flags(cycleView(c, t0.Add(2*time.Second), settings))); d != "" {
		t.Errorf("once the preemptor runs (-want +got):\n%s", d)
	}
}

// TestS19_NominationWaitsForItsPodsUntilTTL: a nominated workload whose pods have not come yet
// (a resumed Job recreating them) keeps its nomination across Settles for nominationTTL, and
// loses it after.
func TestS19_NominationWaitsForItsPodsUntilTTL(t *testing.T) {
	cases := []struct {
		name     string
		podsDue  time.Duration
		wantFlag string
	}{
		{"pods within the TTL", nominationTTL - time.Second, "nominated"},
		{"pods after the TTL", nominationTTL + time.Second, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache("arbiter")
			c.Nominate("r1", t0)
			c.Settle(t0.Add(tc.podsDue)) // a cycle while the pods are still missing
			c.UpsertPod(gpuPod("resumed", "r1", 1, nil))
			if d := cmp.Diff(map[string]string{"r1": tc.wantFlag}, flags(c.Snapshot(t0.Add(tc.podsDue)))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
