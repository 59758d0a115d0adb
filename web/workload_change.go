package web

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// PreemptibilityStandings tell, from the scheduler's last cycle, what a change of a running
// workload's preemptibility is checked against (scheduler.CheckPreemptibilityChange, S14):
// ok is false when the workload holds no GPUs there (a waiting workload is checked when it is
// admitted). department is the workload's department, by name.
type PreemptibilityStandings interface {
	PreemptibilityStanding(uid, department string) (scheduler.PreemptibilityChange, bool)
}

// changeWorkload is the change of a visible workload's priority and/or preemptibility, for the
// API's PATCH and the Workloads page's inline and bulk changes alike: the caller's role, the
// project's policy, S14 for a running workload made (semi-)non-preemptible, then the labels on
// the top owner (S9) with a PriorityChanged and/or PreemptibilityChanged event (one a change)
// and an audit row. A dry run stops before the labels and records nothing: the answer, or the
// refusal, is what the change would get. The answer is the record with the requested values;
// the scheduler's next cycle records what it resolved from the labels.
func (h *workloads) changeWorkload(c echo.Context, r store.WorkloadRecord, scope auth.Scope, project *store.Project, req workloadPatchRequest, dry bool) (views.Workload, error) {
	view := workloadView(r, time.Now())
	if err := mayChangeWorkload(c, r, scope); err != nil {
		return view, err
	}
	set := map[string]*string{}
	changes := map[string]store.Change{}
	// one event a change: PriorityChanged, PreemptibilityChanged, each saying who made it
	var evs []store.WorkloadEvent
	event := func(kind, what string) {
		who := identity(c).DisplayName
		evs = append(evs, store.WorkloadEvent{WorkloadUID: r.UID, Kind: kind, Actor: who, Message: "Changed " + what + " by " + who + "."})
	}
	if req.Priority.Set {
		// In a project that forbids changes the scheduler ignores priority labels, so the
		// recorded priority is the one its policy gives.
		prio, err := h.checkWorkloadPriority(c.Request().Context(), "priority", req.Priority, project, r.PriorityName)
		if err != nil {
			return view, err
		}
		set[scheduler.LabelPriority] = &prio.Name
		changes["priority"] = store.Change{From: r.PriorityName, To: prio.Name}
		event("PriorityChanged", fmt.Sprintf("priority from %s to %s", cmp.Or(r.PriorityName, "none"), prio.Name))
		view.Priority, view.PriorityValue = prio.Name, prio.Value
	}
	if req.Preemptibility.Set {
		// As for priority: in a project that forbids changes the recorded preemptibility is the
		// one its policy gives.
		asked := req.Preemptibility.Value
		if req.Preemptibility.Null {
			asked = ""
		}
		refusal := scheduler.CheckPreemptibility("preemptibility", scheduler.Preemptibility(asked), store.ProjectPolicy(project), scheduler.Preemptibility(r.Preemptibility))
		if refusal != nil {
			return view, policyRefusal(refusal)
		}
		var to any
		switch v := req.Preemptibility.Value; {
		case req.Preemptibility.Null:
			set[scheduler.LabelPreemptibility] = nil
			event("PreemptibilityChanged", fmt.Sprintf("preemptibility from %s back to the workload type's default", cmp.Or(r.Preemptibility, "none")))
		case v == store.Preemptible || v == store.NonPreemptible || v == store.SemiPreemptible:
			set[scheduler.LabelPreemptibility] = &v
			to = v
			event("PreemptibilityChanged", fmt.Sprintf("preemptibility from %s to %s", cmp.Or(r.Preemptibility, "none"), v))
			view.Preemptible, view.Preemptibility = v == store.Preemptible, v
		default:
			return view, badField("preemptibility", "preemptibility %q is not valid; use %q, %q, %q or null (back to the workload type's default)", v, store.Preemptible, store.NonPreemptible, store.SemiPreemptible)
		}
		if err := h.checkQuota(c.Request().Context(), r, asked, scheduler.Priority{Name: view.Priority, Value: int32(view.PriorityValue)}); err != nil {
			return view, err
		}
		changes["preemptibility"] = store.Change{From: r.Preemptibility, To: to}
	}
	if h.labeler == nil {
		return view, errNoCluster
	}
	if dry {
		return view, nil
	}

	// AddWorkloadEvents holds the workload's row until the change commits, so that the
	// scheduler's own PriorityChanged of the new label waits for it and is dropped.
	err := h.store.AddWorkloadEvents(c.Request().Context(), evs, actor(c), changes, func(ctx context.Context) error {
		return h.labelerError(c, r, h.labeler.PatchWorkloadLabels(ctx, r.UID, set))
	})
	if err != nil {
		return workloadView(r, time.Now()), err
	}
	return view, nil
}

// checkQuota refuses a change of a running workload's preemptibility to asked ("" for the
// workload type's default at priority p, the one it has after the change) that S14 forbids: a
// 409 naming the field, with the sentence of scheduler.CheckPreemptibilityChange. Without a
// cluster there is nothing running to check.
func (h *workloads) checkQuota(ctx context.Context, r store.WorkloadRecord, asked string, p scheduler.Priority) error {
	if h.standings == nil {
		return nil
	}
	standing, running := h.standings.PreemptibilityStanding(r.UID, r.DepartmentName)
	if !running {
		return nil
	}
	standing.To = scheduler.Preemptibility(asked)
	if asked == "" { // what the scheduler gives it without a label (S8 steps 3-5)
		catalog, err := policyCatalog(ctx, h.priorities, true)
		if err != nil {
			return err
		}
		standing.To = catalog.DefaultPreemptibility(r.TypeName, r.APIGroup, p)
	}
	if refusal := scheduler.CheckPreemptibilityChange(standing); refusal != nil {
		return store.ConflictField("preemptibility", "%s", refusal.Message)
	}
	return nil
}
