package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// The Projects, Departments and Node pools pages. Each table row edits inline with htmx: a
// change posts one part of the row (a quota line, the policy, the name...) and the answer is
// the row again, saying Saved or showing the refusal next to the part it concerns. Without
// JavaScript the same forms post and redirect back. Creating is an ordinary form; a refused
// create shows the page again with the values typed and the message next to its field.
func (s *Server) routeOrganizationPages(e *echo.Echo) {
	e.GET("/node-pools", s.nodePoolsPage)
	e.GET("/node-pools.csv", s.nodePoolsCSV)
	e.POST("/node-pools", s.createNodePoolForm)
	e.POST("/node-pools/:id", s.saveNodePoolRow)
	e.POST("/node-pools/:id/delete", s.deleteNodePoolRow)
	e.GET("/departments", s.departmentsPage)
	e.GET("/departments.csv", s.departmentsCSV)
	e.POST("/departments", s.createDepartmentForm)
	e.POST("/departments/:id", s.saveDepartmentRow)
	e.POST("/departments/:id/quotas/:pool", s.saveDepartmentQuota)
	e.POST("/departments/:id/delete", s.deleteDepartmentRow)
	e.GET("/projects", s.projectsPage)
	e.GET("/projects.csv", s.projectsCSV)
	e.POST("/projects", s.createProjectForm)
	e.POST("/projects/:id", s.saveProjectRow)
	e.POST("/projects/:id/quotas/:pool", s.saveProjectQuota)
	e.POST("/projects/:id/policy", s.saveProjectPolicy)
	e.POST("/projects/:id/delete", s.deleteProjectRow)
}

func canManageOrg(c echo.Context) bool { return can(c, auth.ManageSystem, auth.System) }

// pageQuery reads a page's list parameters with the API's machinery; extra filters are
// added by the caller.
func pageQuery(c echo.Context, spec listquery.Spec, filters ...string) (listquery.Query, error) {
	v := url.Values{}
	for _, k := range []string{"sortBy", "sortOrder", "search", "offset"} {
		if x := c.QueryParam(k); x != "" {
			v.Set(k, x)
		}
	}
	if len(filters) > 0 {
		v.Set("filterBy", strings.Join(filters, ","))
	}
	return listquery.Parse(v, spec)
}

func (s *Server) poolRefs(ctx context.Context) ([]views.NodePoolRef, error) {
	pools, err := s.org.store.NodePools(ctx, listquery.Query{SortBy: "name"})
	return mapSlice(pools, func(p store.NodePool) views.NodePoolRef { return views.NodePoolRef{ID: p.ID.String(), Name: p.Name} }), err
}

// quotaCells lays a quota list out as one cell per node pool, with usage from status.
func quotaCells(pools []views.NodePoolRef, quotas []views.Quota, status views.OrgStatus) []views.QuotaCell {
	cells := make([]views.QuotaCell, len(pools))
	for i, p := range pools {
		cells[i] = views.QuotaCell{Pool: p}
		for _, q := range quotas {
			if q.NodePool.ID == p.ID {
				cells[i].Deserved, cells[i].Weight = strconv.Itoa(q.GPU.Deserved), strconv.Itoa(q.GPU.OverQuotaWeight)
				if q.GPU.Limit != store.NoLimit {
					cells[i].Limit = strconv.Itoa(q.GPU.Limit)
				}
			}
		}
		for _, u := range status.NodePools {
			if u.NodePool.ID == p.ID {
				cells[i].Usage = u.Usage
			}
		}
	}
	return cells
}

// formQuotas reads the create forms' quota inputs (deserved-<pool id>, limit-..., weight-...);
// a pool with an empty deserved field gets no quota.
func formQuotas(c echo.Context, pools []views.NodePoolRef) ([]views.QuotaCell, []store.QuotaInput, error) {
	cells := make([]views.QuotaCell, len(pools))
	var in []store.QuotaInput
	var firstErr error
	for i, p := range pools {
		cells[i] = views.QuotaCell{Pool: p, Deserved: c.FormValue("deserved-" + p.ID), Limit: c.FormValue("limit-" + p.ID), Weight: c.FormValue("weight-" + p.ID)}
		q, ok, err := quotaFromCell(cells[i])
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if ok {
			in = append(in, q)
		}
	}
	return cells, in, firstErr
}

