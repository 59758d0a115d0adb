package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// The Projects page and its CSV download.

func (h *projects) projectsPage(c echo.Context) error {
	return h.renderProjectsPage(c, http.StatusOK, views.ProjectForm{DepartmentID: c.QueryParam("departmentId")})
}

// projectChoices are the selects' options of the Projects page.
// The departments are those the caller may read; the selects that create or move projects
// offer only those it may manage (see manageable).
func (h *projects) projectChoices(c echo.Context) ([]views.NodePoolRef, []views.Department, []views.Priority, error) {
	ctx := c.Request().Context()
	pools, err := h.org.poolRefs(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	ds, err := h.org.visibleDepartments(c)(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		return nil, nil, nil, err
	}
	prios, err := h.prios.store.Priorities(ctx, listquery.Query{SortBy: "value"})
	return pools, mapSlice(ds, h.org.departmentView), h.prios.views(prios), err
}

func (h *projects) renderProjectsPage(c echo.Context, status int, form views.ProjectForm) error {
	department := c.QueryParam("department")
	var filters []string
	if department != "" {
		filters = append(filters, "departmentName=="+department)
	}
	q, err := pageQuery(c, store.ProjectSpec, filters...)
	if err != nil {
		return err
	}
	ps, next, err := h.org.visibleProjects(c, q)
	if err != nil {
		return err
	}
	pools, depts, prios, err := h.projectChoices(c)
	if err != nil {
		return err
	}
	if form.Quotas == nil {
		form.Quotas = quotaCells(pools, nil, views.OrgStatus{})
	}
	page := h.page(c, "Projects", "projects")
	m := views.ProjectsPage{
		Page: page, Pools: pools, Departments: depts, Priorities: prios, Search: q.Search, Department: department,
		Manageable: manageable(c, depts), Form: form, CSVHref: pathTo(c, routenames.ProjectsCSV) + "?" + c.QueryParams().Encode(),
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}, {"Department", "departmentName"}}),
	}
	pageLink := func(offset int) string {
		v := c.QueryParams()
		params := url.Values{}
		for k, vals := range v {
			params[k] = vals
		}
		params.Set("offset", strconv.Itoa(offset))
		return pathTo(c, routenames.Projects) + "?" + params.Encode()
	}
	if next != nil {
		m.NextHref = pageLink(*next)
	}
	if q.Offset > 0 {
		m.PrevHref = pageLink(max(0, q.Offset-q.Limit))
	}
	for _, p := range ps {
		m.Rows = append(m.Rows, h.projectRow(c, p, pools, depts, prios, page.CSRFToken))
	}
	return render(c, status, views.ProjectsView(m))
}

func (h *projects) projectRow(c echo.Context, p store.Project, pools []views.NodePoolRef, depts []views.Department, prios []views.Priority, csrf string) views.ProjectRow {
	v := h.org.projectView(p)
	return views.ProjectRow{Project: v, Quotas: quotaCells(pools, v.Resources, v.Status), Departments: manageable(c, depts), Priorities: prios,
		CanEdit: can(c, auth.ManageDepartment, projectScope(p)), CanEditPolicy: can(c, auth.ManageProject, projectScope(p)), CSRFToken: csrf}
}

func (h *projects) createProjectForm(c echo.Context) error {
	target(c, "create", "project", "")
	ctx := c.Request().Context()
	pools, err := h.org.poolRefs(ctx)
	if err != nil {
		return err
	}
	form := views.ProjectForm{Name: c.FormValue("name"), DepartmentID: c.FormValue("departmentId"), Namespaces: c.FormValue("namespaces")}
	var in []store.QuotaInput
	form.Quotas, in, err = formQuotas(c, pools)
	if err == nil {
		err = authorizeSomewhere(c, auth.ManageDepartment, "create a project")
	}
	var u store.ProjectUpdate
	if err == nil {
		u, err = projectRequest{DepartmentID: optional[string]{Set: form.DepartmentID != "", Value: form.DepartmentID}}.update()
	}
	if err == nil {
		err = mayCreateProject(c, u)
	}
	if err == nil {
		ns := formNamespaces(form.Namespaces)
		u.Name, u.Namespaces = formString(form.Name), store.Optional[[]string]{Set: true, Value: &ns}
		u.Resources = store.Optional[[]store.QuotaInput]{Set: true, Value: &in}
		_, err = h.org.store.CreateProject(ctx, u, actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return h.renderProjectsPage(c, status, form)
	}
	return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.Projects))
}

