package web

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/labstack/echo/v4"
)

// The submitted workloads' routes after their creation: GET and DELETE by kind, and Run:ai's
// STOP and RUN (suspend, resume).

// submitted is the workload with the path's id, which must be of kind k and visible to the
// caller.
func (h *submissions) submitted(c echo.Context, k native.Kind) (store.WorkloadRecord, auth.Scope, error) {
	r, scope, _, err := h.workloads.visibleWorkload(c)
	if err != nil {
		return r, scope, err
	}
	if r.TypeName != k.Type {
		return r, scope, store.NotFound("workload %s is a %s, not a %s; use the route of its kind, or GET /api/v1/workloads/%s", r.UID, cmp.Or(r.TypeName, r.Kind), k.Type, r.UID)
	}
	return r, scope, nil
}

func (h *submissions) get(k native.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		r, _, err := h.submitted(c, k)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, submittedView(r, r.Name))
	}
}

func (h *submissions) delete(k native.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		return h.apiAction(c, k, actionDelete)
	}
}

// suspend is Run:ai's STOP (suspend) and RUN (resume): a Job's spec.suspend. An inference is
// refused with the sentence why.
func (h *submissions) suspend(k native.Kind, stop bool) echo.HandlerFunc {
	a := actionRun
	if stop {
		a = actionStop
	}
	return func(c echo.Context) error {
		return h.apiAction(c, k, a)
	}
}

// apiAction is the API's DELETE, suspend and resume of a workload of kind k: the checks and the
// change of act, answered 202 with the workload as it becomes.
func (h *submissions) apiAction(c echo.Context, k native.Kind, a workloadAction) error {
	target(c, a.auditAction(), "workload", c.Param("id"))
	if err := mayControlWorkloads(c); err != nil {
		return err
	}
	r, scope, err := h.submitted(c, k)
	if err != nil {
		return err
	}
	r, err = h.act(c, r, scope, a)
	if err != nil {
		return err
	}
	v := submittedView(r, r.Name)
	v.DesiredPhase = a.desiredPhase()
	return c.JSON(http.StatusAccepted, v)
}

// workloadAction is one of the actions a person takes on a workload after submitting it:
// Run:ai's STOP, RUN and DELETE.
type workloadAction string

const (
	actionStop   workloadAction = "stop"
	actionRun    workloadAction = "run"
	actionDelete workloadAction = "delete"
)

// auditAction is the action as the audit log names it (Run:ai's suspend and resume).
func (a workloadAction) auditAction() string {
	switch a {
	case actionStop:
		return "suspend"
	case actionRun:
		return "resume"
	}
	return string(a)
}

func (a workloadAction) desiredPhase() string {
	switch a {
	case actionStop:
		return "Stopped"
	case actionRun:
		return "Running"
	}
	return "Deleted"
}

// kindOf is the native kind of a workload's record (by its type), if it is one.
func kindOf(r store.WorkloadRecord) (native.Kind, bool) {
	for _, k := range native.Kinds {
		if k.Type == r.TypeName && k.Object == r.Kind {
			return k, true
		}
	}
	return native.Kind{}, false
}

