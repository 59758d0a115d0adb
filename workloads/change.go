package workloads

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// Setting is one property a change asks for: Set says it is asked; Null sets it back to the
// workload type's default (preemptibility) or the policy's (priority).
type Setting struct {
	Set   bool
	Null  bool
	Value string
}

// Change is a change of a workload's priority and/or preemptibility.
type Change struct {
	Priority       Setting
	Preemptibility Setting
}

// Change changes a visible workload's priority and/or preemptibility, for the API's PATCH and
// the Workloads page's inline and bulk changes alike: the caller's role, the project's policy,
// S14 for a running workload made (semi-)non-preemptible, then the labels on the top owner
// (S9) with a PriorityChanged and/or PreemptibilityChanged event (one a change) and an audit
// row. A dry run stops before the labels and records nothing: the answer, or the refusal, is
// what the change would get. The answer is the record with the requested values; the
// scheduler's next cycle records what it resolved from the labels.
//
// Roles that may edit any workload of the project (research manager, department admin, admin)
// change any; a researcher only those they submitted through Arbiter (the record's submitter,
// docs/security.md "Ownership").
func (s *Service) Change(ctx context.Context, who Caller, w Visible, req Change, dry bool) (store.WorkloadRecord, error) {
	r := w.Record
	out := r
	if err := MayChange(who.Identity, r, w.Scope); err != nil {
		return r, err
	}
	set := map[string]*string{}
	changes := map[string]store.Change{}
	// one event a change: PriorityChanged, PreemptibilityChanged, each saying who made it
	var evs []store.WorkloadEvent
	event := func(kind, what string) {
		by := who.Identity.DisplayName
		evs = append(evs, store.WorkloadEvent{WorkloadUID: r.UID, Kind: kind, Actor: by, Message: "Changed " + what + " by " + by + "."})
	}
	if req.Priority.Set {
		// In a project that forbids changes the scheduler ignores priority labels, so the
		// recorded priority is the one its policy gives.
		prio, err := s.checkPriority(ctx, "priority", req.Priority, w.Project, r.PriorityName)
		if err != nil {
			return r, err
		}
		set[scheduler.LabelPriority] = &prio.Name
		changes["priority"] = store.Change{From: r.PriorityName, To: prio.Name}
		event("PriorityChanged", fmt.Sprintf("priority from %s to %s", cmp.Or(r.PriorityName, "none"), prio.Name))
		out.PriorityName, out.PriorityValue = prio.Name, prio.Value
	}
	if req.Preemptibility.Set {
		// As for priority: in a project that forbids changes the recorded preemptibility is the
		// one its policy gives.
		asked := req.Preemptibility.Value
		if req.Preemptibility.Null {
			asked = ""
		}
		refusal := scheduler.CheckPreemptibility("preemptibility", scheduler.Preemptibility(asked), store.ProjectPolicy(w.Project), scheduler.Preemptibility(r.Preemptibility))
		if refusal != nil {
			return r, policyRefusal(refusal)
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
			out.Preemptibility = v
		default:
			return r, store.InvalidField("preemptibility", "preemptibility %q is not valid; use %q, %q, %q or null (back to the workload type's default)", v, store.Preemptible, store.NonPreemptible, store.SemiPreemptible)
		}
		if err := s.checkQuota(ctx, r, asked, scheduler.Priority{Name: out.PriorityName, Value: int32(out.PriorityValue)}); err != nil {
			return r, err
		}
		changes["preemptibility"] = store.Change{From: r.Preemptibility, To: to}
	}
	if s.labeler == nil {
		return r, ErrNoClusterToLabel
	}
	if dry {
		return out, nil
	}

	// AddWorkloadEvents holds the workload's row until the change commits, so that the
	// scheduler's own PriorityChanged of the new label waits for it and is dropped.
	err := s.records.AddWorkloadEvents(ctx, evs, who.Actor, changes, func(ctx context.Context) error {
		return s.clusterError(who, r, s.labeler.PatchWorkloadLabels(ctx, r.UID, set))
	})
	if err != nil {
		return r, err
	}
	return out, nil
}

// checkPriority is the core's CheckPriority of a requested priority name for a workload of
// the project (nil: none), on the dictionary: policyGives is the priority the policy gives the
// workload without asking. field is the request's name for it ("priority" in a PATCH,
// "spec.priorityClass" in a submission).
func (s *Service) checkPriority(ctx context.Context, field string, req Setting, project *store.Project, policyGives string) (store.Priority, error) {
	dict, err := s.Catalog(ctx, false)
	if err != nil {
		return store.Priority{}, err
	}
	asked := req.Value
	if req.Null {
		asked = ""
	}
	p, refusal := dict.CheckPriority(field, asked, store.ProjectPolicy(project), policyGives)
	return storePriority(p), policyRefusal(refusal)
}

// checkQuota refuses a change of a running workload's preemptibility to asked ("" for the
// workload type's default at priority p, the one it has after the change) that S14 forbids: a
// conflict naming the field, with the sentence of scheduler.CheckPreemptibilityChange. Without
// a cluster there is nothing running to check.
func (s *Service) checkQuota(ctx context.Context, r store.WorkloadRecord, asked string, p scheduler.Priority) error {
	if s.standings == nil {
		return nil
	}
	standing, running := s.standings.PreemptibilityStanding(r.UID, r.DepartmentName)
	if !running {
		return nil
	}
	standing.To = scheduler.Preemptibility(asked)
	if asked == "" { // what the scheduler gives it without a label (S8 steps 3-5)
		catalog, err := s.Catalog(ctx, true)
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

// clusterError turns the cluster's answer about a workload (a label patch, a delete, a stop
// or a run) into the caller's: a workload the cluster no longer has is not found, one of a
// kind Arbiter does not watch a conflict saying what to do instead, anything else
// unavailable, its cause going to the log.
func (s *Service) clusterError(who Caller, r store.WorkloadRecord, err error) error {
	if err == nil {
		return nil
	}
	var nf interface{ NotFound() bool }
	if errors.As(err, &nf) && nf.NotFound() {
		return store.NotFound("workload %s (%s/%s) is no longer in the cluster; it may have finished or been deleted", r.UID, r.Namespace, r.Name)
	}
	var unwatched interface{ Unwatched() bool }
	if errors.As(err, &unwatched) && unwatched.Unwatched() {
		return store.Conflict("%s", err.Error())
	}
	s.log.Warn("workload labels not patched", "request_id", who.Actor.RequestID, "workload", r.UID, "err", err)
	return store.Unavailable("the cluster did not accept the label change; try again shortly (the request id in X-Request-Id helps an operator find why)")
}
