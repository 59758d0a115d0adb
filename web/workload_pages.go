package web

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// The Workloads page (docs/console.md): the workload records as the API lists them, filtered
// and sorted by URL parameters (so a view can be bookmarked), with inline and bulk changes of
// priority and preemptibility through the workloads service's Change, as PATCH /api/v1/workloads/{id}.

// workloadPhases are the phases the filter offers (the OpenAPI schema Workload's enum).
var workloadPhases = []string{"Pending", "Running", "Suspended", "Preempted", "Completed", "Failed"}

// bulkLimit bounds one bulk change: "all matching the filter", or the ids selected.
const bulkLimit = 2000

// waitingPhase is the Phase filter's choice of every workload that waits to run, in whichever
// phase (store.WaitingSQL): what the Overview's waiting figures count and link to.
const waitingPhase = "waiting"

// noReason is the Reason filter's value for workloads the scheduler has given no reason yet.
const noReason = "none"

// waitingReasons are the Reason filter's choices: the scheduler's reasons (S23).
var waitingReasons = []string{"GangIncomplete", "NoProject", "OverLimit", "NonPreemptibleOverQuota",
	"InsufficientCapacity", "NoMatchingNodes", "WaitingForEvictions", "BehindStrictHead", "TopologyUnsatisfiable"}

// workloadPageFilter reads the page's filters from its URL.
func workloadPageFilter(v url.Values) views.WorkloadFilter {
	return views.WorkloadFilter{Project: v.Get("project"), Phase: v.Get("phase"), Priority: v.Get("priority"),
		Preemptible: v.Get("preemptible"), Type: v.Get("type"), Reason: v.Get("reason"), Pool: v.Get("pool"),
		Search: v.Get("search"), Finished: v.Get("deleted") == "true", SortBy: v.Get("sortBy"), SortOrder: v.Get("sortOrder")}
}

// workloadPageQuery turns the page's URL into the API's list query: the filters become
// filterBy terms, a priority sorts by its value, and the store's unique tie-breaker (the
// UID) keeps the order stable across refreshes.
func workloadPageQuery(v url.Values) (listquery.Query, views.WorkloadFilter, error) {
	f := workloadPageFilter(v)
	p := url.Values{}
	for _, k := range []string{"sortBy", "sortOrder", "search", "offset"} {
		if x := v.Get(k); x != "" {
			p.Set(k, x)
		}
	}
	if p.Get("sortBy") == "priority" {
		p.Set("sortBy", "priorityValue")
	}
	var terms []string
	// The page's phases are Arbiter's (the API's k8sPhase), its priorities named.
	fields := map[string]string{"projectName": f.Project, "k8sPhase": f.Phase, "priorityName": f.Priority, "type": f.Type, "nodePool": f.Pool}
	if f.Phase == waitingPhase {
		delete(fields, "k8sPhase")
		terms = append(terms, "waiting==true")
	}
	for field, value := range fields {
		if value != "" {
			if strings.Contains(value, ",") {
				return listquery.Query{}, f, badField(field, "a filter value cannot contain a comma")
			}
			terms = append(terms, field+"=="+value)
		}
	}
	switch f.Reason {
	case "":
	case noReason:
		terms = append(terms, "reason==")
	default:
		if strings.Contains(f.Reason, ",") {
			return listquery.Query{}, f, badField("reason", "a filter value cannot contain a comma")
		}
		terms = append(terms, "reason=="+f.Reason)
	}
	switch f.Preemptible {
	case "":
	case "true", "false":
		terms = append(terms, "preemptible=="+f.Preemptible)
	default:
		return listquery.Query{}, f, badField("preemptible", "preemptible must be true or false")
	}
	slices.Sort(terms)
	if len(terms) > 0 {
		p.Set("filterBy", strings.Join(terms, ","))
	}
	q, err := listquery.Parse(p, store.WorkloadSpec)
	return q, f, err
}

func (h *workloadRecords) workloadsPage(c echo.Context) error {
	var answer bulkAnswer
	if fl, ok := h.takeBulkFlash(c); ok { // a bulk change just applied (bulkChange redirected here)
		answer.outcomes, answer.more = fl.Outcomes, fl.More
	}
	return h.renderWorkloadsPage(c, http.StatusOK, answer)
}

// openBulk answers a GET of the bulk form's address (reopened, or reloaded from the history):
// the Workloads view with the same filters, which is where a bulk change lands.
func (h *workloadRecords) openBulk(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, h.workloadsView(c))
}

