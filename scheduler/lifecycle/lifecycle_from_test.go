package lifecycle

import (
	"testing"

	"github.com/arbiterhq/arbiter/scheduler"
)

// S7, S8: the record says where the priority and preemptibility came from, in the words a
// person reads, with the workload's own kind and project; a change of source alone is
// recorded, and an unchanged one is not written again.
func TestS7_S8_TheRecordSaysWhereTheValuesCameFrom(t *testing.T) {
	asked := func(p scheduler.PendingWorkload) scheduler.PendingWorkload {
		p.PriorityFrom = scheduler.From{Source: scheduler.SourceLabel, Clamped: scheduler.ClampedToMax}
		p.PreemptibilityFrom = scheduler.From{Source: scheduler.SourceCategoryDefault, Ignored: scheduler.SourcePodLabel}
		return p
	}
	defaulted := func(p scheduler.PendingWorkload) scheduler.PendingWorkload {
		p.PriorityFrom = scheduler.From{Source: scheduler.SourceProjectDefault}
		p.PreemptibilityFrom = scheduler.From{Source: scheduler.SourceTypeDefault}
		return p
	}
	saying := func(priority, preemptibility string) func(*Record) {
		return func(r *Record) { r.PriorityFrom, r.PreemptibilityFrom = priority, preemptibility }
	}
	askedRec := rec("w", pending, 1, waiting(scheduler.InsufficientCapacity, 1), saying(
		"asked for with the label priorityClassName on the Job, clamped to project vision's maxPriority low",
		"the default of category Train; the label kai.scheduler/preemptibility on its pod was ignored: project vision does not allow changing preemptibility"))
	askedState := recorded(askedRec, false)
	askedState.PriorityFrom, askedState.PreemptibilityFrom = asked(waits("w", "", 0)).PriorityFrom, asked(waits("w", "", 0)).PreemptibilityFrom
	defaultedRec := rec("w", pending, 1, waiting(scheduler.InsufficientCapacity, 1), saying(
		"project vision's default", "the default of workload type Job"))
	defaultedState := recorded(defaultedRec, false)
	defaultedState.PriorityFrom, defaultedState.PreemptibilityFrom = scheduler.From{Source: scheduler.SourceProjectDefault}, scheduler.From{Source: scheduler.SourceTypeDefault}

	runLifecycleCases(t, []lifecycleCase{
		{name: "a new workload's record says where its values came from",
			workloads: []scheduler.Workload{job("w", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{asked(waits("w", scheduler.InsufficientCapacity, 1))}},
			want:      Change{Records: []Record{askedRec}, Events: []Event{queuedEvent("w", "low")}},
			after:     map[string]Recorded{"uid-w": askedState}},
		{name: "the same values from another source: recorded again",
			before:    map[string]Recorded{"uid-w": askedState},
			workloads: []scheduler.Workload{job("w", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{defaulted(waits("w", scheduler.InsufficientCapacity, 1))}},
			want:      Change{Records: []Record{defaultedRec}},
			after:     map[string]Recorded{"uid-w": defaultedState}},
		{name: "nothing changed: nothing written",
			before:    map[string]Recorded{"uid-w": defaultedState},
			workloads: []scheduler.Workload{job("w", pending, "")},
			plan:      scheduler.Plan{Pending: []scheduler.PendingWorkload{defaulted(waits("w", scheduler.InsufficientCapacity, 1))}},
			want:      Change{},
			after:     map[string]Recorded{"uid-w": defaultedState}},
	})
}
