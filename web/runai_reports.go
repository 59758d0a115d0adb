package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// usageReports answers Run:ai's consumption reports (/api/v1/org-unit/reports). A report is
// computed inside the request that creates it, under reportDeadline, from the usage history's
// GPU-hours per UTC day, and kept with its CSV (store/usage_reports.go bounds how many and for
// how long); so it is Ready when the creation answers, and reads the same on every replica.
// At most reportSlots reports are computed at once in a replica; one more is refused at once
// (503 with Retry-After), not queued. Reports are the organization's accounts: reading them
// needs a system-wide read grant, making and deleting them the admin's.
type usageReports struct {
	usage UsageStore // nil: every route answers 503 but availability, which says false
	keep  store.UsageRetention
	org   organization
	slots chan struct{}
}

const (
	reportDeadline   = 30 * time.Second
	reportSlots      = 2
	reportRetryAfter = 10 // seconds
	// maxReportFilters bounds a report's filterBy terms.
	maxReportFilters = 50
)

func newUsageReports(usage UsageStore, keep store.UsageRetention, org organization) *usageReports {
	return &usageReports{usage: usage, keep: keep, org: org, slots: make(chan struct{}, reportSlots)}
}

func (h *usageReports) routes(r router) {
	r.api.GET("/org-unit/reports", h.list)
	r.api.POST("/org-unit/reports", h.create)
	r.api.GET("/org-unit/reports/count", h.count)
	r.api.GET("/org-unit/reports/availability", h.availability)
	r.api.GET("/org-unit/reports/:reportId", h.get)
	r.api.DELETE("/org-unit/reports/:reportId", h.delete)
	r.api.GET("/org-unit/reports/:reportId/file", h.file)
}

// runAIReport is Run:ai's Report: the request's fields and the calculated ones.
type runAIReport struct {
	Name            string    `json:"name"`
	Description     string    `json:"description,omitempty"`
	Start           time.Time `json:"start"`
	End             time.Time `json:"end"`
	GroupBy         *string   `json:"groupBy"`
	FilterBy        []string  `json:"filterBy"`
	ID              uuid.UUID `json:"id"`
	CreatedAt       time.Time `json:"createdAt"`
	CreatedBy       string    `json:"createdBy"`
	TenantID        int       `json:"tenantId"`
	Status          string    `json:"status"`
	StatusUpdatedAt time.Time `json:"statusUpdatedAt"`
	StatusMessage   string    `json:"statusMessage,omitempty"`
}

func runAIReportView(r store.UsageReport) runAIReport {
	return runAIReport{Name: r.Name, Description: r.Description, Start: r.Start.UTC(), End: r.End.UTC(), GroupBy: r.GroupBy,
		FilterBy: r.FilterBy, ID: r.ID, CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy, TenantID: runAITenantID,
		Status: r.Status, StatusUpdatedAt: r.StatusUpdatedAt.UTC(), StatusMessage: r.StatusMessage}
}

// reportRequest is Run:ai's ReportRequestFields as sent.
type reportRequest struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Start       string   `json:"start"`
	End         string   `json:"end"`
	GroupBy     *string  `json:"groupBy"`
	FilterBy    []string `json:"filterBy"`
}

var reportRequestFields = []string{"name", "description", "start", "end", "groupBy", "filterBy"}

// reportGroupings are Run:ai's ReportGroupByOptions.
var reportGroupings = []string{"Nodepool", "Project", "Department", "Cluster"}

// reportFilter is the pattern of one filterBy term of a report (Run:ai's).
var reportFilter = regexp.MustCompile(`^(projectName|departmentName|clusterId)==(.+)$`)

// reportSpec is a checked report request: the period, the grouping and the filters' names.
type reportSpec struct {
	name, description string
	start, end        time.Time
	groupBy           *string
	filterBy          []string
	projectNames      []string
	departmentNames   []string
	clusterIDs        []string
}