// workloadsView is the Workloads page with the filters of this request's query.
func (h *workloadRecords) workloadsView(c echo.Context) string {
	if q := c.QueryParams().Encode(); q != "" {
		return pathTo(c, routenames.Workloads) + "?" + q
	}
	return pathTo(c, routenames.Workloads)
}

// bulkAnswer is what the page says of a bulk form posted: the outcome per workload (or what
// it would be, for a preview) or why nothing was done, and the form as posted.
type bulkAnswer struct {
	outcomes []views.BulkOutcome
	more     map[string]int // outcomes left out of a flash that was full, by outcome
	err      string
	preview  bool
	form     views.BulkForm
}

func (h *workloadRecords) renderWorkloadsPage(c echo.Context, status int, bulk bulkAnswer) error {
	if !h.service.HasRecords() {
		return workloads.ErrNoRecords
	}
	params := c.QueryParams()
	q, f, err := workloadPageQuery(params)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	scope, err := h.service.Scope(ctx, identity(c))
	if err != nil {
		return err
	}
	list, next, err := h.service.ListIn(ctx, scope, q, f.Finished)
	if err != nil {
		return err
	}
	prios, err := h.sortedPriorities(ctx)
	if err != nil {
		return err
	}
	m := views.WorkloadsPage{
		Page: h.page(c, "Workloads", routenames.Workloads), Filter: f, Phases: workloadPhases, Reasons: waitingReasons,
		Priorities: mapSlice(prios, func(p store.Priority) views.Priority {
			return views.Priority{ID: p.ID.String(), Name: p.Name, Value: p.Value}
		}),
		CanChange: workloads.MayChangeAny(identity(c)) == nil, Bulk: bulk.outcomes, BulkError: bulk.err, BulkPreview: bulk.preview, BulkForm: bulk.form,
		BulkMore: bulkMore(bulk.more),
		CSVHref:  pathTo(c, routenames.WorkloadsCSV) + "?" + params.Encode(), LiveHref: pathTo(c, routenames.Workloads) + "?" + params.Encode(),
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}, {"Type", "type"}, {"Project", "projectName"}, {"Department", "departmentName"},
			{"Priority", "priorityValue"}, {"Preemptible", "preemptible"}, {"Phase", "k8sPhase"}, {"Reason", "reason"}, {"Queue", "queuePosition"},
			{"requested", "requestedGpus"}, {"allocated", "allocatedGpus"}, {"Age", "createdAt"}, {"Submitter", "submitter"}}),
	}
	for i := range m.Columns { // the page's own path, also when answering the bulk form's POST
		m.Columns[i].Href = pathTo(c, routenames.Workloads) + m.Columns[i].Href[strings.Index(m.Columns[i].Href, "?"):]
		if m.Columns[i].Field == "createdAt" {
			// The column shows ages: creation time ascending lists the largest first, so the
			// arrow and aria-sort say descending (the link toggles as before).
			m.Columns[i].Desc = !m.Columns[i].Desc
		}
	}
	tab := cloneValues(params)
	tab.Del("offset")
	tab.Del("deleted")
	m.ActiveHref = pathTo(c, routenames.Workloads) + "?" + tab.Encode()
	tab.Set("deleted", "true")
	m.FinishedHref = pathTo(c, routenames.Workloads) + "?" + tab.Encode()
	m.BulkAction = pathTo(c, routenames.WorkloadsBulk) + "?" + params.Encode()
	m.NextHref, m.PrevHref = pageLinks(c, params, q, next)
	if refs, err := h.service.ProjectRefs(ctx); err == nil {
		for _, p := range refs {
			if scope.IncludesNamed(p.Name) {
				m.Projects = append(m.Projects, p.Name)
			}
		}
	} else {
		return err
	}
	rows := h.rowMaker(c, prios)
	for _, r := range list {
		row, err := rows(r)
		if err != nil {
			return err
		}
		row.Selected = bulk.form.Selected[r.UID]
		m.Rows = append(m.Rows, row)
	}
	return render(c, status, views.WorkloadsView(m))
}

