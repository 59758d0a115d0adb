package workloads

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/native"
)

// This file is what a person does to a workload after submitting it: Run:ai's STOP, RUN and
// DELETE, asked of the API and of the workload's page alike.

// Action is one of the actions a person takes on a workload after submitting it.
type Action string

const (
	Stop   Action = "stop"
	Run    Action = "run"
	Delete Action = "delete"
)

// AuditAction is the action as the audit log names it (Run:ai's suspend and resume).
func (a Action) AuditAction() string {
	switch a {
	case Stop:
		return "suspend"
	case Run:
		return "resume"
	}
	return string(a)
}

// DesiredPhase is the phase Run:ai's API says the action asks for.
func (a Action) DesiredPhase() string {
	switch a {
	case Stop:
		return "Stopped"
	case Run:
		return "Running"
	}
	return "Deleted"
}

// KindOf is the native kind of a workload's record (by its type and object), if it is one: a
// distributed training is a Job or a PyTorchJob.
func KindOf(r store.WorkloadRecord) (native.Kind, bool) {
	for _, k := range native.Kinds {
		if k.Type == r.TypeName && (k.Object == r.Kind || k == native.Distributed && r.Kind == native.AsPyTorchJob.Object) {
			return k, true
		}
	}
	return native.Kind{}, false
}

// Submitted is the workload with the id, which must be visible to the caller and of kind k.
func (s *Service) Submitted(ctx context.Context, who auth.Identity, id string, k native.Kind) (Visible, error) {
	w, err := s.Visible(ctx, who, id)
	if err != nil {
		return w, err
	}
	if r := w.Record; r.TypeName != k.Type {
		return w, store.NotFound("workload %s is a %s, not a %s; use the route of its kind, or GET /api/v1/workloads/%s", r.UID, cmp.Or(r.TypeName, r.Kind), k.Type, r.UID)
	}
	return w, nil
}

// Refusal says why the caller may not take action a on the workload (nil: they may), as a
// sentence saying what to do instead: the workload's kind, the caller's role at its project (a
// researcher acts only on their own workloads), and whether it has finished. The console asks
// it to show the buttons that would work; Act asks it before acting.
func Refusal(who auth.Identity, w Visible, a Action) error {
	r := w.Record
	k, ok := KindOf(r)
	if !ok {
		return store.Conflict("workload %s is a %s %s, which Arbiter does not stop, run or delete (only the Jobs, Deployments and PyTorchJobs of its four native types); do it in the cluster, or ask whoever created it", r.Name, cmp.Or(r.TypeName, "workload"), r.Kind)
	}
	if a != Delete && !k.Suspendable() {
		return store.Conflict("an inference cannot be stopped and run again: Arbiter would have to scale its Deployment to zero and remember its replicas, which it does not; delete it (DELETE /api/v1/workloads/%s/%s) and submit it again", k.Path, r.UID)
	}
	if err := mayActOn(who, r, w.Scope, string(a), string(a)+" this workload"); err != nil {
		return err
	}
	if a != Delete && r.FinishedAt != nil {
		return store.Conflict("workload %s finished at %s; submit it again instead", r.Name, r.FinishedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// Act takes action a on the workload once Refusal allows it, and returns the record as the
// action leaves it. A stop or run writes its event, the phase and the audit row with the
// patch, as a priority change is: the scheduler sees no pods of a stopped Job, so it records
// nothing itself. A delete writes its audit row once the cluster has taken it.
func (s *Service) Act(ctx context.Context, who Caller, w Visible, a Action) (store.WorkloadRecord, error) {
	r := w.Record
	if err := Refusal(who.Identity, w, a); err != nil {
		return r, err
	}
	if s.cluster == nil || s.subs == nil {
		return r, ErrNoClusterToSubmit
	}
	if a == Delete {
		if err := s.clusterError(who, r, s.cluster.DeleteWorkload(ctx, refOf(r))); err != nil {
			return r, err
		}
		s.audited(ctx, who, "delete", r)
		return r, nil
	}
	stop := a == Stop
	kind, phase := "Suspended", "Suspended"
	if !stop {
		kind, phase = "Resumed", "Pending"
	}
	by := who.Identity.DisplayName
	ev := store.WorkloadEvent{WorkloadUID: r.UID, Kind: kind, Actor: by,
		Message: kind + " by " + by + " (Run:ai's " + strings.ToUpper(string(a)) + ")."}
	err := s.subs.RecordWorkloadAction(ctx, ev, phase, who.Actor, a.AuditAction(), func(ctx context.Context) error {
		return s.clusterError(who, r, s.cluster.SuspendJob(ctx, refOf(r), stop))
	})
	if err != nil {
		return r, err
	}
	r.Phase = phase
	return r, nil
}

// audited writes the audit row of an action that succeeded (a refused or failed one is
// written by the HTTP layer, as every refused request is).
func (s *Service) audited(ctx context.Context, who Caller, action string, r store.WorkloadRecord) {
	if s.audit == nil {
		return
	}
	by := who.Actor
	e := store.AuditEntry{Subject: by.Subject, SubjectType: by.SubjectType, SourceIP: by.SourceIP, RequestID: by.RequestID,
		HTTPMethod: by.HTTPMethod, Action: action, EntityType: "workload", EntityID: r.UID, EntityName: r.Name,
		Result: "success", HTTPStatus: http.StatusAccepted, Changes: map[string]any{}}
	if err := s.audit.RecordAudit(context.WithoutCancel(ctx), e); err != nil {
		s.log.Warn("audit row not written", "request_id", by.RequestID, "err", err)
	}
}

// Objects reads a submitted workload's top owner back from the cluster, for a clone. A
// workload the cluster no longer has is an error with NotFound() answering true.
func (s *Service) Objects(ctx context.Context, r store.WorkloadRecord) (native.Objects, error) {
	if s.cluster == nil {
		return native.Objects{}, ErrNoClusterToSubmit
	}
	return s.cluster.SubmittedObjects(ctx, refOf(r))
}

func refOf(r store.WorkloadRecord) native.Ref {
	return native.Ref{UID: r.UID, Namespace: r.Namespace, Name: r.Name, Object: r.Kind}
}
