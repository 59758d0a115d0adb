package web

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// workloadRecords is the workloads feature: the scheduler's workload records in the API and
// on the Workloads page, and the changes of priority and preemptibility that label a workload
// in the cluster, asked of the workloads service.
type workloadRecords struct {
	service *workloads.Service
	pods    WorkloadPods    // the last cycle's pods (runningPods); nil: no cluster
	status  OrgStatusSource // pool and project figures of the next step; zeros without a cluster
	exports chan struct{}   // a slot per CSV export running (csvExportSlots)
	log     *slog.Logger
	estimating
	layout
}

func (h *workloadRecords) routes(r router) {
	r.api.GET("/workloads", h.listWorkloads)
	r.api.GET("/workloads/count", h.countWorkloads) // Echo matches this static path before /workloads/:id
	r.api.GET("/workloads/:id", h.getWorkload)
	r.api.PATCH("/workloads/:id", h.patchWorkload)
	r.api.GET("/workloads/:id/events", h.listWorkloadEvents)
	r.page(http.MethodGet, "/workloads", routenames.Workloads, h.workloadsPage)
	r.page(http.MethodGet, "/workloads.csv", routenames.WorkloadsCSV, h.workloadsCSV)
	r.page(http.MethodPost, "/workloads/bulk", routenames.WorkloadsBulk, h.bulkChange)
	r.page(http.MethodGet, "/workloads/bulk", routenames.WorkloadsBulkOpen, h.openBulk)
	r.page(http.MethodPost, "/workloads/:id", routenames.WorkloadSave, h.saveWorkloadRow)
}

// workloadListQuery is the workload list's query, as the list and its count read them, and
// whether it reads finished records: Run:ai's deleted=true lists only those (a workload's
// record finishes when it is gone from the cluster's view: deleted, or done).
func workloadListQuery(c echo.Context) (listquery.Query, bool, error) {
	q, err := listquery.Parse(c.QueryParams(), store.WorkloadSpec)
	if err != nil {
		return q, false, err
	}
	deleted, err := boolParam(c, "deleted")
	if deleted {
		q.Filters = append(q.Filters, listquery.Filter{Field: "finished", Op: listquery.Eq, Value: "true"})
	}
	return q, deleted, err
}

func (h *workloadRecords) listWorkloads(c echo.Context) error {
	q, deleted, err := workloadListQuery(c)
	if err != nil {
		return err
	}
	list, next, err := h.service.List(c.Request().Context(), identity(c), q, deleted)
	if err != nil {
		return err
	}
	now := time.Now()
	answer := map[string]any{
		"workloads": mapSlice(list, func(r store.WorkloadRecord) views.Workload { return h.answer(c, r, now) }),
	}
	if next != nil { // absent on the last page: Run:ai's next is an integer or nothing
		answer["next"] = *next
	}
	return c.JSON(http.StatusOK, answer)
}

// countWorkloads is Run:ai's count of the workloads the list would show the caller, all pages.
func (h *workloadRecords) countWorkloads(c echo.Context) error {
	q, deleted, err := workloadListQuery(c)
	if err != nil {
		return err
	}
	n, err := h.service.Count(c.Request().Context(), identity(c), q, deleted)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, countAnswer{Count: n})
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// visibleWorkload is the workload with the id in the path, which the caller may see; one they
// may not is answered like one that does not exist (404), as lists leave it out.
func visibleWorkload(c echo.Context, service *workloads.Service) (workloads.Visible, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return workloads.Visible{}, err
	}
	return service.Visible(c.Request().Context(), identity(c), id.String())
}

func (h *workloadRecords) getWorkload(c echo.Context) error {
	w, err := visibleWorkload(c, h.service)
	if err != nil {
		return err
	}
	// One workload also says, as its page does, what it waits for and what would let it start.
	v := h.answer(c, w.Record, time.Now())
	v.NextStep = nextStep(nextStepInputOf(h.status, h.pods, w.Record, w.Project))
	return c.JSON(http.StatusOK, v)
}

