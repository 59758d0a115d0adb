package web

import (
	"math"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// departments is the departments feature: the API resource (/api/v1/org-unit/departments) and
// the Departments page. A department's deserved GPUs in a pool bound what its projects there
// deserve together.
type departments struct {
	org organization
	layout
}

func (h *departments) routes(r router) {
	r.api.GET("/org-unit/departments", h.listDepartments)
	r.api.GET("/org-unit/departments/count", h.countDepartments)
	r.api.POST("/org-unit/departments", h.createDepartment)
	r.api.GET("/org-unit/departments/:id", h.getDepartment)
	r.api.PUT("/org-unit/departments/:id", h.putDepartment)
	r.api.DELETE("/org-unit/departments/:id", h.deleteDepartment)
	r.api.PUT("/org-unit/departments/:id/resources", func(c echo.Context) error { return h.changeDepartmentResources(c, false) })
	r.api.PATCH("/org-unit/departments/:id/resources", func(c echo.Context) error { return h.changeDepartmentResources(c, true) })
	r.page(http.MethodGet, "/departments", routenames.Departments, h.departmentsPage)
	r.page(http.MethodGet, "/departments.csv", routenames.DepartmentsCSV, h.departmentsCSV)
	r.page(http.MethodPost, "/departments", routenames.DepartmentCreate, h.createDepartmentForm)
	r.page(http.MethodPost, "/departments/:id", routenames.DepartmentSave, h.saveDepartmentRow)
	r.page(http.MethodPost, "/departments/:id/quotas/:pool", routenames.DepartmentQuotaSave, h.saveDepartmentQuota)
	r.page(http.MethodPost, "/departments/:id/delete", routenames.DepartmentDelete, h.deleteDepartmentRow)
}

type departmentRequest struct {
	ClusterID      optional[string]         `json:"clusterId"` // Run:ai's: the one cluster's id, or absent
	Name           optional[string]         `json:"name"`
	Resources      optional[[]quotaRequest] `json:"resources"`
	PriorityPolicy optional[string]         `json:"priorityPolicy"`
	PriorityOffset optional[int]            `json:"priorityOffset" range:"-2147483648,2147483647"`
}

var departmentFields = []string{"clusterId", "name", "resources", "priorityPolicy", "priorityOffset"}

func (r departmentRequest) update() (store.DepartmentUpdate, error) {
	res, err := optionalQuotas(r.Resources)
	return store.DepartmentUpdate{Name: storeOptionalValue(r.Name), Resources: res,
		PriorityPolicy: storeOptionalValue(r.PriorityPolicy), PriorityOffset: storeOptionalValue(r.PriorityOffset)}, err
}

func (h *departments) listDepartments(c echo.Context) error {
	return listAll(c, store.DepartmentSpec, "departments", h.org.visibleDepartments(c), h.org.departmentView)
}

// countDepartments is Run:ai's count of the departments the list shows the caller.
func (h *departments) countDepartments(c echo.Context) error {
	return countAll(c, store.DepartmentSpec, h.org.visibleDepartments(c))
}

func (h *departments) getDepartment(c echo.Context) error {
	return getByID(c, "id", h.org.readableDepartment(c), h.org.departmentView)
}

func (h *departments) createDepartment(c echo.Context) error {
	return createByAdmin(c, "department", "create a department", departmentFields, checkedDepartmentUpdate(c), h.org.store.CreateDepartment, h.org.departmentView)
}

func (h *departments) putDepartment(c echo.Context) error {
	return putByAdmin(c, "department", "change a department", departmentFields, checkedDepartmentUpdate(c), h.org.store.UpdateDepartment, h.org.departmentView)
}

// checkedDepartmentUpdate decodes a department request and checks the fields it sets against
// the field table (organization_fields.go): all are the admin's, whom the routes have asked
// for already, but the table is the rule every organization route asks.
func checkedDepartmentUpdate(c echo.Context) func(departmentRequest) (store.DepartmentUpdate, error) {
	return func(r departmentRequest) (store.DepartmentUpdate, error) {
		u, err := inCluster(c, departmentRequest.update)(r)
		if err != nil {
			return u, err
		}
		return u, mayChangeFields(c, departmentFieldRoles, departmentFieldsSet(u), auth.System)
	}
}

func (h *departments) deleteDepartment(c echo.Context) error {
	return deleteByID(c, "department", "delete a department", h.org.store.DeleteDepartment)
}

func (h *departments) departmentsPage(c echo.Context) error {
	return h.renderDepartmentsPage(c, http.StatusOK, views.DepartmentForm{})
}

func (h *departments) renderDepartmentsPage(c echo.Context, status int, form views.DepartmentForm) error {
	ctx := c.Request().Context()
	q, err := pageQuery(c, store.DepartmentSpec)
	if err != nil {
		return err
	}
	ds, err := h.org.visibleDepartments(c)(ctx, q)
	if err != nil {
		return err
	}
	pools, err := h.org.poolRefs(ctx)
	if err != nil {
		return err
	}
	if form.Quotas == nil {
		form.Quotas = quotaCells(pools, nil, views.OrgStatus{})
	}
	page := h.page(c, "Departments", "departments")
	m := views.DepartmentsPage{
		Page: page, Pools: pools, Search: q.Search, CanEdit: canManageOrg(c), Form: form,
		CSVHref: pathTo(c, routenames.DepartmentsCSV) + "?" + c.QueryParams().Encode(),
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}}),
	}
	for _, d := range ds {
		m.Rows = append(m.Rows, h.departmentRow(c, d, pools, page.CSRFToken))
	}
	return render(c, status, views.DepartmentsView(m))
}

