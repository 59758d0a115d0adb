package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// WorkloadStore is what the workload routes need from the store.
type WorkloadStore interface {
	VisibleWorkloads(ctx context.Context, q listquery.Query, includeFinished bool, scope store.WorkloadScope) ([]store.WorkloadRecord, *int, error)
	// VisibleWorkloadsAfter is a page of the same rows read by key (the CSV export's walk).
	VisibleWorkloadsAfter(ctx context.Context, q listquery.Query, includeFinished bool, scope store.WorkloadScope, after *store.WorkloadCursor, limit int) ([]store.WorkloadRecord, *store.WorkloadCursor, error)
	WorkloadRecord(ctx context.Context, uid string) (store.WorkloadRecord, error)
	WorkloadEvents(ctx context.Context, uid string) ([]store.WorkloadEvent, error)
	// CountWorkloads counts the records scope may see: by phase, pending ones by reason, and
	// preemptions and reclaims since a time (the Overview's tiles).
	CountWorkloads(ctx context.Context, scope store.WorkloadScope, since time.Time) (store.WorkloadCounts, error)
	ProjectRefs(ctx context.Context) ([]store.ProjectRef, error)
	ProjectNamed(ctx context.Context, name string) (store.Project, error)
	AddWorkloadEvents(ctx context.Context, evs []store.WorkloadEvent, by store.Actor, changes map[string]store.Change, apply func(ctx context.Context) error) error
}

// WorkloadLabeler patches labels on a workload's top owner in the cluster (S9); a nil value
// removes the label. An error with a NotFound() bool method that answers true says the cluster
// has no such workload.
type WorkloadLabeler interface {
	PatchWorkloadLabels(ctx context.Context, uid string, set map[string]*string) error
}

// The labels S7 and S8 read on the top owner.
const (
	labelPriority       = "priorityClassName"
	labelPreemptibility = "kai.scheduler/preemptibility"
)

// workloads is the workloads feature: the scheduler's workload records in the API, and the
// changes of priority and preemptibility that label a workload in the cluster.
type workloads struct {
	store      WorkloadStore
	labeler    WorkloadLabeler // nil: no cluster is connected
	priorities WorkloadPropertiesStore
	estimating bool                    // false: no cluster is connected, so nothing is estimated
	standings  PreemptibilityStandings // nil: no cluster is connected
	log        *slog.Logger
	exports    chan struct{} // a slot per CSV export running (csvExportSlots)
	layout
}

func (h *workloads) routes(r router) {
	r.api.GET("/workloads", h.listWorkloads)
	r.api.GET("/workloads/:id", h.getWorkload)
	r.api.PATCH("/workloads/:id", h.patchWorkload)
	r.api.GET("/workloads/:id/events", h.listWorkloadEvents)
	r.page(http.MethodGet, "/workloads", routenames.Workloads, h.workloadsPage)
	r.page(http.MethodGet, "/workloads.csv", routenames.WorkloadsCSV, h.workloadsCSV)
	r.page(http.MethodPost, "/workloads/bulk", routenames.WorkloadsBulk, h.bulkChange)
	r.page(http.MethodGet, "/workloads/bulk", routenames.WorkloadsBulkOpen, h.openBulk)
	r.page(http.MethodPost, "/workloads/:id", routenames.WorkloadSave, h.saveWorkloadRow)
}