// quotaFromCell parses one pool's quota as typed: empty deserved means no quota in the pool,
// empty limit no limit, empty weight the default 2.
func quotaFromCell(cell views.QuotaCell) (store.QuotaInput, bool, error) {
	id, err := uuid.Parse(cell.Pool.ID)
	if err != nil {
		return store.QuotaInput{}, false, badField("resources", "%q is not a valid node pool id", cell.Pool.ID)
	}
	q := store.QuotaInput{NodePoolID: &id}
	if strings.TrimSpace(cell.Deserved) == "" {
		return q, false, nil
	}
	num := func(what, raw string, lo int) (*int, error) {
		return formInt("resources", what+" in pool "+cell.Pool.Name, raw, lo, maxIntColumn)
	}
	d, err := num("deserved GPUs", cell.Deserved, 0)
	if err != nil {
		return q, false, err
	}
	q.Deserved = *d
	if q.Limit, err = num("limit", cell.Limit, -1); err != nil {
		return q, false, err
	}
	if q.OverQuotaWeight, err = num("over-quota weight", cell.Weight, 0); err != nil {
		return q, false, err
	}
	return q, true, nil
}

// replaceCell returns the quota list with pool's quota replaced by the one typed in the form.
func replaceCell(c echo.Context, pools []views.NodePoolRef, current []views.Quota, poolID string) ([]store.QuotaInput, error) {
	var in []store.QuotaInput
	for _, q := range current {
		if q.NodePool.ID == poolID {
			continue
		}
		cell := views.QuotaCell{Pool: q.NodePool, Deserved: strconv.Itoa(q.GPU.Deserved), Limit: strconv.Itoa(q.GPU.Limit), Weight: strconv.Itoa(q.GPU.OverQuotaWeight)}
		qi, _, err := quotaFromCell(cell)
		if err != nil {
			return nil, err
		}
		in = append(in, qi)
	}
	for _, p := range pools {
		if p.ID == poolID {
			q, ok, err := quotaFromCell(views.QuotaCell{Pool: p, Deserved: c.FormValue("deserved"), Limit: c.FormValue("limit"), Weight: c.FormValue("weight")})
			if err != nil {
				return nil, err
			}
			if ok {
				in = append(in, q)
			}
			return in, nil
		}
	}
	return nil, badField("resources", "%q is not a node pool", poolID)
}

// formRefusal is a refused create form's message and the field it names, if any; the page
// shows it next to that field, or at the top of the form when the form has no such field.
func formRefusal(err error) views.FieldError {
	_, msg := statusOf(err)
	return views.FieldError{Field: fieldOf(err), Message: msg}
}

// rowResult renders a row after an inline change: with htmx the row (status of the refusal,
// if any); without JavaScript a redirect back, or the error page.
func rowResult(c echo.Context, back string, saveErr error, row func(status int) error) error {
	if !isHTMX(c) {
		if saveErr != nil {
			return saveErr
		}
		return c.Redirect(http.StatusSeeOther, back)
	}
	status := http.StatusOK
	if saveErr != nil {
		status, _ = statusOf(saveErr)
	}
	return row(status)
}

// refusal places a refused inline change's message at field, or at the field the error
// names when the form edits several fields at once (field "").
func refusal(field string, err error) views.FieldError {
	if err == nil {
		return views.FieldError{}
	}
	if field == "" {
		return formRefusal(err)
	}
	_, msg := statusOf(err)
	return views.FieldError{Field: field, Message: msg}
}

// rowField names what a row's form saved: its own field, or "row" for the row's main form.
func rowField(field string) string {
	if field == "" {
		return "row"
	}
	return field
}

func savedField(err error, field string) string {
	if err != nil {
		return ""
	}
	return field
}

// Node pools.

func (s *Server) nodePoolsPage(c echo.Context) error {
	return s.renderNodePoolsPage(c, http.StatusOK, views.NodePoolForm{LabelKey: store.NodePoolLabelKey, Placement: store.Binpack})
}