func (h *departments) departmentRow(c echo.Context, d store.Department, pools []views.NodePoolRef, csrf string) views.DepartmentRow {
	v := h.org.departmentView(d)
	return views.DepartmentRow{Department: v, Quotas: quotaCells(pools, v.Resources, v.Status), CanEdit: canManageOrg(c), CSRFToken: csrf}
}

func (h *departments) createDepartmentForm(c echo.Context) error {
	target(c, "create", "department", "")
	ctx := c.Request().Context()
	pools, err := h.org.poolRefs(ctx)
	if err != nil {
		return err
	}
	form := views.DepartmentForm{Name: c.FormValue("name")}
	var in []store.QuotaInput
	form.Quotas, in, err = formQuotas(c, pools)
	if err == nil {
		err = requireAdmin(c, "create a department")
	}
	u := store.DepartmentUpdate{Name: formString(form.Name), Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &in}}
	if err == nil {
		err = mayChangeFields(c, departmentFieldRoles, departmentFieldsSet(u), auth.System)
	}
	if err == nil {
		_, err = h.org.store.CreateDepartment(ctx, u, actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return h.renderDepartmentsPage(c, status, form)
	}
	return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.Departments))
}

// saveDepartment applies u to a department and answers its row, the refusal shown at field.
func (h *departments) saveDepartment(c echo.Context, field string, u func(store.Department, []views.NodePoolRef) (store.DepartmentUpdate, error)) error {
	id, err := changeTarget(c, "update", "department")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "change a department"); err != nil {
		return err // before any row is shown: only admins change departments
	}
	ctx := c.Request().Context()
	pools, err := h.org.poolRefs(ctx)
	if err != nil {
		return err
	}
	_, saveErr := h.org.store.PatchDepartment(ctx, id, func(d store.Department) (store.DepartmentUpdate, error) {
		upd, err := u(d, pools)
		if err != nil {
			return upd, err
		}
		return upd, mayChangeFields(c, departmentFieldRoles, departmentFieldsSet(upd), departmentScope(d))
	}, actor(c))
	return rowResult(c, routenames.Departments, saveErr, func(status int) error {
		d, err := h.org.store.Department(ctx, id)
		if err != nil {
			return err
		}
		row := h.departmentRow(c, d, pools, h.page(c, "", "").CSRFToken)
		row.Saved, row.Error = rowOutcome(c, field, saveErr, row.Quotas)
		return render(c, status, views.DepartmentRowView(row))
	})
}

func (h *departments) saveDepartmentRow(c echo.Context) error {
	if form, err := c.FormParams(); err == nil && form.Has("priorityPolicy") {
		return h.saveDepartment(c, "priority", func(store.Department, []views.NodePoolRef) (store.DepartmentUpdate, error) {
			return formPriorityFence(c)
		})
	}
	return h.saveDepartment(c, "", func(store.Department, []views.NodePoolRef) (store.DepartmentUpdate, error) {
		return store.DepartmentUpdate{Name: formString(c.FormValue("name"))}, nil
	})
}

