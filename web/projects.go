package web

import (
	"bytes"
	"io"
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

// Projects: the API resource (/api/v1/org-unit/projects) and the Projects page. A project
// owns namespaces, deserves GPUs per node pool within its department's share, and has a policy.
func (s *Server) routeProjects(api *echo.Group, pages *echo.Echo) {
	api.GET("/org-unit/projects", s.listProjects)
	api.POST("/org-unit/projects", s.createProject)
	api.GET("/org-unit/projects/:id", s.getProject)
	api.PUT("/org-unit/projects/:id", s.putProject)
	api.DELETE("/org-unit/projects/:id", s.deleteProject)
	api.PUT("/org-unit/projects/:id/resources", s.putProjectResources)
	pages.GET("/projects", s.projectsPage)
	pages.GET("/projects.csv", s.projectsCSV)
	pages.POST("/projects", s.createProjectForm)
	pages.POST("/projects/:id", s.saveProjectRow)
	pages.POST("/projects/:id/quotas/:pool", s.saveProjectQuota)
	pages.POST("/projects/:id/policy", s.saveProjectPolicy)
	pages.POST("/projects/:id/delete", s.deleteProjectRow)
}

type policyRequest struct {
	DefaultPriorityID   optional[string] `json:"defaultPriorityId"`
	AllowPriorityChange optional[bool]   `json:"allowPriorityChange"`
	MinPriority         optional[string] `json:"minPriority"`
	MaxPriority         optional[string] `json:"maxPriority"`
	PreemptionOrder     optional[string] `json:"preemptionOrder"`
	PreemptionMode      optional[string] `json:"preemptionMode"`
	MinRuntimeSeconds   optional[int]    `json:"minRuntimeSeconds" range:"0,2147483647"`
	Queueing            optional[string] `json:"queueing"`
}

type projectRequest struct {
	Name         optional[string]         `json:"name"`
	DepartmentID optional[string]         `json:"departmentId"`
	Namespaces   optional[[]string]       `json:"namespaces"`
	NodePools    optional[[]string]       `json:"nodePools"`
	Resources    optional[[]quotaRequest] `json:"resources"`
	Policy       optional[policyRequest]  `json:"policy"`
}

var projectFields = []string{"name", "departmentId", "namespaces", "nodePools", "resources", "policy"}

func (r projectRequest) update() (store.ProjectUpdate, error) {
	var u store.ProjectUpdate
	var err error
	u.Name = storeOptionalValue(r.Name)
	if u.DepartmentID, err = storeOptionalID("departmentId", r.DepartmentID); err != nil {
		return u, err
	}
	if r.Namespaces.Set {
		ns := r.Namespaces.Value // null: no namespaces
		u.Namespaces = store.Optional[[]string]{Set: true, Value: &ns}
	}
	if r.NodePools.Set {
		u.NodePools.Set = true
		if !r.NodePools.Null {
			ids := make([]uuid.UUID, len(r.NodePools.Value))
			for i, raw := range r.NodePools.Value {
				if ids[i], err = uuid.Parse(raw); err != nil {
					return u, badField("nodePools", "nodePools holds %q, which is not a valid id; list node pool ids in the order to try", raw)
				}
			}
			u.NodePools.Value = &ids
		}
	}
	if u.Resources, err = optionalQuotas(r.Resources); err != nil {
		return u, err
	}
	if r.Policy.Set {
		p := r.Policy.Value
		if r.Policy.Null { // null: every policy field back to its default
			null := optional[string]{Set: true, Null: true}
			p = policyRequest{DefaultPriorityID: null, AllowPriorityChange: optional[bool]{Set: true, Null: true}, MinPriority: null,
				MaxPriority: null, PreemptionOrder: null, PreemptionMode: null, MinRuntimeSeconds: optional[int]{Set: true, Null: true}, Queueing: null}
		}
		if u.Policy, err = p.update(); err != nil {
			return u, err
		}
	}
	return u, nil
}

func (p policyRequest) update() (store.PolicyUpdate, error) {
	prio, err := storeOptionalID("policy.defaultPriorityId", p.DefaultPriorityID)
	return store.PolicyUpdate{
		DefaultPriorityID: prio, AllowPriorityChange: storeOptionalValue(p.AllowPriorityChange),
		MinPriority: storeOptionalValue(p.MinPriority), MaxPriority: storeOptionalValue(p.MaxPriority),
		PreemptionOrder: storeOptionalValue(p.PreemptionOrder), PreemptionMode: storeOptionalValue(p.PreemptionMode),
		MinRuntimeSeconds: storeOptionalValue(p.MinRuntimeSeconds), Queueing: storeOptionalValue(p.Queueing),
	}, err
}

func (s *Server) listProjects(c echo.Context) error {
	q, err := listquery.Parse(c.QueryParams(), store.ProjectSpec)
	if err != nil {
		return err
	}
	ps, next, err := s.visibleProjects(c, q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"projects": mapSlice(ps, s.projectView), "next": next})
}