// checkReportRequest checks what a report request says on its own, before anything is read.
func checkReportRequest(r reportRequest) (reportSpec, error) {
	s := reportSpec{name: strings.TrimSpace(r.Name), description: r.Description, groupBy: r.GroupBy, filterBy: r.FilterBy}
	if s.name == "" {
		return s, badField("name", "name is required: say what the report is for, e.g. \"GPU-hours, November\"")
	}
	if err := checkLength("name", s.name, 200); err != nil {
		return s, err
	}
	if err := checkLength("description", s.description, 2000); err != nil {
		return s, err
	}
	var err error
	if s.start, s.end, err = parsePeriod("start", r.Start, "end", r.End); err != nil {
		return s, err
	}
	if r.GroupBy != nil && !slices.Contains(reportGroupings, *r.GroupBy) {
		return s, badField("groupBy", "groupBy %q is not a grouping of reports; use Nodepool, Project, Department or Cluster, or leave it out for one row per project and node pool", clipText(*r.GroupBy))
	}
	if len(r.FilterBy) > maxReportFilters {
		return s, badField("filterBy", "filterBy has %d terms; a report takes at most %d", len(r.FilterBy), maxReportFilters)
	}
	for _, term := range r.FilterBy {
		m := reportFilter.FindStringSubmatch(term)
		if m == nil {
			return s, badField("filterBy", "filterBy term %q is not one a report takes; write projectName==NAME, departmentName==NAME or clusterId==ID", clipText(term))
		}
		if err := checkLength("filterBy", m[2], 253); err != nil {
			return s, err
		}
		switch m[1] {
		case "projectName":
			s.projectNames = append(s.projectNames, m[2])
		case "departmentName":
			s.departmentNames = append(s.departmentNames, m[2])
		case "clusterId":
			s.clusterIDs = append(s.clusterIDs, m[2])
		}
	}
	return s, nil
}

func (h *usageReports) create(c echo.Context) error {
	if err := authorize(c, auth.ManageSystem, auth.System, "create consumption reports"); err != nil {
		return err
	}
	var req reportRequest
	if err := decodeJSON(c, &req, reportRequestFields...); err != nil {
		return err
	}
	spec, err := checkReportRequest(req)
	if err != nil {
		return err
	}
	if h.usage == nil {
		return errNoUsageHistory
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		return &httpError{status: http.StatusServiceUnavailable, retryAfter: reportRetryAfter,
			message: fmt.Sprintf("%d reports are being computed already; try again in %d seconds", reportSlots, reportRetryAfter)}
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), reportDeadline)
	defer cancel()
	data, rows, err := h.compute(ctx, c, spec)
	if err != nil {
		return err
	}
	rep, err := h.usage.CreateUsageReport(ctx, store.NewUsageReport{ID: uuid.New(), Name: spec.name, Description: spec.description,
		Start: spec.start, End: spec.end, GroupBy: spec.groupBy, FilterBy: spec.filterBy, CSV: data, Rows: rows,
		StatusMessage: fmt.Sprintf("Ready: %d rows of GPU-hours per UTC day", rows)}, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, runAIReportView(rep))
}

// orgNames are the current names of the organization's units, to name the history's ids with.
type orgNames struct {
	projects    map[uuid.UUID]store.ProjectRef
	departments map[uuid.UUID]string
}

func (h *usageReports) names(ctx context.Context) (orgNames, error) {
	n := orgNames{projects: map[uuid.UUID]store.ProjectRef{}, departments: map[uuid.UUID]string{}}
	refs, err := h.org.store.ProjectRefs(ctx)
	if err != nil {
		return n, err
	}
	for _, p := range refs {
		n.projects[p.ID] = p
	}
	ds, err := h.org.store.Departments(ctx, listquery.Query{SortBy: "name", Limit: listquery.MaxLimit})
	if err != nil {
		return n, err
	}
	for _, d := range ds {
		n.departments[d.ID] = d.Name
	}
	return n, nil
}