// answer is the record as the Workload API answers it: with its estimate, its running pods
// and the installation's cluster.
func (h *workloadRecords) answer(c echo.Context, r store.WorkloadRecord, now time.Time) views.Workload {
	v := h.withEstimate(workloadView(r, now), r)
	v.RunningPods = runningPods(h.pods, r.UID)
	v.RunAIWorkload.ClusterID = clusterID(c)
	return v
}

func (h *workloadRecords) listWorkloadEvents(c echo.Context) error {
	w, err := visibleWorkload(c, h.service)
	if err != nil {
		return err
	}
	evs, err := h.service.Events(c.Request().Context(), w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"events": mapSlice(evs, func(e store.WorkloadEvent) views.WorkloadEvent {
		return runAIWorkloadEvent(workloadEventView(e), w.Record, clusterID(c))
	})})
}

type workloadPatchRequest struct {
	Priority       optional[string] `json:"priority"`
	Preemptibility optional[string] `json:"preemptibility"`
}

func (r workloadPatchRequest) change() workloads.Change {
	return workloads.Change{Priority: setting(r.Priority), Preemptibility: setting(r.Preemptibility)}
}

// patchWorkload changes a workload's priority and/or preemptibility (the service's Change).
// The answer is the record with the requested values. With ?dryRun=true it is checked alike
// and answered alike, and nothing is changed.
func (h *workloadRecords) patchWorkload(c echo.Context) error {
	dry, err := boolParam(c, "dryRun")
	if err != nil {
		return err
	}
	target(c, map[bool]string{true: "dry-run", false: "update"}[dry], "workload", c.Param("id"))
	if err := workloads.MayChangeAny(identity(c)); err != nil {
		return err
	}
	var req workloadPatchRequest
	if err := decodeJSON(c, &req, "priority", "preemptibility"); err != nil {
		return err
	}
	if !req.Priority.Set && !req.Preemptibility.Set {
		return badRequest("send priority, preemptibility or both, e.g. {\"priority\":\"high\"}")
	}
	w, err := visibleWorkload(c, h.service)
	if err != nil {
		return err
	}
	changed, err := h.service.Change(c.Request().Context(), caller(c), w, req.change(), dry)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.answer(c, changed, time.Now()))
}

// View-model conversions: the same models feed the JSON API and the pages.

func workloadView(r store.WorkloadRecord, now time.Time) views.Workload {
	v := views.Workload{
		ID: r.UID, Name: r.Name, Namespace: r.Namespace, Kind: r.Kind, Type: r.TypeName, Category: r.CategoryName,
		ProjectID: idString(r.ProjectID), ProjectName: r.ProjectName, DepartmentName: r.DepartmentName,
		PriorityName: r.PriorityName, PriorityValue: r.PriorityValue, Preemptible: r.Preemptibility == store.Preemptible,
		Preemptibility: r.Preemptibility, PriorityFrom: r.PriorityFrom, PreemptibilityFrom: r.PreemptibilityFrom, Phase: r.Phase, Reason: r.Reason, Message: r.Message, Gang: r.Gang,
		RequestedGPUs: r.RequestedGPUs, AllocatedGPUs: r.AllocatedGPUs, NodePool: r.NodePool, Nodes: r.Nodes,
		CreatedAt: r.QueuedAt.UTC(), StartedAt: utc(r.StartedAt), FinishedAt: utc(r.FinishedAt), Preemptions: r.Preemptions,
		Submitter: r.Submitter, RunAIWorkload: runAIWorkload(r, now),
	}
	if r.QueuePosition > 0 {
		pos := r.QueuePosition
		v.QueuePosition = &pos
	}
	if v.Nodes == nil {
		v.Nodes = []string{}
	}
	switch r.Phase { // as store's pendingSeconds sort: waiting phases count from the queue time
	case "Pending", "Suspended", "Preempted":
		v.PendingSeconds = max(0, int64(now.Sub(r.QueuedAt)/time.Second))
	}
	return v
}

func workloadEventView(e store.WorkloadEvent) views.WorkloadEvent {
	return views.WorkloadEvent{ID: strconv.FormatInt(e.ID, 10), At: e.At.UTC(), Kind: e.Kind, Reason: e.Reason, Message: e.Message, Actor: e.Actor,
		PreemptorID: e.PreemptorUID, BorrowedGPUs: e.Borrowed}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
