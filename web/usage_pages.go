package web

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// UsageHistory is what the charts and the fairness ledger read: the usage history and the
// workloads' waits.
type UsageHistory interface {
	UsageSeries(ctx context.Context, q store.UsageQuery) ([]store.UsagePoint, []store.PoolCapacityPoint, error)
	DepartmentUsageSeries(ctx context.Context, q store.UsageTotalsQuery) ([]store.DepartmentUsagePoint, []store.PoolUsagePoint, error)
	PoolUsageSeries(ctx context.Context, q store.UsageTotalsQuery) ([]store.PoolUsagePoint, error)
	TopProjectsByAllocation(ctx context.Context, q store.UsageTotalsQuery, n int) ([]store.ProjectAllocation, error)
	LedgerWorkloads(ctx context.Context, project uuid.UUID, from, to time.Time) ([]store.LedgerWorkload, bool, error)
}

// noUsageHistory is an installation that records none (Deps.Usage nil): empty charts, an
// empty ledger.
type noUsageHistory struct{}

func (noUsageHistory) UsageSeries(context.Context, store.UsageQuery) ([]store.UsagePoint, []store.PoolCapacityPoint, error) {
	return nil, nil, nil
}

func (noUsageHistory) DepartmentUsageSeries(context.Context, store.UsageTotalsQuery) ([]store.DepartmentUsagePoint, []store.PoolUsagePoint, error) {
	return nil, nil, nil
}

func (noUsageHistory) PoolUsageSeries(context.Context, store.UsageTotalsQuery) ([]store.PoolUsagePoint, error) {
	return nil, nil
}

func (noUsageHistory) TopProjectsByAllocation(context.Context, store.UsageTotalsQuery, int) ([]store.ProjectAllocation, error) {
	return nil, nil
}

func (noUsageHistory) LedgerWorkloads(context.Context, uuid.UUID, time.Time, time.Time) ([]store.LedgerWorkload, bool, error) {
	return nil, false, nil
}

// usagePages are a project's and a department's pages, the JSON their charts and the
// Overview's load, and the fairness ledger's API route. Each reads only the projects the
// caller may read: a project or department they may not read is a 404, and the Overview's
// charts stack only their projects (the pools' capacity is everyone's, as on Node pools).
type usagePages struct {
	org     organization
	history UsageHistory
	now     func() time.Time
	layout
}

func newUsagePages(d Deps, org organization, l layout) *usagePages {
	h := &usagePages{org: org, history: d.Usage, now: time.Now, layout: l}
	if h.history == nil {
		h.history = noUsageHistory{}
	}
	return h
}

func (h *usagePages) routes(r router) {
	r.page(http.MethodGet, "/projects/:id", routenames.Project, h.projectPage)
	r.page(http.MethodGet, "/departments/:id", routenames.Department, h.departmentPage)
	r.page(http.MethodGet, "/console/usage/pools", routenames.UsagePools, h.poolsJSON)
	r.page(http.MethodGet, "/console/usage/projects/:id", routenames.UsageProject, h.projectJSON)
	r.page(http.MethodGet, "/console/usage/departments/:id", routenames.UsageDepartment, h.departmentJSON)
	r.api.GET("/arbiter/projects/:id/fairness-ledger", h.fairnessLedgerAPI)
}

// usageRange is the query's range: 24h (the default), 7d or 30d.
func usageRange(c echo.Context) (string, error) {
	r := c.QueryParam("range")
	if r == "" {
		return views.UsageRanges[0], nil
	}
	if !slices.Contains(views.UsageRanges, r) {
		return "", badField("range", "range %q is not one of 24h, 7d or 30d", clipText(r))
	}
	return r, nil
}

// usageBy is the Overview's grouping: department (the default) or project.
func usageBy(c echo.Context) (string, error) {
	switch by := c.QueryParam("by"); by {
	case "":
		return "department", nil
	case "department", "project":
		return by, nil
	default:
		return "", badField("by", "by %q is neither department nor project", clipText(by))
	}
}