// pageLinks are the Older/Newer links of a paged list, keeping the other parameters.
func pageLinks(c echo.Context, params url.Values, q listquery.Query, next *int) (nextHref, prevHref string) {
	at := func(offset int) string {
		p := cloneValues(params)
		p.Set("offset", strconv.Itoa(offset))
		return pathTo(c, routenames.Workloads) + "?" + p.Encode()
	}
	if next != nil {
		nextHref = at(*next)
	}
	if q.Offset > 0 {
		prevHref = at(max(0, q.Offset-q.Limit))
	}
	return nextHref, prevHref
}

func (h *workloadRecords) sortedPriorities(ctx context.Context) ([]store.Priority, error) {
	return h.service.PrioritiesByValue(ctx)
}

// rowMaker returns a function that makes a page row of a record, with the controls the caller
// may use on it and the sentence why one is disabled; projects are read once per request.
func (h *workloadRecords) rowMaker(c echo.Context, prios []store.Priority) func(r store.WorkloadRecord) (views.WorkloadRow, error) {
	canChange := workloads.MayChangeAny(identity(c)) == nil
	choices := h.service.ChangeChoicesFor(c.Request().Context(), identity(c), prios)
	csrf := h.page(c, "", "").CSRFToken
	now := time.Now()
	return func(r store.WorkloadRecord) (views.WorkloadRow, error) {
		row := views.WorkloadRow{Workload: h.withEstimate(workloadView(r, now), r), Age: age(now.Sub(r.QueuedAt)), CSRFToken: csrf, SelectColumn: canChange}
		row.Start = startIn(row.Workload, now)
		if !canChange || r.FinishedAt != nil {
			return row, nil
		}
		ch, err := choices(r)
		if err != nil {
			return row, err
		}
		row.Controls = true
		if ch.Refused != nil {
			_, row.Locked = statusOf(ch.Refused)
		}
		row.PriorityLocked, row.PreemptibilityLocked, row.Priorities = ch.PriorityLocked, ch.PreemptibilityLocked, ch.Priorities
		return row, nil
	}
}

// age is a duration in its largest whole unit: 45s, 12m, 3h, 5d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d/time.Second)))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}

// startIn is a waiting workload's estimated start as the Workloads table shows it: how soon,
// in the Age column's units ("in 25m"), "due now" once the time has come while it still
// waits, else what EstimateText says ("estimating", "unknown"). The table refreshes every 5 s,
// and the time itself would take three lines of the narrow Queue column.
func startIn(w views.Workload, now time.Time) string {
	if w.EstimatedStartAt == nil {
		return views.EstimateText(w)
	}
	d := w.EstimatedStartAt.Sub(now)
	if d <= 0 {
		return "due now"
	}
	return "in " + age(d)
}

// workloadForm reads a change from a form: a priority name and/or a preemptibility; an empty
// value leaves that property as it is.
func workloadForm(c echo.Context) workloadPatchRequest {
	var req workloadPatchRequest
	if v := c.FormValue("priority"); v != "" {
		req.Priority = optional[string]{Set: true, Value: v}
	}
	if v := c.FormValue("preemptibility"); v != "" {
		req.Preemptibility = optional[string]{Set: true, Value: v}
	}
	return req
}

// saveWorkloadRow is a row's inline change: with htmx the row again, saying Saved or showing
// the sentence of the refusal in place; without JavaScript a redirect back to the page.
func (h *workloadRecords) saveWorkloadRow(c echo.Context) error {
	target(c, "update", "workload", c.Param("id"))
	req := workloadForm(c)
	saveErr := workloads.MayChangeAny(identity(c))
	if saveErr == nil && !req.Priority.Set && !req.Preemptibility.Set {
		saveErr = badRequest("choose a priority or a preemptibility")
	}
	w, err := visibleWorkload(c, h.service)
	if err != nil {
		return err
	}
	r := w.Record
	changed := r
	if saveErr == nil {
		changed, saveErr = h.service.Change(c.Request().Context(), caller(c), w, req.change(), false)
	}
	if !isHTMX(c) {
		if saveErr != nil {
			return saveErr
		}
		return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.Workloads))
	}
	prios, err := h.sortedPriorities(c.Request().Context())
	if err != nil {
		return err
	}
	row, err := h.rowMaker(c, prios)(r)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if saveErr != nil {
		status, row.Error = statusOf(saveErr)
		if status >= 500 {
			status = http.StatusOK // htmx swaps no 5xx answer; the row carries the sentence
		}
	} else {
		row.Workload = workloadView(changed, time.Now())
		row.Saved = "priority"
		if req.Preemptibility.Set {
			row.Saved = "preemptibility"
		}
	}
	return render(c, status, views.WorkloadRowView(row))
}

