package lifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/scheduler"
)

var (
	queued  = time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	started = queued.Add(10 * time.Minute)
	now     = queued.Add(time.Hour)
)

const (
	pending   = scheduler.PhasePending
	running   = scheduler.PhaseRunning
	suspended = scheduler.PhaseSuspended
	preempted = scheduler.PhasePreempted
	completed = scheduler.PhaseCompleted
	failed    = scheduler.PhaseFailed
)

var low = scheduler.Priority{Name: "low", Value: 40}

// job is a one-GPU-per-pod Job of project vision in phase ph, its pods bound to nodes ("" for
// a pod that waits).
func job(name string, ph scheduler.Phase, nodes ...string) scheduler.Workload {
	w := scheduler.Workload{UID: "uid-" + name, Namespace: "ns", Name: name, Kind: "Job", Group: "batch",
		Type: "Job", Project: "vision", Phase: ph, QueuedAt: queued}
	if ph == running {
		w.StartedAt = started
	}
	for i, n := range nodes {
		w.Pods = append(w.Pods, scheduler.Pod{UID: name + "-" + string(rune('a'+i)), Requests: scheduler.Resources{GPUs: 1}, NodeName: n})
	}
	return w
}

// rec is what is recorded of job(name, ph, ...) with gang pods and no plan entry; opts adjust it.
func rec(name string, ph scheduler.Phase, gang int, opts ...func(*Record)) Record {
	r := Record{UID: "uid-" + name, Namespace: "ns", Name: name, Kind: "Job", APIGroup: "batch", TypeName: "Job",
		CategoryName: "Train", ProjectID: "id-of-vision", ProjectName: "vision", DepartmentName: "research", Phase: ph, Gang: gang,
		RequestedGPUs: gang, QueuedAt: queued}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func waiting(reason scheduler.Reason, pos int) func(*Record) {
	return func(r *Record) {
		r.PriorityName, r.PriorityValue, r.Preemptibility = low.Name, int(low.Value), string(scheduler.Preemptible)
		r.Reason, r.Message, r.QueuePosition = string(reason), "why", pos
	}
}

func runsOn(startedAt time.Time, pool string, gpus int, nodes ...string) func(*Record) {
	return func(r *Record) {
		r.PriorityName, r.PriorityValue, r.Preemptibility = low.Name, int(low.Value), string(scheduler.Preemptible)
		r.NodePool, r.AllocatedGPUs, r.Nodes, r.StartedAt = pool, gpus, nodes, &startedAt
	}
}

func waits(name string, reason scheduler.Reason, pos int) scheduler.PendingWorkload {
	return scheduler.PendingWorkload{Workload: "uid-" + name, Namespace: "ns", Name: name, Project: "vision",
		Priority: low, Preemptibility: scheduler.Preemptible, Reason: reason, Message: "why", QueuePosition: pos, RequestedGPUs: 1}
}

func runs(name string, gpus int64) scheduler.RunningWorkload {
	return scheduler.RunningWorkload{Workload: "uid-" + name, Namespace: "ns", Name: name, Project: "vision",
		Priority: low, Preemptibility: scheduler.Preemptible, NodePool: "a100", GPUs: gpus}
}

func bind(name, node string) scheduler.Bind {
	return scheduler.Bind{Workload: "uid-" + name, Pod: scheduler.PodRef{UID: name + "-a"}, Node: node}
}

func event(name, kind, reason, message string) Event {
	at := now
	if kind == "Queued" {
		at = queued
	}
	return Event{Workload: "uid-" + name, At: at, Kind: kind, Reason: reason, Message: message}
}

// preemptedBy is an eviction's event: it names the preemptor's UID and, for a reclaim, what
// the project borrowed just before.
func preemptedBy(preemptor string, borrowed *int64, name, kind, reason, message string) Event {
	e := event(name, kind, reason, message)
	e.Preemptor, e.Borrowed = "uid-"+preemptor, borrowed
	return e
}

// withBorrowed adds the victim's project vision to the plan, still borrowing n GPUs in a100.
func withBorrowed(p scheduler.Plan, n int64) scheduler.Plan {
	p.Projects = append(p.Projects, scheduler.QueueStatus{Name: "vision", NodePool: "a100", Deserved: 1, Allocated: 1 + n, Borrowed: n})
	return p
}

func queuedEvent(name, priority string) Event {
	return event(name, "Queued", "", "Queued in project vision at priority "+priority+".")
}

// lifecycleCase is one cycle: what was recorded before, the cycle, and what to record.
type lifecycleCase struct {
	name      string
	before    map[string]Recorded
	workloads []scheduler.Workload
	plan      scheduler.Plan
	rebuilt   []string         // workload names; nil: all of the snapshot's
	owners    map[string]Owner // of workloads gone from the snapshot, by name
	want      Change
	after     map[string]Recorded
}

func runLifecycleCases(t *testing.T, cases []lifecycleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			for uid, r := range tc.before {
				s.recorded[uid] = r
			}
			got := s.Observe(cycleWith(tc.workloads, &tc.plan, tc.rebuilt, tc.owners))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("what to record (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.after, s.recorded, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("state after the cycle (-want +got):\n%s", diff)
			}
		})
	}
}