func (h *departments) saveDepartmentQuota(c echo.Context) error {
	return h.saveDepartment(c, "quota:"+c.Param("pool"), func(d store.Department, pools []views.NodePoolRef) (store.DepartmentUpdate, error) {
		in, err := replaceCell(c, pools, mapSlice(d.Quotas, quotaView), c.Param("pool"))
		return store.DepartmentUpdate{Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &in}}, err
	})
}

func (h *departments) deleteDepartmentRow(c echo.Context) error {
	id, err := changeTarget(c, "delete", "department")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "delete a department"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	delErr := h.org.store.DeleteDepartment(ctx, id, actor(c))
	return deleteRow(c, routenames.Departments, delErr, func(refused views.FieldError) (templ.Component, error) {
		d, err := h.org.store.Department(ctx, id)
		if err != nil {
			return nil, err
		}
		pools, err := h.org.poolRefs(ctx)
		row := h.departmentRow(c, d, pools, h.page(c, "", "").CSRFToken)
		row.Error = refused
		return views.DepartmentRowView(row), err
	})
}

func (h *departments) departmentsCSV(c echo.Context) error {
	q, err := pageQuery(c, store.DepartmentSpec)
	if err != nil {
		return err
	}
	ds, err := h.org.visibleDepartments(c)(c.Request().Context(), q)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "projects", "quotas", "allocated"}}
	for _, d := range ds {
		v := h.org.departmentView(d)
		rows = append(rows, []string{v.ID, v.Name, strconv.Itoa(v.ProjectCount), store.QuotaText(d.Quotas), strconv.Itoa(v.Status.Allocated)})
	}
	return writeCSV(c, "departments.csv", rows)
}

// formPriorityFence reads S25's two fields of a department's or project's form; an empty
// field is its default (fence, 0).
func formPriorityFence(c echo.Context) (store.DepartmentUpdate, error) {
	var u store.DepartmentUpdate
	policy := c.FormValue("priorityPolicy")
	u.PriorityPolicy = store.Optional[string]{Set: true}
	if policy != "" {
		u.PriorityPolicy.Value = &policy
	}
	n, err := formInt("priorityOffset", "priority offset", c.FormValue("priorityOffset"), math.MinInt32, math.MaxInt32)
	u.PriorityOffset = store.Optional[int]{Set: true, Value: n}
	return u, err
}

// changeDepartmentResources replaces a department's quotas (Run:ai's PUT .../resources) or,
// merging, those of the pools the body names, keeping the others (PATCH; store.MergeQuotas).
// Admins only, as every department change; the answer is the quotas as they now are.
func (h *departments) changeDepartmentResources(c echo.Context, merge bool) error {
	id, err := adminChange(c, "update", "department", "change a department")
	if err != nil {
		return err
	}
	quotas, err := decodeResources(c, merge)
	if err != nil {
		return err
	}
	d, err := h.org.store.PatchDepartment(c.Request().Context(), id, func(d store.Department) (store.DepartmentUpdate, error) {
		list := quotas(d.Quotas)
		u := store.DepartmentUpdate{Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &list}}
		return u, mayChangeFields(c, departmentFieldRoles, departmentFieldsSet(u), auth.System)
	}, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.org.departmentView(d).Resources)
}

// decodeResources reads Run:ai's resources body (a JSON array of quotas) and gives the unit's
// new quota list from its quotas as they are under its row lock: the body's (PUT), or the
// body's merged onto them (PATCH, merge; store.MergeQuotas).
func decodeResources(c echo.Context, merge bool) (func(current []store.Quota) []store.QuotaInput, error) {
	var req struct {
		Resources []quotaRequest `json:"resources"`
	}
	if err := decodeJSONArray(c, "resources", &req); err != nil {
		return nil, err
	}
	in, err := quotaInputs(req.Resources)
	if err != nil {
		return nil, err
	}
	return func(current []store.Quota) []store.QuotaInput {
		if merge {
			return store.MergeQuotas(current, in)
		}
		return in
	}, nil
}