// compute reads the GPU-hours of the report's period and writes them as CSV. The period is
// read as whole UTC days: from start's day to the day end falls in (end at midnight excluded).
func (h *usageReports) compute(ctx context.Context, c echo.Context, s reportSpec) ([]byte, int, error) {
	for _, id := range s.clusterIDs {
		if id != clusterID(c) {
			return nil, 0, badField("filterBy", "filterBy clusterId==%s names another cluster; this installation is one cluster, %s", clipText(id), clusterID(c))
		}
	}
	names, err := h.names(ctx)
	if err != nil {
		return nil, 0, err
	}
	var projects []uuid.UUID
	for _, name := range s.projectNames {
		found := false
		for _, p := range names.projects {
			if p.Name == name {
				projects, found = append(projects, p.ID), true
			}
		}
		if !found {
			return nil, 0, badField("filterBy", "filterBy projectName==%s names no project; check the name", clipText(name))
		}
	}
	departments := map[uuid.UUID]bool{}
	for _, name := range s.departmentNames {
		found := false
		for id, n := range names.departments {
			if n == name {
				departments[id], found = true, true
			}
		}
		if !found {
			return nil, 0, badField("filterBy", "filterBy departmentName==%s names no department; check the name", clipText(name))
		}
	}
	from := s.start.Truncate(24 * time.Hour)
	to := s.end.Truncate(24 * time.Hour)
	if to.Before(s.end) {
		to = to.Add(24 * time.Hour)
	}
	if err := checkReach("start", h.keep, from, 24*time.Hour, time.Now(), func(time.Duration) string { return "ask for a later start" }); err != nil {
		return nil, 0, err
	}
	days, err := h.usage.UsageDays(ctx, from, to, nil, projects)
	if err != nil {
		return nil, 0, usageStoreError(err, "start", "give a period the history can answer")
	}
	if len(departments) > 0 {
		days = slices.DeleteFunc(days, func(d store.UsageDay) bool { return !departments[d.DepartmentID] })
	}
	return reportCSV(days, s.groupBy, names, clusterID(c))
}

// reportRow is one line of a report: a day and a group's summed GPU-hours.
type reportRow struct {
	day                     time.Time
	cluster, pool           string
	projectID, departmentID uuid.UUID
	sums                    store.UsageDay
}

// reportCSV sums days by the grouping and writes the CSV, at most store.MaxUsageReportBytes.
func reportCSV(days []store.UsageDay, groupBy *string, names orgNames, cluster string) ([]byte, int, error) {
	grouping := ""
	if groupBy != nil {
		grouping = *groupBy
	}
	type key struct {
		day        time.Time
		pool       string
		project    uuid.UUID
		department uuid.UUID
	}
	rows := map[key]*reportRow{}
	var order []key
	for _, d := range days {
		k := key{day: d.Day.UTC()}
		switch grouping {
		case "":
			k.pool, k.project, k.department = d.NodePool, d.ProjectID, d.DepartmentID
		case "Project":
			k.project, k.department = d.ProjectID, d.DepartmentID
		case "Department":
			k.department = d.DepartmentID
		case "Nodepool":
			k.pool = d.NodePool
		}
		r, ok := rows[k]
		if !ok {
			r = &reportRow{day: k.day, cluster: cluster, pool: k.pool, projectID: k.project, departmentID: k.department}
			rows[k] = r
			order = append(order, k)
		}
		r.sums.AllocatedGPUHours += d.AllocatedGPUHours
		r.sums.NonPreemptibleGPUHours += d.NonPreemptibleGPUHours
		r.sums.BorrowedGPUHours += d.BorrowedGPUHours
		r.sums.PendingGPUHours += d.PendingGPUHours
		r.sums.DeservedGPUHours += d.DeservedGPUHours
		r.sums.FairShareGPUHours += d.FairShareGPUHours
		r.sums.Preemptions += d.Preemptions
		r.sums.Reclaims += d.Reclaims
	}
	slices.SortFunc(order, func(a, b key) int {
		if c := a.day.Compare(b.day); c != 0 {
			return c
		}
		if c := strings.Compare(a.department.String(), b.department.String()); c != 0 {
			return c
		}
		if c := strings.Compare(a.project.String(), b.project.String()); c != 0 {
			return c
		}
		return strings.Compare(a.pool, b.pool)
	})
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := []string{"date"}
	switch grouping {
	case "":
		header = append(header, "departmentId", "department", "projectId", "project", "nodepool")
	case "Project":
		header = append(header, "departmentId", "department", "projectId", "project")
	case "Department":
		header = append(header, "departmentId", "department")
	case "Nodepool":
		header = append(header, "nodepool")
	case "Cluster":
		header = append(header, "clusterId")
	}
	header = append(header, "allocatedGpuHours", "nonPreemptibleGpuHours", "borrowedGpuHours", "deservedGpuHours",
		"fairShareGpuHours", "pendingGpuHours", "preemptions", "reclaims")
	_ = w.Write(header)
	for _, k := range order {
		r := rows[k]
		line := []string{r.day.Format(time.DateOnly)}
		dept := []string{r.departmentID.String(), csvText(names.departments[r.departmentID])}
		proj := []string{r.projectID.String(), csvText(names.projects[r.projectID].Name)}
		switch grouping {
		case "":
			line = append(append(append(line, dept...), proj...), csvText(r.pool))
		case "Project":
			line = append(append(line, dept...), proj...)
		case "Department":
			line = append(line, dept...)
		case "Nodepool":
			line = append(line, csvText(r.pool))
		case "Cluster":
			line = append(line, r.cluster)
		}
		s := r.sums
		line = append(line, figure(s.AllocatedGPUHours), figure(s.NonPreemptibleGPUHours), figure(s.BorrowedGPUHours),
			figure(s.DeservedGPUHours), figure(s.FairShareGPUHours), figure(s.PendingGPUHours),
			strconv.Itoa(s.Preemptions), strconv.Itoa(s.Reclaims))
		_ = w.Write(line)
		if buf.Len() > store.MaxUsageReportBytes {
			return nil, 0, badField("end", "the report would be over %d bytes, the most a report may hold; shorten the period, group it, or filter it", store.MaxUsageReportBytes)
		}
	}
	w.Flush()
	return buf.Bytes(), len(order), w.Error()
}