// cycleWith is a cycle whose snapshot holds ws (sorted here) in project vision, with the plan,
// the rebuilt workloads by name (nil: all of the snapshot's) and the owners of workloads gone
// from the snapshot by name.
func cycleWith(ws []scheduler.Workload, plan *scheduler.Plan, rebuilt []string, owners map[string]Owner) Cycle {
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(a, b scheduler.Workload) int { return strings.Compare(a.UID, b.UID) })
	uids := make([]string, 0, max(len(rebuilt), len(ws)))
	for _, n := range rebuilt {
		uids = append(uids, "uid-"+n)
	}
	if rebuilt == nil {
		for _, w := range ws {
			uids = append(uids, w.UID)
		}
	}
	return Cycle{At: now, Plan: plan, Rebuilt: uids,
		Snapshot: &scheduler.Snapshot{Now: now, Workloads: ws,
			WorkloadTypes: []scheduler.WorkloadType{{Name: "Job", Group: "batch", Category: "Train"}},
			Projects:      []scheduler.Project{{Name: "vision", ID: "id-of-vision", Department: "research"}}},
		Owner: func(uid string) Owner { return owners[strings.TrimPrefix(uid, "uid-")] },
	}
}

// recorded is the state after recording r.
func recorded(r Record, evicted bool) Recorded {
	return Recorded{Evicted: evicted, Phase: r.Phase, Reason: r.Reason, Message: r.Message, Priority: r.PriorityName,
		Position: r.QueuePosition, Allocated: r.AllocatedGPUs, Requested: r.RequestedGPUs, NodePool: r.NodePool,
		Preemptibility: r.Preemptibility, PriorityValue: r.PriorityValue}
}