// saveProject applies u to a project and answers its row, the refusal shown at field.
// The form's change u is worked out from the project as it is under the row lock (a quota
// line replaces one pool's quota in the list it has then), and checked there (action: what the
// form needs, somewhere, to be tried at all).
func (h *projects) saveProject(c echo.Context, field string, action auth.Action, u func(store.Project, []views.NodePoolRef) (store.ProjectUpdate, error)) error {
	id, err := changeTarget(c, "update", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, action, "change a project"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	pools, depts, prios, err := h.projectChoices(c)
	if err != nil {
		return err
	}
	if _, err := h.org.readableProject(c)(ctx, id); err != nil {
		return err
	}
	_, saveErr := h.org.store.PatchProject(ctx, id, func(p store.Project) (store.ProjectUpdate, error) {
		upd, err := u(p, pools)
		if err != nil {
			return upd, err
		}
		return upd, mayChangeProject(c, p, upd)
	}, actor(c))
	return rowResult(c, routenames.Projects, saveErr, func(status int) error {
		p, err := h.org.readableProject(c)(ctx, id)
		if err != nil {
			return err
		}
		row := h.projectRow(c, p, pools, depts, prios, h.page(c, "", "").CSRFToken)
		row.Saved, row.Error = rowOutcome(c, field, saveErr, row.Quotas)
		return render(c, status, views.ProjectRowView(row))
	})
}

func (h *projects) saveProjectRow(c echo.Context) error {
	return h.saveProject(c, "", auth.ManageDepartment, func(store.Project, []views.NodePoolRef) (store.ProjectUpdate, error) {
		ns := formNamespaces(c.FormValue("namespaces"))
		req := projectRequest{Name: optional[string]{Set: true, Value: strings.TrimSpace(c.FormValue("name"))},
			DepartmentID: optional[string]{Set: true, Value: c.FormValue("departmentId")}}
		u, err := req.update()
		u.Namespaces = store.Optional[[]string]{Set: true, Value: &ns}
		return u, err
	})
}

func (h *projects) saveProjectQuota(c echo.Context) error {
	return h.saveProject(c, "quota:"+c.Param("pool"), auth.ManageDepartment, func(p store.Project, pools []views.NodePoolRef) (store.ProjectUpdate, error) {
		in, err := replaceCell(c, pools, mapSlice(p.Quotas, quotaView), c.Param("pool"))
		return store.ProjectUpdate{Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &in}}, err
	})
}

// saveProjectPolicy takes the whole policy form: an empty select is the field's default.
func (h *projects) saveProjectPolicy(c echo.Context) error {
	return h.saveProject(c, "policy", auth.ManageProject, func(store.Project, []views.NodePoolRef) (store.ProjectUpdate, error) {
		str := func(name string) optional[string] {
			v := c.FormValue(name)
			return optional[string]{Set: true, Null: v == "", Value: v}
		}
		p := policyRequest{
			DefaultPriorityID: str("defaultPriorityId"), MinPriority: str("minPriority"), MaxPriority: str("maxPriority"),
			PreemptionOrder: str("preemptionOrder"), PreemptionMode: str("preemptionMode"), Queueing: str("queueing"),
			AllowPriorityChange:       optional[bool]{Set: true, Value: c.FormValue("allowPriorityChange") == "true"},
			AllowPreemptibilityChange: optional[bool]{Set: true, Value: c.FormValue("allowPreemptibilityChange") == "true"},
			MinRuntimeSeconds:         optional[int]{Set: true, Null: true},
		}
		for _, f := range []struct {
			name, what string
			dst        *optional[int]
		}{
			{"minRuntimeSeconds", "minimum runtime (seconds)", &p.MinRuntimeSeconds},
			{"preemptionDelaySeconds", "preemption delay (seconds)", &p.PreemptionDelaySeconds},
			{"reclaimMinRuntimeSeconds", "reclaim minimum runtime (seconds)", &p.ReclaimMinRuntimeSeconds},
		} {
			n, err := formInt(f.name, f.what, c.FormValue(f.name), 0, maxIntColumn)
			if err != nil {
				return store.ProjectUpdate{}, err
			}
			*f.dst = optional[int]{Set: true, Null: n == nil}
			if n != nil {
				f.dst.Value = *n
			}
		}
		fence, err := formPriorityFence(c)
		if err != nil {
			return store.ProjectUpdate{}, err
		}
		pu, err := p.update()
		pu.PriorityPolicy, pu.PriorityOffset = fence.PriorityPolicy, fence.PriorityOffset
		return store.ProjectUpdate{Policy: pu}, err
	})
}

func (h *projects) deleteProjectRow(c echo.Context) error {
	id, err := changeTarget(c, "delete", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageDepartment, "delete a project"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := h.org.readableProject(c)(ctx, id); err != nil {
		return err
	}
	delErr := h.org.store.DeleteProjectIf(ctx, id, mayDeleteProject(c), actor(c))
	return deleteRow(c, routenames.Projects, delErr, func(refused views.FieldError) (templ.Component, error) {
		p, err := h.org.readableProject(c)(ctx, id)
		if err != nil {
			return nil, err
		}
		pools, depts, prios, err := h.projectChoices(c)
		row := h.projectRow(c, p, pools, depts, prios, h.page(c, "", "").CSRFToken)
		row.Error = refused
		return views.ProjectRowView(row), err
	})
}

func (h *projects) projectsCSV(c echo.Context) error {
	var filters []string
	if d := c.QueryParam("department"); d != "" {
		filters = append(filters, "departmentName=="+d)
	}
	q, err := pageQuery(c, store.ProjectSpec, filters...)
	if err != nil {
		return err
	}
	q.Limit = listquery.MaxLimit
	ps, _, err := h.org.visibleProjects(c, q)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "department", "namespaces", "quotas", "defaultPriority", "allowPriorityChange", "allowPreemptibilityChange", "minPriority", "maxPriority",
		"preemptionOrder", "preemptionMode", "minRuntimeSeconds", "queueing", "allocated"}}
	for _, p := range ps {
		v := h.org.projectView(p)
		rows = append(rows, []string{v.ID, v.Name, v.DepartmentName, strings.Join(v.Namespaces, " "), store.QuotaText(p.Quotas),
			views.Deref(p.DefaultPriorityName), strconv.FormatBool(p.AllowPriorityChange), strconv.FormatBool(p.AllowPreemptibilityChange), views.Deref(p.MinPriority), views.Deref(p.MaxPriority),
			p.PreemptionOrder, p.PreemptionMode, strconv.Itoa(p.MinRuntimeSeconds), p.Queueing, strconv.Itoa(v.Status.Allocated)})
	}
	return writeCSV(c, "projects.csv", rows)
}