func (h *workloads) listWorkloads(c echo.Context) error {
	params := c.QueryParams()
	if params.Get("sortBy") == "priority" { // priorities sort by value, not by name
		params = cloneValues(params)
		params.Set("sortBy", "priorityValue")
	}
	q, err := listquery.Parse(params, store.WorkloadSpec)
	if err != nil {
		return err
	}
	deleted, err := boolParam(c, "deleted")
	if err != nil {
		return err
	}
	if h.store == nil {
		return errNoWorkloadStore
	}
	scope, err := h.workloadScope(c)
	if err != nil {
		return err
	}
	list, next, err := h.store.VisibleWorkloads(c.Request().Context(), q, deleted, scope)
	if err != nil {
		return err
	}
	now := time.Now()
	return c.JSON(http.StatusOK, map[string]any{
		"workloads": mapSlice(list, func(r store.WorkloadRecord) views.Workload { return h.withEstimate(workloadView(r, now), r) }),
		"next":      next,
	})
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// workloadScope is what lists show the caller: everything to those who may read the whole
// system, else the workloads of the projects they hold a role in (directly or through their
// department). Workloads without a project are seen only system-wide.
func (h *workloads) workloadScope(c echo.Context) (store.WorkloadScope, error) {
	if can(c, auth.Read, auth.System) {
		return store.WorkloadScope{All: true}, nil
	}
	scope := store.WorkloadScope{Projects: []string{}}
	if len(identity(c).Grants) == 0 {
		return scope, nil
	}
	refs, err := h.store.ProjectRefs(c.Request().Context())
	if err != nil {
		return scope, err
	}
	for _, p := range refs {
		if can(c, auth.Read, auth.Project(p.ID.String(), p.DepartmentID.String())) {
			scope.Projects = append(scope.Projects, p.Name)
		}
	}
	return scope, nil
}

// workloadProject is a workload's project as an access scope, with the project when it still
// exists (nil for a workload without a project, or whose project was deleted).
func (h *workloads) workloadProject(ctx context.Context, r store.WorkloadRecord) (auth.Scope, *store.Project, error) {
	if r.ProjectName == "" {
		return auth.System, nil, nil
	}
	p, err := h.store.ProjectNamed(ctx, r.ProjectName)
	if errors.Is(err, store.ErrNotFound) {
		return auth.System, nil, nil
	}
	if err != nil {
		return auth.Scope{}, nil, err
	}
	return auth.Project(p.ID.String(), p.DepartmentID.String()), &p, nil
}

// visibleWorkload returns the record with the id in the path, and its project; a workload the
// caller may not see is answered like one that does not exist (404), as lists leave it out.
func (h *workloads) visibleWorkload(c echo.Context) (store.WorkloadRecord, auth.Scope, *store.Project, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return store.WorkloadRecord{}, auth.Scope{}, nil, err
	}
	return h.visibleWorkloadID(c, id.String())
}

// visibleWorkloadID is visibleWorkload for an id given otherwise (a bulk change's rows).
func (h *workloads) visibleWorkloadID(c echo.Context, id string) (store.WorkloadRecord, auth.Scope, *store.Project, error) {
	if h.store == nil {
		return store.WorkloadRecord{}, auth.Scope{}, nil, errNoWorkloadStore
	}
	ctx := c.Request().Context()
	r, err := h.store.WorkloadRecord(ctx, id)
	if err != nil {
		return r, auth.Scope{}, nil, err
	}
	scope, p, err := h.workloadProject(ctx, r)
	if err != nil {
		return r, scope, nil, err
	}
	if !can(c, auth.Read, scope) {
		return r, scope, nil, store.NotFound("workload %s was not found", id)
	}
	return r, scope, p, nil
}

func (h *workloads) getWorkload(c echo.Context) error {
	r, _, _, err := h.visibleWorkload(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.withEstimate(workloadView(r, time.Now()), r))
}

func (h *workloads) listWorkloadEvents(c echo.Context) error {
	r, _, _, err := h.visibleWorkload(c)
	if err != nil {
		return err
	}
	evs, err := h.store.WorkloadEvents(c.Request().Context(), r.UID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"events": mapSlice(evs, workloadEventView)})
}

type workloadPatchRequest struct {
	Priority       optional[string] `json:"priority"`
	Preemptibility optional[string] `json:"preemptibility"`
}

// patchWorkload changes a workload's priority and/or preemptibility by labelling its top owner
// (S9), within the project's policy, the caller's role and S14, and records a PriorityChanged
// and/or PreemptibilityChanged event and an audit row. The answer is the record with the
// requested values; the scheduler's next cycle records what it resolved from the labels. With
// ?dryRun=true it is checked alike and answered alike, and nothing is changed.
//
// Roles that may edit any workload of the project (research manager, department admin, admin)
// change any; a researcher only those they submitted through Arbiter (the record's submitter,
// docs/security.md "Ownership").
func (h *workloads) patchWorkload(c echo.Context) error {
	dry, err := boolParam(c, "dryRun")
	if err != nil {
		return err
	}
	target(c, map[bool]string{true: "dry-run", false: "update"}[dry], "workload", c.Param("id"))
	if err := mayChangeWorkloads(c); err != nil {
		return err
	}
	var req workloadPatchRequest
	if err := decodeJSON(c, &req, "priority", "preemptibility"); err != nil {
		return err
	}
	if !req.Priority.Set && !req.Preemptibility.Set {
		return badRequest("send priority, preemptibility or both, e.g. {\"priority\":\"high\"}")
	}
	r, scope, project, err := h.visibleWorkload(c)
	if err != nil {
		return err
	}
	view, err := h.changeWorkload(c, r, scope, project, req, dry)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.withEstimate(view, r))
}