func (h *usageReports) readable(c echo.Context) error {
	if err := authorize(c, auth.Read, auth.System, "read the organization's consumption reports"); err != nil {
		return err
	}
	if h.usage == nil {
		return errNoUsageHistory
	}
	return nil
}

func (h *usageReports) list(c echo.Context) error {
	if err := h.readable(c); err != nil {
		return err
	}
	q, err := listquery.Parse(c.QueryParams(), store.UsageReportSpec)
	if err != nil {
		return err
	}
	list, _, err := h.usage.UsageReports(c.Request().Context(), q)
	if err != nil {
		return err
	}
	out := make([]runAIReport, 0, len(list))
	for _, r := range list {
		out = append(out, runAIReportView(r))
	}
	return c.JSON(http.StatusOK, map[string]any{"reports": out})
}

func (h *usageReports) count(c echo.Context) error {
	if err := h.readable(c); err != nil {
		return err
	}
	q, err := listquery.Parse(c.QueryParams(), store.UsageReportSpec)
	if err != nil {
		return err
	}
	n, err := h.usage.CountUsageReports(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]int{"count": n})
}

// availability says whether reports can be made here: with the usage history, they can.
func (h *usageReports) availability(c echo.Context) error {
	if !identity(c).Authenticated() {
		return unauthorized("sign in to ask whether reports are available")
	}
	return c.JSON(http.StatusOK, map[string]bool{"isAvailable": h.usage != nil})
}

func (h *usageReports) get(c echo.Context) error {
	if err := h.readable(c); err != nil {
		return err
	}
	id, err := pathID(c, "reportId")
	if err != nil {
		return err
	}
	r, err := h.usage.UsageReport(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, runAIReportView(r))
}

func (h *usageReports) delete(c echo.Context) error {
	if err := authorize(c, auth.ManageSystem, auth.System, "delete consumption reports"); err != nil {
		return err
	}
	if h.usage == nil {
		return errNoUsageHistory
	}
	id, err := pathID(c, "reportId")
	if err != nil {
		return err
	}
	if err := h.usage.DeleteUsageReport(c.Request().Context(), id, actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// reportFileName keeps letters, digits, dashes and underscores of a report's name.
var reportFileName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func (h *usageReports) file(c echo.Context) error {
	if err := h.readable(c); err != nil {
		return err
	}
	id, err := pathID(c, "reportId")
	if err != nil {
		return err
	}
	r, data, err := h.usage.UsageReportCSV(c.Request().Context(), id)
	if err != nil {
		return err
	}
	name := strings.Trim(reportFileName.ReplaceAllString(r.Name, "-"), "-")
	if name == "" {
		name = "report"
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", data)
}
