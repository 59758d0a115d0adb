package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// submissions is the submission feature: Run:ai-shaped routes that create the four native kinds
// (POST /api/v1/workloads/workspaces, /trainings, /distributed, /inferences), read and delete
// them, and stop and run again those that can be (docs/api.md "Submitting workloads"), each
// asked of the workloads service.
type submissions struct {
	service *workloads.Service
	pods    WorkloadPods // the last cycle's pods (runningPods); nil: no cluster
}

func (h *submissions) routes(r router) {
	for _, k := range native.Kinds {
		base := "/workloads/" + k.Path
		r.api.POST(base, h.submit(k))
		r.api.GET(base+"/:id", h.get(k))
		r.api.DELETE(base+"/:id", h.act(k, workloads.Delete))
		r.api.POST(base+"/:id/suspend", h.act(k, workloads.Stop))
		r.api.POST(base+"/:id/resume", h.act(k, workloads.Run))
	}
}

// submit creates a workload of kind k (202, the workload as submitted), or with ?dryRun=true
// answers what the scheduler would do with it (200, docs/api.md "Dry runs").
func (h *submissions) submit(k native.Kind) echo.HandlerFunc {
	return submissionCourse[workloads.Submission]{
		prepare: func(c echo.Context, ctx context.Context) (workloads.Submission, error) {
			var req native.Request
			if err := decodeJSON(c, &req, native.Accepted...); err != nil {
				return workloads.Submission{}, err
			}
			if err := checkClusterID(optional[string]{Set: req.ClusterID != "", Value: req.ClusterID}, clusterID(c)); err != nil {
				return workloads.Submission{}, err
			}
			return h.service.Prepare(ctx, identity(c), k, req)
		},
		dryRun: h.service.DryRun,
		submit: h.service.Submit,
		answer: func(c echo.Context, s workloads.Submission, rec store.WorkloadRecord) any {
			v := submittedView(rec, s.RequestedName, clusterID(c))
			v.KindReason = s.Workload.As.Reason
			return v
		},
	}.run
}

// submitted is the workload with the path's id, which must be of kind k and visible to the
// caller.
func (h *submissions) submitted(c echo.Context, k native.Kind) (workloads.Visible, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return workloads.Visible{}, err
	}
	return h.service.Submitted(c.Request().Context(), identity(c), id.String(), k)
}

func (h *submissions) get(k native.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		w, err := h.submitted(c, k)
		if err != nil {
			return err
		}
		v := submittedView(w.Record, w.Record.Name, clusterID(c))
		v.RunningPods = runningPods(h.pods, w.Record.UID)
		return c.JSON(http.StatusOK, v)
	}
}

// act is the API's DELETE, suspend and resume (Run:ai's STOP and RUN) of a workload of kind
// k, answered 202 with the workload as it becomes. An inference is refused stop and run with
// the sentence why.
func (h *submissions) act(k native.Kind, a workloads.Action) echo.HandlerFunc {
	return func(c echo.Context) error {
		target(c, a.AuditAction(), "workload", c.Param("id"))
		if err := workloads.MayControlAny(identity(c)); err != nil {
			return err
		}
		w, err := h.submitted(c, k)
		if err != nil {
			return err
		}
		r, err := h.service.Act(c.Request().Context(), caller(c), w, a)
		if err != nil {
			return err
		}
		v := submittedView(r, r.Name, clusterID(c))
		v.DesiredPhase = a.DesiredPhase()
		return c.JSON(http.StatusAccepted, views.SubmissionAction{SubmittedWorkload: v, Code: http.StatusAccepted,
			Message: fmt.Sprintf("%s of %s accepted; its desired phase is %s", a.AuditAction(), r.Name, v.DesiredPhase)})
	}
}

// submittedView is a submitted workload as the submission routes answer it: the Workload API's
// fields, and Run:ai's names for the id, the name asked for, the submitter and the phases.
func submittedView(r store.WorkloadRecord, requestedName, cluster string) views.SubmittedWorkload {
	w := workloadView(r, time.Now())
	w.RunAIWorkload.ClusterID = cluster
	desired := "Running"
	if r.Phase == "Suspended" {
		desired = "Stopped"
	}
	return views.SubmittedWorkload{Workload: w, WorkloadID: r.UID, RequestedName: requestedName, CreatedBy: r.Submitter,
		DesiredPhase: desired, ActualPhase: store.RunAIPhase(r), ClusterID: cluster}
}