func (s *Server) renderNodePoolsPage(c echo.Context, status int, form views.NodePoolForm) error {
	q, err := pageQuery(c, store.NodePoolSpec)
	if err != nil {
		return err
	}
	pools, err := s.org.store.NodePools(c.Request().Context(), q)
	if err != nil {
		return err
	}
	m := views.NodePoolsPage{
		Page: s.page(c, "Node pools", "node-pools"), Pools: mapSlice(pools, s.nodePoolView), Search: q.Search,
		CSVHref: "/node-pools.csv?" + c.QueryParams().Encode(), CanEdit: canManageOrg(c), Form: form,
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}, {"Label key", "labelKey"}, {"Label value", "labelValue"}, {"Placement", "placement"}}),
	}
	return render(c, status, views.NodePoolsView(m))
}

func (s *Server) createNodePoolForm(c echo.Context) error {
	target(c, "create", "node-pool", "")
	form := views.NodePoolForm{Name: c.FormValue("name"), LabelKey: c.FormValue("labelKey"), LabelValue: c.FormValue("labelValue"), Placement: c.FormValue("placement")}
	err := requireAdmin(c, "create a node pool")
	if err == nil {
		u := store.NodePoolUpdate{Name: formString(form.Name), LabelKey: formString(form.LabelKey), Placement: formString(form.Placement)}
		if form.LabelValue != "" {
			u.LabelValue = formString(form.LabelValue)
		}
		_, err = s.org.store.CreateNodePool(c.Request().Context(), u, actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return s.renderNodePoolsPage(c, status, form)
	}
	return c.Redirect(http.StatusSeeOther, "/node-pools")
}

func formString(v string) store.Optional[string] {
	v = strings.TrimSpace(v)
	return store.Optional[string]{Set: true, Value: &v}
}

func (s *Server) saveNodePoolRow(c echo.Context) error {
	id, err := changeTarget(c, "update", "node-pool")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	saveErr := requireAdmin(c, "change a node pool")
	if saveErr == nil {
		u := store.NodePoolUpdate{Placement: formString(c.FormValue("placement"))}
		if _, ok := c.Request().PostForm["name"]; ok {
			u.Name, u.LabelKey, u.LabelValue = formString(c.FormValue("name")), formString(c.FormValue("labelKey")), formString(c.FormValue("labelValue"))
		}
		_, saveErr = s.org.store.UpdateNodePool(ctx, id, u, actor(c))
	}
	return rowResult(c, "/node-pools", saveErr, func(status int) error {
		p, err := s.org.store.NodePool(ctx, id)
		if err != nil {
			return err
		}
		row := views.NodePoolRow{Pool: s.nodePoolView(p), CanEdit: canManageOrg(c), CSRFToken: s.page(c, "", "").CSRFToken,
			Saved: savedField(saveErr, "row"), Error: refusal("", saveErr)}
		return render(c, status, views.NodePoolRowView(row))
	})
}

func (s *Server) deleteNodePoolRow(c echo.Context) error {
	id, err := changeTarget(c, "delete", "node-pool")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	delErr := requireAdmin(c, "delete a node pool")
	if delErr == nil {
		delErr = s.org.store.DeleteNodePool(ctx, id, actor(c))
	}
	return rowResult(c, "/node-pools", delErr, func(status int) error {
		if delErr == nil {
			return c.HTML(http.StatusOK, "") // htmx swaps the row for nothing
		}
		p, err := s.org.store.NodePool(ctx, id)
		if err != nil {
			return err
		}
		row := views.NodePoolRow{Pool: s.nodePoolView(p), CanEdit: canManageOrg(c), CSRFToken: s.page(c, "", "").CSRFToken, Error: refusal("delete", delErr)}
		return render(c, status, views.NodePoolRowView(row))
	})
}

// Departments.

func (s *Server) departmentsPage(c echo.Context) error {
	return s.renderDepartmentsPage(c, http.StatusOK, views.DepartmentForm{})
}

func (s *Server) renderDepartmentsPage(c echo.Context, status int, form views.DepartmentForm) error {
	ctx := c.Request().Context()
	q, err := pageQuery(c, store.DepartmentSpec)
	if err != nil {
		return err
	}
	ds, err := s.visibleDepartments(c)(ctx, q)
	if err != nil {
		return err
	}
	pools, err := s.poolRefs(ctx)
	if err != nil {
		return err
	}
	if form.Quotas == nil {
		form.Quotas = quotaCells(pools, nil, views.OrgStatus{})
	}
	page := s.page(c, "Departments", "departments")
	m := views.DepartmentsPage{
		Page: page, Pools: pools, Search: q.Search, CanEdit: canManageOrg(c), Form: form,
		CSVHref: "/departments.csv?" + c.QueryParams().Encode(),
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}}),
	}
	for _, d := range ds {
		m.Rows = append(m.Rows, s.departmentRow(c, d, pools, page.CSRFToken))
	}
	return render(c, status, views.DepartmentsView(m))
}

