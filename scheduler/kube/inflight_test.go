package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
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
	c.MarkEvicting("v1", "p1", t0)
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

// reservedFor lists the workloads a view's snapshot carries reservations for.
func reservedFor(v *View) []string {
	var out []string
	for _, r := range v.Snapshot.Reservations {
		out = append(out, r.Workload)
	}
	return out
}

// TestS19_ReservationLastsUntilItsWorkloadRuns: a reservation is carried by every snapshot
// while its preemptor waits for its victims, then while it is nominated, and ends once it
// runs; a reservation whose workload is neither waiting nor nominated ends at the next Settle,
// and one nominated for longer than reservationTTL ends too.
func TestS19_ReservationLastsUntilItsWorkloadRuns(t *testing.T) {
	settings := &Settings{}
	r := scheduler.Reservation{Workload: "p1", Project: "p", Pods: []scheduler.ReservedPod{{Node: "n1", Requests: scheduler.Resources{GPUs: 8}}}}

	t.Run("through the eviction and the nomination, until it runs", func(t *testing.T) {
		c := NewCache("arbiter")
		victim := gpuPod("victim", "v1", 8, nil)
		victim.Spec.NodeName = "n1"
		c.UpsertPod(victim)
		c.MarkEvicting("v1", "p1", t0)
		c.Reserve(r, t0)
		// victims that take long to go keep it whatever the time
		if d := cmp.Diff([]string{"p1"}, reservedFor(cycleView(c, t0.Add(10*reservationTTL), settings))); d != "" {
			t.Errorf("while the victim terminates (-want +got):\n%s", d)
		}
		c.DeletePod("v1")
		c.UpsertPod(gpuPod("preemptor", "p1", 8, nil))
		if d := cmp.Diff([]string{"p1"}, reservedFor(cycleView(c, t0.Add(10*reservationTTL+time.Second), settings))); d != "" {
			t.Errorf("once nominated (-want +got):\n%s", d)
		}
		c.Assume("p1", "n1", t0.Add(10*reservationTTL+2*time.Second))
		if got := reservedFor(cycleView(c, t0.Add(10*reservationTTL+2*time.Second), settings)); len(got) != 0 {
			t.Errorf("once it runs: still reserved for %v", got)
		}
	})
	t.Run("a resumed workload's, until the TTL", func(t *testing.T) {
		c := NewCache("arbiter")
		c.Nominate("p1", t0)
		c.Reserve(r, t0)
		c.UpsertPod(gpuPod("resumed", "p1", 8, nil)) // pods made, but not bound
		if d := cmp.Diff([]string{"p1"}, reservedFor(cycleView(c, t0.Add(reservationTTL), settings))); d != "" {
			t.Errorf("within the TTL (-want +got):\n%s", d)
		}
		if got := reservedFor(cycleView(c, t0.Add(reservationTTL+time.Second), settings)); len(got) != 0 {
			t.Errorf("past the TTL: still reserved for %v", got)
		}
	})
	t.Run("neither waiting nor nominated", func(t *testing.T) {
		c := NewCache("arbiter")
		c.Reserve(r, t0)
		if got := reservedFor(cycleView(c, t0, settings)); len(got) != 0 {
			t.Errorf("reserved for %v", got)
		}
	})
}

// TestS19_APartlyRunningPreemptorStaysNominated: a workload of pods placed one by one that runs
// some while the rest wait for their victims stays nominated, to be tried first, until they
// are bound too.
func TestS19_APartlyRunningPreemptorStaysNominated(t *testing.T) {
	c := NewCache("arbiter")
	job := objects.Job("w", "ns").UID("w1").Pods(2).Created(t0).Obj()
	c.UpsertOwner(ownerFromJob(job))
	ref := controllerRef("batch/v1", "Job", "w", "w1")
	running, waiting := gpuPod("w-a", "pa", 1, &ref), gpuPod("w-b", "pb", 1, &ref)
	running.Spec.NodeName = "n1"
	c.UpsertPod(running)
	c.UpsertPod(waiting)
	c.Nominate("w1", t0)
	if d := cmp.Diff(map[string]string{"w1": "nominated"}, flags(cycleView(c, t0.Add(time.Second), &Settings{}))); d != "" {
		t.Errorf("running one pod, waiting with the other (-want +got):\n%s", d)
	}
	c.Assume("pb", "n1", t0.Add(2*time.Second))
	if d := cmp.Diff(map[string]string{"w1": ""}, flags(cycleView(c, t0.Add(2*time.Second), &Settings{}))); d != "" {
		t.Errorf("with both bound (-want +got):\n%s", d)
	}
}