// mayChangeWorkloads refuses a caller whose role changes no workload anywhere (a viewer).
func mayChangeWorkloads(c echo.Context) error {
	if !maySomewhere(identity(c), auth.EditAnyWorkload, auth.EditOwnWorkload) {
		return authorize(c, auth.EditAnyWorkload, auth.System, "change workloads' priority or preemptibility")
	}
	return nil
}

// submitterOf is how a workload records who submitted it: a person's subject (their user name,
// or "issuer subject" for OIDC), anything else (an API key) prefixed with its kind so that a key
// never passes for a person of the same name.
func submitterOf(id auth.Identity) string {
	if id.SubjectType == "user" {
		return id.Subject
	}
	return id.SubjectType + ":" + id.Subject
}

// mayActOnWorkload says why the caller may not act on this workload (nil: they may): roles
// that edit any workload of its project may; a researcher only on the workloads they submitted
// (docs/security.md "Ownership"). verb says what ("change", "delete", "stop"), what the action
// for the generic refusal.
func mayActOnWorkload(c echo.Context, r store.WorkloadRecord, scope auth.Scope, verb, what string) error {
	own := r.Submitter != "" && r.Submitter == submitterOf(identity(c))
	if can(c, auth.EditAnyWorkload, scope) || (own && can(c, auth.EditOwnWorkload, scope)) {
		return nil
	}
	if can(c, auth.EditOwnWorkload, scope) {
		if r.Submitter == "" {
			return forbidden("researchers may %s only their own workloads, and %s was not submitted through Arbiter, so it has no submitter; ask a research manager of project %s", verb, r.Name, r.ProjectName)
		}
		return forbidden("researchers may %s only their own workloads, and %s was submitted by %s; ask them or a research manager of project %s", verb, r.Name, r.Submitter, r.ProjectName)
	}
	return authorize(c, auth.EditAnyWorkload, scope, what)
}