func TestS24_Phases(t *testing.T) {
	waitingRec := rec("train", pending, 1, waiting(scheduler.InsufficientCapacity, 1))
	admittedRec := rec("train", running, 1, runsOn(now, "a100", 1, "n1"))
	runningRec := rec("train", running, 1, runsOn(started, "a100", 1, "n1"))
	runningRec.RequestedGPUs = 1
	runsState := recorded(admittedRec, false)
	runsState.Allocated = 1
	stoppedState := runsState
	stoppedState.Phase, stoppedState.Allocated, stoppedState.Position = scheduler.PhaseSuspended, 0, 0

	runLifecycleCases(t, []lifecycleCase{
		{
			name:      "a new workload that waits is Pending, with its reason and place, and is Queued",
			workloads: []scheduler.Workload{job("train", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("train", scheduler.InsufficientCapacity, 1)}},
			want:      Change{Records: []Record{waitingRec}, Events: []Event{queuedEvent("train", "low")}},
			after:     map[string]Recorded{"uid-train": recorded(waitingRec, false)},
		},
		{
			name:      "a workload whose priority was read from a KAI or Run:ai class name says so when it is Queued (S7)",
			workloads: []scheduler.Workload{job("train", pending, "")},
			plan: scheduler.Plan{Pending: []scheduler.PendingWorkload{func() scheduler.PendingWorkload {
				pw := waits("train", scheduler.InsufficientCapacity, 1)
				pw.PriorityAlias = "train"
				return pw
			}()}},
			want: Change{Records: []Record{waitingRec}, Events: []Event{event("train", "Queued", "",
				"Queued in project vision at priority low, read from its priority class train (KAI's and Run:ai's name).")}},
			after: map[string]Recorded{"uid-train": func() Recorded { r := recorded(waitingRec, false); r.Alias = "train"; return r }()},
		},
		{
			name: "a workload submitted through Arbiter records its submitter from the annotation",
			workloads: []scheduler.Workload{func() scheduler.Workload {
				w := job("train", pending, "")
				w.Annotations = map[string]string{scheduler.AnnotationSubmitter: "alice"}
				return w
			}()},
			plan: scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("train", scheduler.InsufficientCapacity, 1)}},
			want: Change{Records: []Record{func() Record { r := waitingRec; r.Submitter = "alice"; return r }()},
				Events: []Event{queuedEvent("train", "low")}},
			after: map[string]Recorded{"uid-train": recorded(waitingRec, false)},
		},
		{
			name:      "nothing changed: nothing to record",
			before:    map[string]Recorded{"uid-train": recorded(waitingRec, false)},
			workloads: []scheduler.Workload{job("train", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("train", scheduler.InsufficientCapacity, 1)}},
			want:      Change{},
			after:     map[string]Recorded{"uid-train": recorded(waitingRec, false)},
		},
		{
			name:      "a new place in the queue is recorded, with no event",
			before:    map[string]Recorded{"uid-train": recorded(waitingRec, false)},
			workloads: []scheduler.Workload{job("train", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("train", scheduler.InsufficientCapacity, 2)}},
			want:      Change{Records: []Record{rec("train", pending, 1, waiting(scheduler.InsufficientCapacity, 2))}},
			after:     map[string]Recorded{"uid-train": recorded(rec("train", pending, 1, waiting(scheduler.InsufficientCapacity, 2)), false)},
		},
		{
			name:      "bound by the plan: Running from now, and Admitted",
			before:    map[string]Recorded{"uid-train": recorded(waitingRec, false)},
			workloads: []scheduler.Workload{job("train", pending, "")},
			plan:      scheduler.Plan{Binds: []scheduler.Bind{bind("train", "n1")}, Running: []scheduler.RunningWorkload{runs("train", 1)}},
			want: Change{Records: []Record{admittedRec},
				Events: []Event{event("train", "Admitted", "", "Admitted on [n1] in node pool a100 with 1 GPU.")}},
			after: map[string]Recorded{"uid-train": runsState},
		},
		{
			// A leader that bound it and died before recording it: its successor's first cycle.
			name:      "running when first seen: Running, Queued, and Admitted when it started, not now",
			workloads: []scheduler.Workload{job("train", running, "n1")},
			plan:      scheduler.Plan{Running: []scheduler.RunningWorkload{runs("train", 1)}},
			want: Change{Records: []Record{runningRec}, Events: []Event{queuedEvent("train", "low"), func() Event {
				e := event("train", "Admitted", "", "Admitted on [n1] in node pool a100 with 1 GPU.")
				e.At = started
				return e
			}()}},
			after: map[string]Recorded{"uid-train": recorded(runningRec, false)},
		},
		{
			name:      "a gang partly bound still waits: Pending",
			before:    map[string]Recorded{"uid-train": recorded(rec("train", pending, 2, waiting(scheduler.GangIncomplete, 1)), false)},
			workloads: []scheduler.Workload{job("train", running, "n1", "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("train", scheduler.InsufficientCapacity, 1)}},
			want: Change{Records: []Record{rec("train", pending, 2, waiting(scheduler.InsufficientCapacity, 1), func(r *Record) {
				r.AllocatedGPUs, r.Nodes, r.StartedAt = 1, []string{"n1"}, &started
			})}},
			after: map[string]Recorded{"uid-train": recorded(rec("train", pending, 2, waiting(scheduler.InsufficientCapacity, 1), func(r *Record) {
				r.AllocatedGPUs = 1
			}), false)},
		},
		{
			name:      "suspended when first seen: Suspended, Queued and Suspended",
			workloads: []scheduler.Workload{job("train", suspended)},
			want: Change{Records: []Record{rec("train", suspended, 0)},
				Events: []Event{queuedEvent("train", "(none)"), event("train", "Suspended", "", "Suspended by Arbiter.")}},
			after: map[string]Recorded{"uid-train": recorded(rec("train", suspended, 0), false)},
		},
		{
			name:      "resumed: Pending again, and Resumed",
			before:    map[string]Recorded{"uid-train": recorded(rec("train", suspended, 0), false)},
			workloads: []scheduler.Workload{job("train", suspended)},
			plan:      scheduler.Plan{Resumes: []scheduler.Resume{{Workload: "uid-train", Namespace: "ns", Name: "train", Project: "vision", NodePool: "a100", GPUs: 1}}},
			want: Change{Records: []Record{rec("train", pending, 0)},
				Events: []Event{event("train", "Resumed", "", "Resumed: admitted again.")}},
			after: map[string]Recorded{"uid-train": recorded(rec("train", pending, 0), false)},
		},
		{
			name:      "a new priority is told once",
			before:    map[string]Recorded{"uid-train": func() Recorded { r := recorded(waitingRec, false); r.Priority = "high"; return r }()},
			workloads: []scheduler.Workload{job("train", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("train", scheduler.InsufficientCapacity, 1)}},
			want: Change{Records: []Record{waitingRec},
				Events: []Event{event("train", "PriorityChanged", "", "Changed priority from high to low.")}},
			after: map[string]Recorded{"uid-train": recorded(waitingRec, false)},
		},
		{
			name:      "only what was rebuilt or is in the plan is looked at",
			before:    map[string]Recorded{"uid-train": runsState},
			workloads: []scheduler.Workload{job("train", running, "n1"), job("other", running, "n2")},
			rebuilt:   []string{},
			plan:      scheduler.Plan{Running: []scheduler.RunningWorkload{runs("train", 1), runs("other", 1)}},
			want:      Change{},
			after:     map[string]Recorded{"uid-train": runsState},
		},
		{
			name:   "gone, its Job completed: Completed",
			before: map[string]Recorded{"uid-train": runsState},
			owners: map[string]Owner{"train": {Known: true, Finished: true}},
			want:   Change{Finished: map[string]scheduler.Phase{"uid-train": completed}},
			after:  map[string]Recorded{},
		},
		{
			name:   "gone, its Job failed: Failed",
			before: map[string]Recorded{"uid-train": runsState},
			owners: map[string]Owner{"train": {Known: true, Finished: true, Failed: true}},
			want:   Change{Finished: map[string]scheduler.Phase{"uid-train": failed}},
			after:  map[string]Recorded{},
		},
		{
			name:   "gone with its owner (a bare pod, a deleted Job): Completed",
			before: map[string]Recorded{"uid-train": runsState},
			want:   Change{Finished: map[string]scheduler.Phase{"uid-train": completed}},
			after:  map[string]Recorded{},
		},
		{
			name:   "no pods but its owner goes on (a Job recreating them, a Deployment at zero): not ended",
			before: map[string]Recorded{"uid-train": runsState},
			owners: map[string]Owner{"train": {Known: true}},
			want:   Change{},
			after:  map[string]Recorded{"uid-train": runsState},
		},
		{
			name:   "no pods because its owner stopped it (Run:ai's STOP): Suspended, once, not ended",
			before: map[string]Recorded{"uid-train": runsState},
			owners: map[string]Owner{"train": {Known: true, Stopped: true}},
			want:   Change{Stopped: []string{"uid-train"}},
			after:  map[string]Recorded{"uid-train": stoppedState},
		},
		{
			name:   "still stopped: nothing more to record",
			before: map[string]Recorded{"uid-train": stoppedState},
			owners: map[string]Owner{"train": {Known: true, Stopped: true}},
			want:   Change{},
			after:  map[string]Recorded{"uid-train": stoppedState},
		},
		{
			name:      "run again after a stop: Pending, then admitted anew",
			before:    map[string]Recorded{"uid-train": stoppedState},
			workloads: []scheduler.Workload{job("train", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("train", scheduler.InsufficientCapacity, 1)}},
			want:      Change{Records: []Record{waitingRec}},
			after:     map[string]Recorded{"uid-train": recorded(waitingRec, false)},
		},
	})
}

