package web

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/nativeworkload"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// The submitted workloads' routes after their creation: GET and DELETE by kind, and Run:ai's
// STOP and RUN (suspend, resume).

// submitted is the workload with the path's id, which must be of kind k and visible to the
// caller.
func (h *submissions) submitted(c echo.Context, k nativeworkload.Kind) (store.WorkloadRecord, auth.Scope, error) {
	r, scope, _, err := h.workloads.visibleWorkload(c)
	if err != nil {
		return r, scope, err
	}
	if r.TypeName != k.Type {
		return r, scope, store.NotFound("workload %s is a %s, not a %s; use the route of its kind, or GET /api/v1/workloads/%s", r.UID, cmp.Or(r.TypeName, r.Kind), k.Type, r.UID)
	}
	return r, scope, nil
}

func (h *submissions) get(k nativeworkload.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		r, _, err := h.submitted(c, k)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, submittedView(r, r.Name))
	}
}

func (h *submissions) delete(k nativeworkload.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		target(c, "delete", "workload", c.Param("id"))
		if err := mayControlWorkloads(c); err != nil {
			return err
		}
		r, scope, err := h.submitted(c, k)
		if err != nil {
			return err
		}
		if err := mayActOnWorkload(c, r, scope, "delete", "delete this workload"); err != nil {
			return err
		}
		if h.cluster == nil || h.store == nil {
			return errNoClusterToSubmit
		}
		err = h.cluster.DeleteWorkload(c.Request().Context(), refOf(r))
		if err := h.workloads.labelerError(c, r, err); err != nil {
			return err
		}
		h.audited(c, "delete", r, nil)
		v := submittedView(r, r.Name)
		v.DesiredPhase = "Deleted"
		return c.JSON(http.StatusAccepted, v)
	}
}

// suspend is Run:ai's STOP (suspend) and RUN (resume): a Job's spec.suspend. An inference is
// refused with the sentence why.
func (h *submissions) suspend(k nativeworkload.Kind, stop bool) echo.HandlerFunc {
	verb, action := "stop", "suspend"
	if !stop {
		verb, action = "run", "resume"
	}
	return func(c echo.Context) error {
		target(c, action, "workload", c.Param("id"))
		if err := mayControlWorkloads(c); err != nil {
			return err
		}
		r, scope, err := h.submitted(c, k)
		if err != nil {
			return err
		}
		if !k.Suspendable() {
			return store.Conflict("an inference cannot be stopped and run again: Arbiter would have to scale its Deployment to zero and remember its replicas, which it does not; delete it (DELETE /api/v1/workloads/%s/%s) and submit it again", k.Path, r.UID)
		}
		if err := mayActOnWorkload(c, r, scope, verb, verb+" this workload"); err != nil {
			return err
		}
		if r.FinishedAt != nil {
			return store.Conflict("workload %s finished at %s; submit it again instead", r.Name, r.FinishedAt.UTC().Format(time.RFC3339))
		}
		if h.cluster == nil || h.store == nil {
			return errNoClusterToSubmit
		}
		// The event, the phase and the audit row are written with the patch, as a priority
		// change is: the scheduler sees no pods of a stopped Job, so it records nothing itself.
		kind, phase := "Suspended", "Suspended"
		if !stop {
			kind, phase = "Resumed", "Pending"
		}
		ev := store.WorkloadEvent{WorkloadUID: r.UID, Kind: kind, Actor: identity(c).DisplayName,
			Message: kind + " by " + identity(c).DisplayName + " (Run:ai's " + strings.ToUpper(verb) + ")."}
		err = h.store.RecordWorkloadAction(c.Request().Context(), ev, phase, actor(c), action, func(ctx context.Context) error {
			return h.workloads.labelerError(c, r, h.cluster.SuspendJob(ctx, refOf(r), stop))
		})
		if err != nil {
			return err
		}
		r.Phase = phase
		v := submittedView(r, r.Name)
		v.DesiredPhase = map[bool]string{true: "Stopped", false: "Running"}[stop]
		return c.JSON(http.StatusAccepted, v)
	}
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

func refOf(r store.WorkloadRecord) nativeworkload.Ref {
	return nativeworkload.Ref{UID: r.UID, Namespace: r.Namespace, Name: r.Name, Object: r.Kind}
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