func (s *Server) departmentRow(c echo.Context, d store.Department, pools []views.NodePoolRef, csrf string) views.DepartmentRow {
	v := s.departmentView(d)
	return views.DepartmentRow{Department: v, Quotas: quotaCells(pools, v.Resources, v.Status), CanEdit: canManageOrg(c), CSRFToken: csrf}
}

func (s *Server) createDepartmentForm(c echo.Context) error {
	target(c, "create", "department", "")
	ctx := c.Request().Context()
	pools, err := s.poolRefs(ctx)
	if err != nil {
		return err
	}
	form := views.DepartmentForm{Name: c.FormValue("name")}
	var in []store.QuotaInput
	form.Quotas, in, err = formQuotas(c, pools)
	if err == nil {
		err = requireAdmin(c, "create a department")
	}
	if err == nil {
		_, err = s.org.store.CreateDepartment(ctx, store.DepartmentUpdate{Name: formString(form.Name), Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &in}}, actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return s.renderDepartmentsPage(c, status, form)
	}
	return c.Redirect(http.StatusSeeOther, "/departments")
}

// saveDepartment applies u to a department and answers its row, the refusal shown at field.
func (s *Server) saveDepartment(c echo.Context, field string, u func(store.Department, []views.NodePoolRef) (store.DepartmentUpdate, error)) error {
	id, err := changeTarget(c, "update", "department")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "change a department"); err != nil {
		return err // before any row is shown: only admins change departments
	}
	ctx := c.Request().Context()
	pools, err := s.poolRefs(ctx)
	if err != nil {
		return err
	}
	_, saveErr := s.org.store.PatchDepartment(ctx, id, func(d store.Department) (store.DepartmentUpdate, error) { return u(d, pools) }, actor(c))
	return rowResult(c, "/departments", saveErr, func(status int) error {
		d, err := s.org.store.Department(ctx, id)
		if err != nil {
			return err
		}
		row := s.departmentRow(c, d, pools, s.page(c, "", "").CSRFToken)
		row.Saved, row.Error = savedField(saveErr, rowField(field)), refusal(field, saveErr)
		if saveErr != nil && strings.HasPrefix(field, "quota:") {
			keepTyped(c, row.Quotas, strings.TrimPrefix(field, "quota:"))
		}
		return render(c, status, views.DepartmentRowView(row))
	})
}

// keepTyped puts what was typed back into a refused quota line, so the person can correct it.
func keepTyped(c echo.Context, cells []views.QuotaCell, poolID string) {
	for i := range cells {
		if cells[i].Pool.ID == poolID {
			cells[i].Deserved, cells[i].Limit, cells[i].Weight = c.FormValue("deserved"), c.FormValue("limit"), c.FormValue("weight")
		}
	}
}

func (s *Server) saveDepartmentRow(c echo.Context) error {
	return s.saveDepartment(c, "", func(store.Department, []views.NodePoolRef) (store.DepartmentUpdate, error) {
		return store.DepartmentUpdate{Name: formString(c.FormValue("name"))}, nil
	})
}

func (s *Server) saveDepartmentQuota(c echo.Context) error {
	return s.saveDepartment(c, "quota:"+c.Param("pool"), func(d store.Department, pools []views.NodePoolRef) (store.DepartmentUpdate, error) {
		in, err := replaceCell(c, pools, mapSlice(d.Quotas, quotaView), c.Param("pool"))
		return store.DepartmentUpdate{Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &in}}, err
	})
}

func (s *Server) deleteDepartmentRow(c echo.Context) error {
	id, err := changeTarget(c, "delete", "department")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "delete a department"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	delErr := s.org.store.DeleteDepartment(ctx, id, actor(c))
	return rowResult(c, "/departments", delErr, func(status int) error {
		if delErr == nil {
			return c.HTML(http.StatusOK, "")
		}
		d, err := s.org.store.Department(ctx, id)
		if err != nil {
			return err
		}
		pools, err := s.poolRefs(ctx)
		if err != nil {
			return err
		}
		row := s.departmentRow(c, d, pools, s.page(c, "", "").CSRFToken)
		row.Error = refusal("delete", delErr)
		return render(c, status, views.DepartmentRowView(row))
	})
}