func (s *Server) getProject(c echo.Context) error {
	return getByID(c, "id", s.readableProject(c), s.projectView)
}

func (s *Server) createProject(c echo.Context) error {
	target(c, "create", "project", "")
	if err := authorizeSomewhere(c, auth.ManageDepartment, "create a project"); err != nil {
		return err
	}
	var req projectRequest
	if err := decodeJSON(c, &req, projectFields...); err != nil {
		return err
	}
	u, err := req.update()
	if err != nil {
		return err
	}
	if err := mayCreateProject(c, u); err != nil {
		return err
	}
	p, err := s.org.store.CreateProject(c.Request().Context(), u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s.projectView(p))
}

func (s *Server) putProject(c echo.Context) error {
	id, err := changeTarget(c, "update", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageProject, "change a project"); err != nil {
		return err
	}
	var req projectRequest
	if err := decodeJSON(c, &req, projectFields...); err != nil {
		return err
	}
	u, err := req.update()
	if err != nil {
		return err
	}
	if structural(u) {
		if err := authorizeSomewhere(c, auth.ManageDepartment, "change a project's name, department, namespaces, node pools or quotas"); err != nil {
			return err
		}
	}
	p, err := s.org.store.PatchProject(c.Request().Context(), id, projectChange(c, u), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.projectView(p))
}

// putProjectResources replaces the project's quotas with the body, a JSON array of Quota.
func (s *Server) putProjectResources(c echo.Context) error {
	id, err := changeTarget(c, "update", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageDepartment, "change a project's quotas"); err != nil {
		return err
	}
	var req struct {
		Resources []quotaRequest `json:"resources"`
	}
	if err := decodeJSONArray(c, "resources", &req); err != nil {
		return err
	}
	in, err := quotaInputs(req.Resources)
	if err != nil {
		return err
	}
	u := store.ProjectUpdate{Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &in}}
	p, err := s.org.store.PatchProject(c.Request().Context(), id, projectChange(c, u), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.projectView(p))
}

// decodeJSONArray reads a body that is a JSON array into dst's field named field, by wrapping
// it in an object and letting decodeJSON apply every rule (type, size, unknown fields).
func decodeJSONArray(c echo.Context, field string, dst any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if trimmed := bytes.TrimSpace(body); len(trimmed) == 0 {
		return badRequest("the request body is empty; send a JSON array of quotas ([] for none)")
	} else if trimmed[0] != '[' {
		return badRequest("the request body must be a JSON array of quotas, e.g. [{\"nodePool\":{\"name\":\"default\"},\"gpu\":{\"deserved\":2}}]")
	}
	wrapped := append(append([]byte(`{"`+field+`":`), body...), '}')
	c.Request().Body = io.NopCloser(bytes.NewReader(wrapped))
	return decodeJSON(c, dst, field)
}

func (s *Server) deleteProject(c echo.Context) error {
	id, err := changeTarget(c, "delete", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageDepartment, "delete a project"); err != nil {
		return err
	}
	if err := s.org.store.DeleteProjectIf(c.Request().Context(), id, mayDeleteProject(c), actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// The page.

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