// bulkChange sets a priority and/or a preemptibility on the selected workloads (or all that
// match the page's filters, which the form's query carries) in one request, each through
// the service's Change, and shows the page with what happened to each. With preview=true (the form's
// Preview button) each is only checked: the page says what applying would do, and keeps the
// form and the selection for applying it.
func (h *workloadRecords) bulkChange(c echo.Context) error {
	preview := c.FormValue("preview") == "true"
	target(c, map[bool]string{true: "dry-run", false: "update"}[preview], "workload", "bulk")
	if err := workloads.MayChangeAny(identity(c)); err != nil {
		return err
	}
	req := workloadForm(c)
	if err := c.Request().ParseForm(); err != nil {
		return badRequest("the form could not be read")
	}
	ids := uniqueIDs(c.Request().PostForm["id"])
	answer := bulkAnswer{preview: preview, form: views.BulkForm{Priority: req.Priority.Value, Preemptibility: req.Preemptibility.Value,
		All: c.FormValue("all") == "true", Selected: map[string]bool{}}}
	for _, id := range ids {
		answer.form.Selected[id] = true
	}
	if !req.Priority.Set && !req.Preemptibility.Set {
		answer.err = "Choose a priority or a preemptibility to set."
		return h.renderWorkloadsPage(c, http.StatusBadRequest, answer)
	}
	if answer.form.All {
		var err error
		if ids, err = h.matchingIDs(c); err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		answer.err = "Select workloads, or all matching the filter."
		return h.renderWorkloadsPage(c, http.StatusBadRequest, answer)
	}
	if len(ids) > bulkLimit {
		answer.err = fmt.Sprintf("%d workloads are selected; one bulk change takes at most %d. Select fewer, or narrow the filter.", len(ids), bulkLimit)
		return h.renderWorkloadsPage(c, http.StatusBadRequest, answer)
	}
	done, refused := "changed", "refused"
	if preview {
		done, refused = "would change", "would be refused"
	}
	for _, id := range ids {
		o := views.BulkOutcome{ID: id, Name: id, Outcome: done}
		w, err := h.service.Visible(c.Request().Context(), identity(c), id)
		if err == nil {
			o.Name = w.Record.Name
			_, err = h.service.Change(c.Request().Context(), caller(c), w, req.change(), preview)
		}
		if err != nil {
			status, msg := statusOf(err)
			o.Outcome, o.Message = refused, msg
			if status == http.StatusNotFound || errors.Is(err, store.ErrNotFound) {
				o.Outcome = "not found"
			}
		}
		answer.outcomes = append(answer.outcomes, o)
	}
	if !preview { // applied: the next change starts afresh, on the view it was made from
		h.setBulkFlash(c, pathTo(c, routenames.Workloads), answer.outcomes)
		return c.Redirect(http.StatusSeeOther, h.workloadsView(c))
	}
	return h.renderWorkloadsPage(c, http.StatusOK, answer)
}

// uniqueIDs is ids in their order with each id once (a form may repeat one).
func uniqueIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// bulkMore says the outcomes a full flash left out, in a stable order.
func bulkMore(more map[string]int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(more)) {
		out = append(out, fmt.Sprintf("%d more %s", more[k], k))
	}
	return out
}

// matchingIDs are the workloads that match the page's filters (at most bulkLimit).
func (h *workloadRecords) matchingIDs(c echo.Context) ([]string, error) {
	params := cloneValues(c.QueryParams())
	params.Del("offset")
	q, f, err := workloadPageQuery(params)
	if err != nil {
		return nil, err
	}
	scope, err := h.service.Scope(c.Request().Context(), identity(c))
	if err != nil {
		return nil, err
	}
	q.Limit = listquery.MaxLimit
	var ids []string
	for {
		list, next, err := h.service.ListIn(c.Request().Context(), scope, q, f.Finished)
		if err != nil {
			return nil, err
		}
		for _, r := range list {
			ids = append(ids, r.UID)
		}
		if next == nil || len(ids) >= bulkLimit {
			break
		}
		q.Offset = *next
	}
	if len(ids) > bulkLimit {
		return nil, badRequest("%d or more workloads match the filter; narrow it to at most %d for one bulk change", len(ids), bulkLimit)
	}
	return ids, nil
}