func TestS20_Evictions(t *testing.T) {
	victim := job("victim", running, "n1", "n1")
	urgent := job("urgent", pending, "", "")
	waitingUrgent := rec("urgent", pending, 2, waiting(scheduler.WaitingForEvictions, 1))
	victimRuns := rec("victim", running, 2, runsOn(started, "a100", 2, "n1"))
	// An eviction (or a suspension) names no priority or preemptibility: the last recorded stay.
	keepsLow := func(r *Record) {
		r.PriorityName, r.PriorityValue, r.Preemptibility = low.Name, int(low.Value), string(scheduler.Preemptible)
	}
	evictedRec := rec("victim", preempted, 2, keepsLow, func(r *Record) { r.AllocatedGPUs, r.Nodes, r.StartedAt = 2, []string{"n1"}, &started })
	evictedState := recorded(evictedRec, true)
	evicted := func(mode scheduler.PreemptionMode, rule scheduler.Rule) scheduler.Plan {
		return scheduler.Plan{
			Evictions: []scheduler.Eviction{{Workload: "uid-victim", Namespace: "ns", Name: "victim", Project: "vision",
				Mode: mode, Preemptor: "uid-urgent", Rule: rule, GPUs: 2}},
			Pending: []scheduler.PendingWorkload{waits("urgent", scheduler.WaitingForEvictions, 1)},
		}
	}
	// The preemptor waits as before: only the victim is recorded.
	before := map[string]Recorded{"uid-victim": recorded(victimRuns, false), "uid-urgent": recorded(waitingUrgent, false)}
	urgentState := recorded(waitingUrgent, false)
	evictedKeepsPriority := evictedState

	runLifecycleCases(t, []lifecycleCase{
		{
			name:      "evicted under S16 (terminate): Preempted, with the preemptor, the rule and the GPUs freed",
			before:    before,
			workloads: []scheduler.Workload{victim, urgent},
			rebuilt:   []string{},
			plan:      evicted(scheduler.Terminate, scheduler.RulePreemption),
			want: Change{Records: []Record{evictedRec}, Events: []Event{preemptedBy("urgent", nil, "victim", "Preempted", "S16",
				"Preempted by ns/urgent under S16 (a higher-priority workload of the same project); 2 GPUs freed; exit code 3006")}},
			after: map[string]Recorded{"uid-victim": evictedKeepsPriority, "uid-urgent": urgentState},
		},
		{
			name:      "reclaimed under S17: the history says Reclaimed",
			before:    before,
			workloads: []scheduler.Workload{victim, urgent},
			rebuilt:   []string{},
			plan:      withBorrowed(evicted(scheduler.Terminate, scheduler.RuleReclaim), 1), // holds 2 after, 2 reclaimed, deserves 1
			want: Change{Records: []Record{evictedRec}, Events: []Event{preemptedBy("urgent", ptr.To[int64](3), "victim", "Reclaimed", "S17",
				"Preempted by ns/urgent under S17 (another project reclaiming its deserved quota); 2 GPUs freed; exit code 3006")}},
			after: map[string]Recorded{"uid-victim": evictedKeepsPriority, "uid-urgent": urgentState},
		},
		{
			name:      "suspend mode: the same sentence says it keeps its place",
			before:    before,
			workloads: []scheduler.Workload{victim, urgent},
			rebuilt:   []string{},
			plan:      evicted(scheduler.Suspend, scheduler.RulePreemption),
			want: Change{Records: []Record{evictedRec}, Events: []Event{preemptedBy("urgent", nil, "victim", "Preempted", "S16",
				"Preempted by ns/urgent under S16 (a higher-priority workload of the same project); 2 GPUs freed; suspended, it keeps its place in the queue")}},
			after: map[string]Recorded{"uid-victim": evictedKeepsPriority, "uid-urgent": urgentState},
		},
		{
			name:      "recreated by its controller, it waits as Preempted (S24) until admitted again",
			before:    map[string]Recorded{"uid-victim": evictedState},
			workloads: []scheduler.Workload{job("victim", pending, "", "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{waits("victim", scheduler.InsufficientCapacity, 1)}},
			want:      Change{Records: []Record{rec("victim", preempted, 2, waiting(scheduler.InsufficientCapacity, 1))}},
			after:     map[string]Recorded{"uid-victim": recorded(rec("victim", preempted, 2, waiting(scheduler.InsufficientCapacity, 1)), true)},
		},
		{
			name:      "suspended by the eviction, it is Suspended while it waits",
			before:    map[string]Recorded{"uid-victim": evictedState},
			workloads: []scheduler.Workload{job("victim", suspended)},
			want:      Change{Records: []Record{rec("victim", suspended, 0, keepsLow)}},
			after:     map[string]Recorded{"uid-victim": recorded(rec("victim", suspended, 0, keepsLow), true)},
		},
		{
			name:      "admitted again: Running, no longer evicted",
			before:    map[string]Recorded{"uid-victim": recorded(rec("victim", preempted, 2, waiting(scheduler.InsufficientCapacity, 1)), true)},
			workloads: []scheduler.Workload{job("victim", pending, "", "")},
			plan: scheduler.Plan{Binds: []scheduler.Bind{bind("victim", "n2")},
				Running: []scheduler.RunningWorkload{runs("victim", 2)}},
			want: Change{Records: []Record{rec("victim", running, 2, runsOn(now, "a100", 2, "n2"))},
				Events: []Event{event("victim", "Admitted", "", "Admitted on [n2] in node pool a100 with 2 GPUs.")}},
			after: map[string]Recorded{"uid-victim": recorded(rec("victim", running, 2, runsOn(now, "a100", 2, "n2")), false)},
		},
		{
			name:   "a bare pod evicted is gone for good: it ends Preempted",
			before: map[string]Recorded{"uid-victim": evictedState},
			want:   Change{Finished: map[string]scheduler.Phase{"uid-victim": preempted}},
			after:  map[string]Recorded{},
		},
	})
}