// Projects.

func (s *Server) projectsPage(c echo.Context) error {
	return s.renderProjectsPage(c, http.StatusOK, views.ProjectForm{DepartmentID: c.QueryParam("departmentId")})
}

// projectChoices are the selects' options of the Projects page.
// The departments are those the caller may read; the selects that create or move projects
// offer only those it may manage (see manageable).
func (s *Server) projectChoices(c echo.Context) ([]views.NodePoolRef, []views.Department, []views.Priority, error) {
	ctx := c.Request().Context()
	pools, err := s.poolRefs(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	ds, err := s.visibleDepartments(c)(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		return nil, nil, nil, err
	}
	prios, err := s.props.Priorities(ctx, listquery.Query{SortBy: "value"})
	return pools, mapSlice(ds, s.departmentView), s.priorityViews(prios), err
}

func (s *Server) renderProjectsPage(c echo.Context, status int, form views.ProjectForm) error {
	department := c.QueryParam("department")
	var filters []string
	if department != "" {
		filters = append(filters, "departmentName=="+department)
	}
	q, err := pageQuery(c, store.ProjectSpec, filters...)
	if err != nil {
		return err
	}
	ps, next, err := s.visibleProjects(c, q)
	if err != nil {
		return err
	}
	pools, depts, prios, err := s.projectChoices(c)
	if err != nil {
		return err
	}
	if form.Quotas == nil {
		form.Quotas = quotaCells(pools, nil, views.OrgStatus{})
	}
	page := s.page(c, "Projects", "projects")
	m := views.ProjectsPage{
		Page: page, Pools: pools, Departments: depts, Priorities: prios, Search: q.Search, Department: department,
		Manageable: manageable(c, depts), Form: form, CSVHref: "/projects.csv?" + c.QueryParams().Encode(),
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}, {"Department", "departmentName"}}),
	}
	pageLink := func(offset int) string {
		v := c.QueryParams()
		params := url.Values{}
		for k, vals := range v {
			params[k] = vals
		}
		params.Set("offset", strconv.Itoa(offset))
		return "/projects?" + params.Encode()
	}
	if next != nil {
		m.NextHref = pageLink(*next)
	}
	if q.Offset > 0 {
		m.PrevHref = pageLink(max(0, q.Offset-q.Limit))
	}
	for _, p := range ps {
		m.Rows = append(m.Rows, s.projectRow(c, p, pools, depts, prios, page.CSRFToken))
	}
	return render(c, status, views.ProjectsView(m))
}

func (s *Server) projectRow(c echo.Context, p store.Project, pools []views.NodePoolRef, depts []views.Department, prios []views.Priority, csrf string) views.ProjectRow {
	v := s.projectView(p)
	return views.ProjectRow{Project: v, Quotas: quotaCells(pools, v.Resources, v.Status), Departments: manageable(c, depts), Priorities: prios,
		CanEdit: can(c, auth.ManageDepartment, projectScope(p)), CanEditPolicy: can(c, auth.ManageProject, projectScope(p)), CSRFToken: csrf}
}

// formNamespaces splits the namespaces field (commas or spaces).
func formNamespaces(raw string) []string {
	return strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}

func (s *Server) createProjectForm(c echo.Context) error {
	target(c, "create", "project", "")
	ctx := c.Request().Context()
	pools, err := s.poolRefs(ctx)
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
		_, err = s.org.store.CreateProject(ctx, u, actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return s.renderProjectsPage(c, status, form)
	}
	return c.Redirect(http.StatusSeeOther, "/projects")
}