// actionRefusal says why the caller may not take action a on workload r (nil: they may), as a
// sentence saying what to do instead: the workload's kind, the caller's role at its project
// (a researcher acts only on their own workloads), and whether it has finished. The API's
// routes and the console ask it alike: the console to show the buttons that would work, both
// before acting (act).
func actionRefusal(c echo.Context, r store.WorkloadRecord, scope auth.Scope, a workloadAction) error {
	k, ok := kindOf(r)
	if !ok {
		return store.Conflict("workload %s is a %s %s, which Arbiter does not stop, run or delete (only the Jobs and Deployments of its four native types); do it in the cluster, or ask whoever created it", r.Name, cmp.Or(r.TypeName, "workload"), r.Kind)
	}
	if a != actionDelete && !k.Suspendable() {
		return store.Conflict("an inference cannot be stopped and run again: Arbiter would have to scale its Deployment to zero and remember its replicas, which it does not; delete it (DELETE /api/v1/workloads/%s/%s) and submit it again", k.Path, r.UID)
	}
	if err := mayActOnWorkload(c, r, scope, string(a), string(a)+" this workload"); err != nil {
		return err
	}
	if a != actionDelete && r.FinishedAt != nil {
		return store.Conflict("workload %s finished at %s; submit it again instead", r.Name, r.FinishedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// act takes action a on workload r once actionRefusal allows it, and returns the record as the
// action leaves it. A stop or run writes its event, the phase and the audit row with the patch,
// as a priority change is: the scheduler sees no pods of a stopped Job, so it records nothing
// itself.
func (h *submissions) act(c echo.Context, r store.WorkloadRecord, scope auth.Scope, a workloadAction) (store.WorkloadRecord, error) {
	if err := actionRefusal(c, r, scope, a); err != nil {
		return r, err
	}
	if h.cluster == nil || h.store == nil {
		return r, errNoClusterToSubmit
	}
	if a == actionDelete {
		err := h.cluster.DeleteWorkload(c.Request().Context(), refOf(r))
		if err := h.workloads.labelerError(c, r, err); err != nil {
			return r, err
		}
		h.audited(c, "delete", r, nil)
		return r, nil
	}
	stop := a == actionStop
	kind, phase := "Suspended", "Suspended"
	if !stop {
		kind, phase = "Resumed", "Pending"
	}
	ev := store.WorkloadEvent{WorkloadUID: r.UID, Kind: kind, Actor: identity(c).DisplayName,
		Message: kind + " by " + identity(c).DisplayName + " (Run:ai's " + strings.ToUpper(string(a)) + ")."}
	err := h.store.RecordWorkloadAction(c.Request().Context(), ev, phase, actor(c), a.auditAction(), func(ctx context.Context) error {
		return h.workloads.labelerError(c, r, h.cluster.SuspendJob(ctx, refOf(r), stop))
	})
	if err != nil {
		return r, err
	}
	r.Phase = phase
	return r, nil
}

// audited writes the audit row of an action that succeeded (failures are written by the
// auditFailures middleware).
func (h *submissions) audited(c echo.Context, action string, r store.WorkloadRecord, changes map[string]any) {
	if h.audit == nil {
		return
	}
	by := actor(c)
	e := store.AuditEntry{Subject: by.Subject, SubjectType: by.SubjectType, SourceIP: by.SourceIP, RequestID: by.RequestID,
		HTTPMethod: by.HTTPMethod, Action: action, EntityType: "workload", EntityID: r.UID, EntityName: r.Name,
		Result: "success", HTTPStatus: http.StatusAccepted, Changes: changes}
	if e.Changes == nil {
		e.Changes = map[string]any{}
	}
	if err := h.audit.RecordAudit(context.WithoutCancel(c.Request().Context()), e); err != nil {
		h.log.Warn("audit row not written", "request_id", requestID(c), "err", err)
	}
}

// mayControlWorkloads refuses a caller whose role deletes, stops or runs no workload anywhere
// (a viewer), before anything is looked up.
func mayControlWorkloads(c echo.Context) error {
	if !maySomewhere(identity(c), auth.EditAnyWorkload, auth.EditOwnWorkload) {
		return authorize(c, auth.EditAnyWorkload, auth.System, "delete, stop or run workloads")
	}
	return nil
}

func refOf(r store.WorkloadRecord) native.Ref {
	return native.Ref{UID: r.UID, Namespace: r.Namespace, Name: r.Name, Object: r.Kind}
}

// submittedView is a submitted workload as the submission routes answer it: the Workload API's
// fields, and Run:ai's names for the id, the name asked for, the submitter and the phases.
func submittedView(r store.WorkloadRecord, requestedName string) views.SubmittedWorkload {
	w := workloadView(r, time.Now())
	desired := "Running"
	if r.Phase == "Suspended" {
		desired = "Stopped"
	}
	return views.SubmittedWorkload{Workload: w, WorkloadID: r.UID, RequestedName: requestedName, CreatedBy: r.Submitter,
		DesiredPhase: desired, ActualPhase: r.Phase}
}