// TestS19_AWorkloadWaitsSinceItWasSeenOrLastEvicted: the snapshot says since when each
// workload waits — since a cycle first saw it, or Arbiter last evicted it — for the core to
// spare work that started meanwhile.
func TestS19_AWorkloadWaitsSinceItWasSeenOrLastEvicted(t *testing.T) {
	c := NewCache("arbiter")
	job := objects.Job("v", "ns").UID("v1").Created(t0).Obj()
	c.UpsertOwner(ownerFromJob(job))
	ref := controllerRef("batch/v1", "Job", "v", "v1")
	c.UpsertPod(gpuPod("v-a", "pa", 1, &ref))
	waitingSince := func(now time.Time) time.Time {
		w, _ := cycleView(c, now, &Settings{}).Workload("v1")
		return w.WaitingSince
	}
	seen := t0.Add(1500 * time.Millisecond)
	if got := waitingSince(seen); !got.Equal(seen) {
		t.Errorf("the first cycle that sees it: waiting since %v, want %v", got, seen)
	}
	c.Assume("pa", "n1", t0.Add(10*time.Second))
	c.MarkBound("v1", t0.Add(10*time.Second))
	if got := waitingSince(t0.Add(time.Minute)); !got.Equal(seen) {
		t.Errorf("a later cycle: waiting since %v, want the first that saw it, %v", got, seen)
	}
	evicted := t0.Add(2 * time.Minute)
	c.MarkEvicting("v1", "p1", evicted)
	if got := waitingSince(evicted.Add(time.Second)); !got.Equal(evicted) {
		t.Errorf("once evicted: waiting since %v, want %v", got, evicted)
	}
	// its pod gone, the Job has none until its controller makes another: it still waits since
	// its eviction then
	c.DeletePod("pa")
	cycleView(c, evicted.Add(2*time.Second), &Settings{})
	c.UpsertPod(gpuPod("v-b", "pb", 1, &ref))
	if got := waitingSince(evicted.Add(3 * time.Second)); !got.Equal(evicted) {
		t.Errorf("with its new pod: waiting since %v, want its eviction, %v", got, evicted)
	}
	// started again: its start is this bind, not its first
	again := evicted.Add(4 * time.Second)
	c.Assume("pb", "n1", again)
	c.MarkBound("v1", again)
	if w, _ := cycleView(c, again, &Settings{}).Workload("v1"); w == nil || !w.StartedAt.Equal(again) {
		t.Errorf("started again at %v: StartedAt %+v", again, w)
	}
}

// The bind latency metric counts from each pod's creation, which Assume hands back as it
// assumes the bind (apply reads it there, not for every bind before the first is sent).
func TestAssumeTellsWhenEachPodWasCreated(t *testing.T) {
	c := NewCache("arbiter")
	early, late := gpuPod("pa", "pa", 1, nil), gpuPod("pb", "pb", 1, nil)
	early.CreationTimestamp.Time = t0
	late.CreationTimestamp.Time = t0.Add(3 * time.Second)
	c.UpsertPod(early)
	c.UpsertPod(late)

	got := map[string]time.Time{
		"pa":      c.Assume("pa", "n1", t0.Add(5*time.Second)),
		"pb":      c.Assume("pb", "n1", t0.Add(5*time.Second)),
		"unknown": c.Assume("unknown", "n1", t0.Add(5*time.Second)),
	}
	want := map[string]time.Time{"pa": t0, "pb": t0.Add(3 * time.Second), "unknown": {}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("creation times (-want +got):\n%s", d)
	}
}

// TestS20_AResumedWorkloadIsResumedOnce: a resumed Job is not resumed again by the cycles
// before the watch brings its resume back (the Job still reads suspended there); it is absent
// from them, as it is once the watch says so and until its pods come. A resume the watch never
// confirms within resumeTTL is undone in the cache, and the workload is resumed again.
func TestS20_AResumedWorkloadIsResumedOnce(t *testing.T) {
	settings := foreseeSettings()
	suspended := gpuJob("victim", 2, 1, nil)
	suspended.UID = "victim-uid"
	yes := true
	suspended.Spec.Suspend = &yes
	suspended.Annotations = map[string]string{AnnotationSuspendedBy: "arbiter"}
	c := NewCache("arbiter")
	c.UpsertNode(gpuNode("n1", 4))
	c.UpsertOwner(ownerFromJob(suspended))
	resumes := func(at time.Time) []string {
		var uids []string
		for _, r := range cycleView(c, at, settings).Snapshot.Plan().Resumes {
			uids = append(uids, r.Workload)
		}
		return uids
	}

	if d := cmp.Diff([]string{"victim-uid"}, resumes(t0)); d != "" {
		t.Fatalf("the first cycle's resumes (-want +got):\n%s", d)
	}
	c.Resumed("victim-uid", t0) // its patch succeeded; the watch has not brought it back yet
	if got := resumes(t0.Add(time.Second)); len(got) != 0 {
		t.Errorf("the next cycle, before the watch, resumes %v again", got)
	}

	// The watch never brings it: after resumeTTL the cache reads the Job as suspended again.
	if d := cmp.Diff([]string{"victim-uid"}, resumes(t0.Add(resumeTTL+time.Second))); d != "" {
		t.Errorf("resumeTTL after an unconfirmed resume (-want +got):\n%s", d)
	}

	// The watch brings a resume back: the Job runs its own course from there.
	at := t0.Add(resumeTTL + 2*time.Second)
	c.Resumed("victim-uid", at)
	resumed := suspended.DeepCopy()
	resumed.Spec.Suspend, resumed.Annotations = nil, nil
	c.UpsertOwner(ownerFromJob(resumed))
	if got := resumes(at.Add(resumeTTL + time.Second)); len(got) != 0 {
		t.Errorf("a Job resumed and seen so is resumed again: %v", got)
	}
}