// saveProject applies u to a project and answers its row, the refusal shown at field.
// The form's change u is worked out from the project as it is under the row lock (a quota
// line replaces one pool's quota in the list it has then), and checked there (action: what the
// form needs, somewhere, to be tried at all).
func (s *Server) saveProject(c echo.Context, field string, action auth.Action, u func(store.Project, []views.NodePoolRef) (store.ProjectUpdate, error)) error {
	id, err := changeTarget(c, "update", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, action, "change a project"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	pools, depts, prios, err := s.projectChoices(c)
	if err != nil {
		return err
	}
	if _, err := s.readableProject(c)(ctx, id); err != nil {
		return err
	}
	_, saveErr := s.org.store.PatchProject(ctx, id, func(p store.Project) (store.ProjectUpdate, error) {
		upd, err := u(p, pools)
		if err != nil {
			return upd, err
		}
		return upd, mayChangeProject(c, p, upd)
	}, actor(c))
	return rowResult(c, "/projects", saveErr, func(status int) error {
		p, err := s.readableProject(c)(ctx, id)
		if err != nil {
			return err
		}
		row := s.projectRow(c, p, pools, depts, prios, s.page(c, "", "").CSRFToken)
		row.Saved, row.Error = savedField(saveErr, rowField(field)), refusal(field, saveErr)
		if saveErr != nil && strings.HasPrefix(field, "quota:") {
			keepTyped(c, row.Quotas, strings.TrimPrefix(field, "quota:"))
		}
		return render(c, status, views.ProjectRowView(row))
	})
}

func (s *Server) saveProjectRow(c echo.Context) error {
	return s.saveProject(c, "", auth.ManageDepartment, func(store.Project, []views.NodePoolRef) (store.ProjectUpdate, error) {
		ns := formNamespaces(c.FormValue("namespaces"))
		req := projectRequest{Name: optional[string]{Set: true, Value: strings.TrimSpace(c.FormValue("name"))},
			DepartmentID: optional[string]{Set: true, Value: c.FormValue("departmentId")}}
		u, err := req.update()
		u.Namespaces = store.Optional[[]string]{Set: true, Value: &ns}
		return u, err
	})
}

func (s *Server) saveProjectQuota(c echo.Context) error {
	return s.saveProject(c, "quota:"+c.Param("pool"), auth.ManageDepartment, func(p store.Project, pools []views.NodePoolRef) (store.ProjectUpdate, error) {
		in, err := replaceCell(c, pools, mapSlice(p.Quotas, quotaView), c.Param("pool"))
		return store.ProjectUpdate{Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &in}}, err
	})
}

// saveProjectPolicy takes the whole policy form: an empty select is the field's default.
func (s *Server) saveProjectPolicy(c echo.Context) error {
	return s.saveProject(c, "policy", auth.ManageProject, func(store.Project, []views.NodePoolRef) (store.ProjectUpdate, error) {
		str := func(name string) optional[string] {
			v := c.FormValue(name)
			return optional[string]{Set: true, Null: v == "", Value: v}
		}
		p := policyRequest{
			DefaultPriorityID: str("defaultPriorityId"), MinPriority: str("minPriority"), MaxPriority: str("maxPriority"),
			PreemptionOrder: str("preemptionOrder"), PreemptionMode: str("preemptionMode"), Queueing: str("queueing"),
			AllowPriorityChange: optional[bool]{Set: true, Value: c.FormValue("allowPriorityChange") == "true"},
			MinRuntimeSeconds:   optional[int]{Set: true, Null: true},
		}
		if n, err := formInt("minRuntimeSeconds", "minimum runtime (seconds)", c.FormValue("minRuntimeSeconds"), 0, maxIntColumn); err != nil {
			return store.ProjectUpdate{}, err
		} else if n != nil {
			p.MinRuntimeSeconds = optional[int]{Set: true, Value: *n}
		}
		pu, err := p.update()
		return store.ProjectUpdate{Policy: pu}, err
	})
}

func (s *Server) deleteProjectRow(c echo.Context) error {
	id, err := changeTarget(c, "delete", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageDepartment, "delete a project"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.readableProject(c)(ctx, id); err != nil {
		return err
	}
	delErr := s.org.store.DeleteProjectIf(ctx, id, mayDeleteProject(c), actor(c))
	return rowResult(c, "/projects", delErr, func(status int) error {
		if delErr == nil {
			return c.HTML(http.StatusOK, "")
		}
		p, err := s.readableProject(c)(ctx, id)
		if err != nil {
			return err
		}
		pools, depts, prios, err := s.projectChoices(c)
		if err != nil {
			return err
		}
		row := s.projectRow(c, p, pools, depts, prios, s.page(c, "", "").CSRFToken)
		row.Error = refusal("delete", delErr)
		return render(c, status, views.ProjectRowView(row))
	})
}
