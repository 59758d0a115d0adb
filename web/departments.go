package web

import (
	"net/http"
	"strings"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// Departments: the API resource (/api/v1/org-unit/departments) and the Departments page. A
// department's deserved GPUs in a pool bound what its projects there deserve together.
func (s *Server) routeDepartments(api *echo.Group, pages *echo.Echo) {
	api.GET("/org-unit/departments", s.listDepartments)
	api.POST("/org-unit/departments", s.createDepartment)
	api.GET("/org-unit/departments/:id", s.getDepartment)
	api.PUT("/org-unit/departments/:id", s.putDepartment)
	api.DELETE("/org-unit/departments/:id", s.deleteDepartment)
	pages.GET("/departments", s.departmentsPage)
	pages.GET("/departments.csv", s.departmentsCSV)
	pages.POST("/departments", s.createDepartmentForm)
	pages.POST("/departments/:id", s.saveDepartmentRow)
	pages.POST("/departments/:id/quotas/:pool", s.saveDepartmentQuota)
	pages.POST("/departments/:id/delete", s.deleteDepartmentRow)
}

type departmentRequest struct {
	Name      optional[string]         `json:"name"`
	Resources optional[[]quotaRequest] `json:"resources"`
}

func (r departmentRequest) update() (store.DepartmentUpdate, error) {
	res, err := optionalQuotas(r.Resources)
	return store.DepartmentUpdate{Name: storeOptionalValue(r.Name), Resources: res}, err
}

func (s *Server) listDepartments(c echo.Context) error {
	return listAll(c, store.DepartmentSpec, "departments", s.visibleDepartments(c), s.departmentView)
}

func (s *Server) getDepartment(c echo.Context) error {
	return getByID(c, "id", s.readableDepartment(c), s.departmentView)
}

func (s *Server) createDepartment(c echo.Context) error {
	target(c, "create", "department", "")
	if err := requireAdmin(c, "create a department"); err != nil {
		return err
	}
	var req departmentRequest
	if err := decodeJSON(c, &req, "name", "resources"); err != nil {
		return err
	}
	u, err := req.update()
	if err != nil {
		return err
	}
	d, err := s.org.store.CreateDepartment(c.Request().Context(), u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s.departmentView(d))
}

func (s *Server) putDepartment(c echo.Context) error {
	id, err := adminChange(c, "update", "department", "change a department")
	if err != nil {
		return err
	}
	var req departmentRequest
	if err := decodeJSON(c, &req, "name", "resources"); err != nil {
		return err
	}
	u, err := req.update()
	if err != nil {
		return err
	}
	d, err := s.org.store.UpdateDepartment(c.Request().Context(), id, u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.departmentView(d))
}

func (s *Server) deleteDepartment(c echo.Context) error {
	return deleteByID(c, "department", "delete a department", s.org.store.DeleteDepartment)
}

// The page.

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