// mayChangeWorkload says why the caller may not change this workload's priority or
// preemptibility (nil: they may): the role at the workload's project, or that it has finished.
func mayChangeWorkload(c echo.Context, r store.WorkloadRecord, scope auth.Scope) error {
	if err := mayActOnWorkload(c, r, scope, "change", "change this workload's priority or preemptibility"); err != nil {
		return err
	}
	if r.FinishedAt != nil {
		return store.Conflict("workload %s finished at %s; its priority and preemptibility can no longer change", r.Name, r.FinishedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// errNoCluster answers a change of labels on a server without a cluster.
var errNoCluster = &httpError{status: http.StatusServiceUnavailable, message: "no cluster is connected, so workload labels cannot be changed; start Arbiter with a kubeconfig"}

// maySomewhere reports whether one of the caller's grants allows one of the actions at the
// grant's own scope: whether the caller could take the action on anything at all.
func maySomewhere(id auth.Identity, actions ...auth.Action) bool {
	for _, g := range id.Grants {
		one := auth.Identity{Grants: []auth.Grant{g}}
		for _, a := range actions {
			if auth.Allowed(one, a, g.Scope) {
				return true
			}
		}
	}
	return false
}

// errNoWorkloadStore answers workload routes of a server built without workload records.
var errNoWorkloadStore = &httpError{status: http.StatusServiceUnavailable, message: "workload records are not available on this server"}

// checkWorkloadPriority resolves a requested priority name against the dictionary and the
// project's policy (S7): the project must allow changing priority, and the value must be within
// its minPriority..maxPriority. policyGives is the priority the policy gives the workload when
// it asks for none: asking for it explicitly changes nothing today, so a project that forbids
// changes accepts it (and the label keeps it if the default changes later, S9).
// field is the request's name for it ("priority" in a PATCH, "spec.priorityClass" in a
// submission).
func (h *workloads) checkWorkloadPriority(ctx context.Context, field string, req optional[string], project *store.Project, policyGives string) (store.Priority, error) {
	dict, err := h.priorities.Priorities(ctx, listquery.Query{})
	if err != nil {
		return store.Priority{}, err
	}
	slices.SortFunc(dict, func(a, b store.Priority) int { return cmp.Compare(a.Value, b.Value) })
	names := mapSlice(dict, func(p store.Priority) string { return p.Name })
	if req.Null || req.Value == "" {
		return store.Priority{}, badField(field, "%s must name a priority; use one of: %s", field, strings.Join(names, ", "))
	}
	byName := func(name string) (store.Priority, bool) {
		i := slices.IndexFunc(dict, func(p store.Priority) bool { return p.Name == name })
		if i < 0 {
			return store.Priority{}, false
		}
		return dict[i], true
	}
	prio, ok := byName(req.Value)
	if !ok {
		return prio, badField(field, "%s %q is not in the priority dictionary; use one of: %s", field, req.Value, strings.Join(names, ", "))
	}
	if project == nil || (prio.Name == policyGives && !project.AllowPriorityChange) {
		return prio, nil
	}
	if err := priorityChangeForbidden(project); err != nil {
		return prio, err
	}
	lo, hasLo := byName(views.Deref(project.MinPriority))
	hi, hasHi := byName(views.Deref(project.MaxPriority))
	if (hasLo && prio.Value < lo.Value) || (hasHi && prio.Value > hi.Value) {
		switch {
		case hasLo && hasHi:
			return prio, badRequest("priority %s (%d) is outside project %s's allowed range %s (%d) to %s (%d); pick a priority within it",
				prio.Name, prio.Value, project.Name, lo.Name, lo.Value, hi.Name, hi.Value)
		case hasLo:
			return prio, badRequest("priority %s (%d) is below project %s's minPriority %s (%d); pick %s or higher",
				prio.Name, prio.Value, project.Name, lo.Name, lo.Value, lo.Name)
		default:
			return prio, badRequest("priority %s (%d) is above project %s's maxPriority %s (%d); pick %s or lower",
				prio.Name, prio.Value, project.Name, hi.Name, hi.Value, hi.Name)
		}
	}
	return prio, nil
}

// priorityChangeForbidden says why the project's policy allows no change of priority (nil: it
// allows one, within its range).
func priorityChangeForbidden(project *store.Project) error {
	if project != nil && !project.AllowPriorityChange {
		return badRequest("project %s does not allow changing priority (its policy's allowPriorityChange is false); ask a research manager of the project", project.Name)
	}
	return nil
}

// preemptibilityChangeForbidden says why the project's policy allows no change of
// preemptibility (nil: it allows one).
func preemptibilityChangeForbidden(project *store.Project) error {
	return preemptibilityRefused(project, "", "")
}

// preemptibilityRefused says why the project's policy refuses the preemptibility asked for
// (nil: it accepts it): a project that forbids changes still accepts the one its workloads get
// without asking (policyGives), as asking for it changes nothing today.
func preemptibilityRefused(project *store.Project, asked, policyGives string) error {
	if project != nil && !project.AllowPreemptibilityChange && (asked == "" || asked != policyGives) {
		return badRequest("project %s does not allow changing preemptibility (its policy's allowPreemptibilityChange is false); its workloads keep their type's default", project.Name)
	}
	return nil
}

// labelerError turns the cluster's answer to a label patch into the API's: a workload the
// cluster no longer has is a 404, anything else a 503 whose cause goes to the log.
func (h *workloads) labelerError(c echo.Context, r store.WorkloadRecord, err error) error {
	if err == nil {
		return nil
	}
	var nf interface{ NotFound() bool }
	if errors.As(err, &nf) && nf.NotFound() {
		return &httpError{status: http.StatusNotFound, message: fmt.Sprintf("workload %s (%s/%s) is no longer in the cluster; it may have finished or been deleted", r.UID, r.Namespace, r.Name)}
	}
	h.log.Warn("workload labels not patched", "request_id", requestID(c), "workload", r.UID, "err", err)
	return &httpError{status: http.StatusServiceUnavailable, message: "the cluster did not accept the label change; try again shortly (the request id in X-Request-Id helps an operator find why)"}
}

// View-model conversions: the same models feed the JSON API and the pages.

func workloadView(r store.WorkloadRecord, now time.Time) views.Workload {
	v := views.Workload{
		ID: r.UID, Name: r.Name, Namespace: r.Namespace, Kind: r.Kind, Type: r.TypeName, Category: r.CategoryName,
		ProjectID: idString(r.ProjectID), ProjectName: r.ProjectName, DepartmentName: r.DepartmentName,
		Priority: r.PriorityName, PriorityValue: r.PriorityValue, Preemptible: r.Preemptibility == store.Preemptible,
		Preemptibility: r.Preemptibility, Phase: r.Phase, Reason: r.Reason, Message: r.Message, Gang: r.Gang,
		RequestedGPUs: r.RequestedGPUs, AllocatedGPUs: r.AllocatedGPUs, NodePool: r.NodePool, Nodes: r.Nodes,
		CreatedAt: r.QueuedAt.UTC(), StartedAt: utc(r.StartedAt), FinishedAt: utc(r.FinishedAt), Preemptions: r.Preemptions,
		Submitter: r.Submitter,
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
	return views.WorkloadEvent{ID: e.ID, At: e.At.UTC(), Kind: e.Kind, Reason: e.Reason, Message: e.Message, Actor: e.Actor,
		PreemptorID: e.PreemptorUID, BorrowedGPUs: e.Borrowed}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