// overviewUsagePanel is the Overview's charts' place: their JSON's address, the range and the
// grouping of the page's query (a bad one falls back to the default: the Overview always
// answers).
func overviewUsagePanel(c echo.Context) views.UsageChartsPanel {
	r, err := usageRange(c)
	if err != nil {
		r = views.UsageRanges[0]
	}
	by, err := usageBy(c)
	if err != nil {
		by = "department"
	}
	return views.UsageChartsPanel{Range: r, By: by, Self: pathTo(c, routenames.Home),
		Source: pathTo(c, routenames.UsagePools) + "?range=" + r + "&by=" + by}
}

// poolsJSON answers the Overview's charts.
func (h *usagePages) poolsJSON(c echo.Context) error {
	r, err := usageRange(c)
	if err != nil {
		return err
	}
	by, err := usageBy(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := newUsagePeriod(r, poolUsageStep[r], h.now())
	scope, err := h.org.projectListScope(c)
	if err != nil {
		return err
	}
	refs, err := h.org.store.ProjectRefs(ctx)
	if err != nil {
		return err
	}
	var points []store.UsagePoint
	var capacity []store.PoolCapacityPoint
	var others map[string]column
	switch {
	case scope.All:
		// every project: the departments' and pools' totals, not every project's rows
		if points, capacity, others, err = h.allProjectsUsage(ctx, p, by); err != nil {
			return err
		}
	case len(scope.IDs) > 0: // an empty ProjectIDs would read every project
		if points, capacity, err = h.history.UsageSeries(ctx, store.UsageQuery{From: p.From, To: p.To, Step: p.Step, ProjectIDs: scope.IDs}); err != nil {
			return err
		}
	default: // no project's figures: the pools' capacity alone
		pools, err := h.history.PoolUsageSeries(ctx, store.UsageTotalsQuery{From: p.From, To: p.To, Step: p.Step})
		if err != nil {
			return err
		}
		capacity = poolCapacity(pools)
	}
	names, depts := map[uuid.UUID]string{}, map[uuid.UUID]string{}
	for _, ref := range refs {
		names[ref.ID] = ref.Name
	}
	ds, err := h.org.store.Departments(ctx, listquery.Query{SortBy: "name", Limit: listquery.MaxLimit})
	if err != nil {
		return err
	}
	for _, d := range ds {
		depts[d.ID] = d.Name
	}
	return answerCharts(c, poolUsageCharts(p, by, points, capacity, others, names, depts))
}

// projectJSON answers a project's charts; 404 for a project the caller may not read.
func (h *usagePages) projectJSON(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := usageRange(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := h.org.readableProject(c)(ctx, id); err != nil {
		return err
	}
	p := newUsagePeriod(r, usageStep[r], h.now())
	points, capacity, err := h.history.UsageSeries(ctx, store.UsageQuery{From: p.From, To: p.To, Step: p.Step, ProjectIDs: []uuid.UUID{id}})
	if err != nil {
		return err
	}
	return answerCharts(c, ownUsageCharts(p, points, capacity))
}

// departmentJSON answers a department's charts: the sum over its projects the caller may
// read; 404 for a department the caller may not read.
func (h *usagePages) departmentJSON(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := usageRange(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	projects, all, err := h.departmentProjects(c, id)
	if err != nil {
		return err
	}
	p := newUsagePeriod(r, usageStep[r], h.now())
	var points []store.UsagePoint
	var capacity []store.PoolCapacityPoint
	if all {
		// the caller reads every project of the department: its totals, not its projects' rows
		departments, pools, err := h.history.DepartmentUsageSeries(ctx, store.UsageTotalsQuery{From: p.From, To: p.To, Step: p.Step, DepartmentIDs: []uuid.UUID{id}})
		if err != nil {
			return err
		}
		points, capacity = departmentPoints(departments), poolCapacity(pools)
	} else if len(projects) > 0 {
		ids := make([]uuid.UUID, len(projects))
		for i, pr := range projects {
			ids[i] = pr.ID
		}
		if points, capacity, err = h.history.UsageSeries(ctx, store.UsageQuery{From: p.From, To: p.To, Step: p.Step, ProjectIDs: ids}); err != nil {
			return err
		}
	}
	return answerCharts(c, ownUsageCharts(p, points, capacity))
}

// departmentProjects are the department's projects the caller may read, by name, and whether
// that is every one of them; 404 for a department the caller may not read.
func (h *usagePages) departmentProjects(c echo.Context, id uuid.UUID) ([]store.ProjectRef, bool, error) {
	ctx := c.Request().Context()
	if _, err := h.org.readableDepartment(c)(ctx, id); err != nil {
		return nil, false, err
	}
	scope, err := h.org.projectListScope(c)
	if err != nil {
		return nil, false, err
	}
	refs, err := h.org.store.ProjectRefs(ctx)
	if err != nil {
		return nil, false, err
	}
	readable := make(map[uuid.UUID]bool, len(scope.IDs))
	for _, p := range scope.IDs {
		readable[p] = true
	}
	var out []store.ProjectRef
	all := true
	for _, ref := range refs {
		if ref.DepartmentID != id {
			continue
		}
		if scope.All || readable[ref.ID] {
			out = append(out, ref)
		} else {
			all = false
		}
	}
	slices.SortFunc(out, func(a, b store.ProjectRef) int { return strings.Compare(a.Name, b.Name) })
	return out, all, nil
}

// answerCharts answers the charts as JSON, or with format=csv as a CSV file of the same data.
func answerCharts(c echo.Context, charts views.UsageCharts) error {
	switch c.QueryParam("format") {
	case "", "json":
		return c.JSON(http.StatusOK, charts)
	case "csv":
		return chartsCSV(c, charts)
	default:
		return badField("format", "format %q is neither json nor csv", clipText(c.QueryParam("format")))
	}
}

// projectPage is a project's page: its charts and its fairness ledger over the page's range.
func (h *usagePages) projectPage(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := usageRange(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	pr, err := h.org.readableProject(c)(ctx, id)
	if err != nil {
		return err
	}
	p := newUsagePeriod(r, usageStep[r], h.now())
	ledger, err := h.ledger(ctx, pr, p.From, p.To)
	if err != nil {
		return err
	}
	page := h.page(c, "Project "+pr.Name, routenames.Projects)
	page.Charts = true
	m := views.ProjectUsagePage{Page: page, ID: id.String(), Name: pr.Name, Ledger: ledger,
		Usage: views.UsageChartsPanel{Range: r, Self: pathTo(c, routenames.Project, id.String()),
			Source: pathTo(c, routenames.UsageProject, id.String()) + "?range=" + r}}
	if d, err := h.org.readableDepartment(c)(ctx, pr.DepartmentID); err == nil {
		m.Department, m.DepartmentID = d.Name, d.ID.String()
	}
	return render(c, http.StatusOK, views.ProjectUsageView(m))
}

// departmentPage is a department's page: its projects' charts, summed.
func (h *usagePages) departmentPage(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := usageRange(c)
	if err != nil {
		return err
	}
	d, err := h.org.readableDepartment(c)(c.Request().Context(), id)
	if err != nil {
		return err
	}
	projects, _, err := h.departmentProjects(c, id)
	if err != nil {
		return err
	}
	page := h.page(c, "Department "+d.Name, routenames.Departments)
	page.Charts = true
	m := views.DepartmentUsagePage{Page: page, ID: id.String(), Name: d.Name,
		Usage: views.UsageChartsPanel{Range: r, Self: pathTo(c, routenames.Department, id.String()),
			Source: pathTo(c, routenames.UsageDepartment, id.String()) + "?range=" + r}}
	for _, p := range projects {
		m.Projects = append(m.Projects, views.ProjectLink{ID: p.ID.String(), Name: p.Name})
	}
	return render(c, http.StatusOK, views.DepartmentUsageView(m))
}
