package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// OrganizationStore is what the organization routes need from the store.
type OrganizationStore interface {
	NodePools(ctx context.Context, q listquery.Query) ([]store.NodePool, error)
	NodePool(ctx context.Context, id uuid.UUID) (store.NodePool, error)
	CreateNodePool(ctx context.Context, u store.NodePoolUpdate, by store.Actor) (store.NodePool, error)
	UpdateNodePool(ctx context.Context, id uuid.UUID, u store.NodePoolUpdate, by store.Actor) (store.NodePool, error)
	DeleteNodePool(ctx context.Context, id uuid.UUID, by store.Actor) error
	Departments(ctx context.Context, q listquery.Query) ([]store.Department, error)
	Department(ctx context.Context, id uuid.UUID) (store.Department, error)
	CreateDepartment(ctx context.Context, u store.DepartmentUpdate, by store.Actor) (store.Department, error)
	UpdateDepartment(ctx context.Context, id uuid.UUID, u store.DepartmentUpdate, by store.Actor) (store.Department, error)
	DeleteDepartment(ctx context.Context, id uuid.UUID, by store.Actor) error
	PatchDepartment(ctx context.Context, id uuid.UUID, patch store.DepartmentPatch, by store.Actor) (store.Department, error)
	VisibleProjects(ctx context.Context, q listquery.Query, scope store.ProjectScope) ([]store.Project, *int, error)
	ProjectRefs(ctx context.Context) ([]store.ProjectRef, error)
	Project(ctx context.Context, id uuid.UUID) (store.Project, error)
	CreateProject(ctx context.Context, u store.ProjectUpdate, by store.Actor) (store.Project, error)
	PatchProject(ctx context.Context, id uuid.UUID, patch store.ProjectPatch, by store.Actor) (store.Project, error)
	DeleteProjectIf(ctx context.Context, id uuid.UUID, check func(store.Project) error, by store.Actor) error
}

// OrgStatusSource reports live usage from the scheduler's last cycle, by name. Until the
// scheduler runs (a later issue) the web layer uses zeros.
type OrgStatusSource interface {
	NodePoolStatus(pool string) views.NodePoolStatus
	// Usage is what a "project" or "department" (kind) named name uses in pool.
	Usage(kind, name, pool string) views.Usage
}

type zeroOrgStatus struct{}

func (zeroOrgStatus) NodePoolStatus(string) views.NodePoolStatus { return views.NodePoolStatus{} }
func (zeroOrgStatus) Usage(string, string, string) views.Usage   { return views.Usage{} }

// organization holds the organization routes' dependencies.
type organization struct {
	store  OrganizationStore
	status OrgStatusSource
}

func newOrganization(d Deps) organization {
	o := organization{store: d.Organization, status: d.OrgStatus}
	if o.status == nil {
		o.status = zeroOrgStatus{}
	}
	return o
}

func (s *Server) routeOrganization(api *echo.Group) {
	api.GET("/node-pools", s.listNodePools)
	api.POST("/node-pools", s.createNodePool)
	api.GET("/node-pools/:id", s.getNodePool)
	api.PUT("/node-pools/:id", s.putNodePool)
	api.DELETE("/node-pools/:id", s.deleteNodePool)
	api.GET("/org-unit/departments", s.listDepartments)
	api.POST("/org-unit/departments", s.createDepartment)
	api.GET("/org-unit/departments/:id", s.getDepartment)
	api.PUT("/org-unit/departments/:id", s.putDepartment)
	api.DELETE("/org-unit/departments/:id", s.deleteDepartment)
	api.GET("/org-unit/projects", s.listProjects)
	api.POST("/org-unit/projects", s.createProject)
	api.GET("/org-unit/projects/:id", s.getProject)
	api.PUT("/org-unit/projects/:id", s.putProject)
	api.DELETE("/org-unit/projects/:id", s.deleteProject)
	api.PUT("/org-unit/projects/:id/resources", s.putProjectResources)
}

// Node pools.

type nodePoolRequest struct {
	Name       optional[string] `json:"name"`
	LabelKey   optional[string] `json:"labelKey"`
	LabelValue optional[string] `json:"labelValue"`
	Placement  optional[string] `json:"placement"`
}

var nodePoolFields = []string{"name", "labelKey", "labelValue", "placement"}

func (r nodePoolRequest) update() store.NodePoolUpdate {
	return store.NodePoolUpdate{Name: storeOptionalValue(r.Name), LabelKey: storeOptionalValue(r.LabelKey),
		LabelValue: storeOptionalValue(r.LabelValue), Placement: storeOptionalValue(r.Placement)}
}

func (s *Server) listNodePools(c echo.Context) error {
	return listAll(c, store.NodePoolSpec, "nodePools", s.org.store.NodePools, s.nodePoolView)
}

func (s *Server) getNodePool(c echo.Context) error {
	return getByID(c, "id", s.org.store.NodePool, s.nodePoolView)
}

func (s *Server) createNodePool(c echo.Context) error {
	target(c, "create", "node-pool", "")
	if err := requireAdmin(c, "create a node pool"); err != nil {
		return err
	}
	var req nodePoolRequest
	if err := decodeJSON(c, &req, nodePoolFields...); err != nil {
		return err
	}
	p, err := s.org.store.CreateNodePool(c.Request().Context(), req.update(), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s.nodePoolView(p))
}

func (s *Server) putNodePool(c echo.Context) error {
	id, err := adminChange(c, "update", "node-pool", "change a node pool")
	if err != nil {
		return err
	}
	var req nodePoolRequest
	if err := decodeJSON(c, &req, nodePoolFields...); err != nil {
		return err
	}
	p, err := s.org.store.UpdateNodePool(c.Request().Context(), id, req.update(), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.nodePoolView(p))
}

func (s *Server) deleteNodePool(c echo.Context) error {
	return deleteByID(c, "node-pool", "delete a node pool", s.org.store.DeleteNodePool)
}

// Quotas.

type quotaRequest struct {
	NodePool struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"nodePool"`
	GPU struct {
		Deserved        *int `json:"deserved" range:"0,2147483647"`
		Limit           *int `json:"limit" range:"-1,2147483647"`
		OverQuotaWeight *int `json:"overQuotaWeight" range:"0,2147483647"`
	} `json:"gpu"`
}

// Nested objects decode strictly too: optional[T] decodes its value with encoding/json's
// defaults, which would let unknown fields through.

func (q *quotaRequest) UnmarshalJSON(b []byte) error {
	type plain quotaRequest
	return strictObject(b, (*plain)(q), "a quota", "nodePool {id, name}", "gpu {deserved, limit, overQuotaWeight}")
}

func (p *policyRequest) UnmarshalJSON(b []byte) error {
	type plain policyRequest
	return strictObject(b, (*plain)(p), "policy", "defaultPriorityId", "allowPriorityChange", "minPriority", "maxPriority",
		"preemptionOrder", "preemptionMode", "minRuntimeSeconds", "queueing")
}

func strictObject(b []byte, dst any, what string, accepted ...string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if name, ok := strings.CutPrefix(fmt.Sprint(err), "json: unknown field "); ok {
		return &fieldError{msg: fmt.Sprintf("unknown field %s in %s; it accepts: %s", name, what, strings.Join(accepted, ", "))}
	}
	return err
}

// quotaInputs turns a quota list into the store's form: a pool by id (checked to be a UUID)
// or by name; absent numbers are 0 deserved, no limit and weight 2.
func quotaInputs(in []quotaRequest) ([]store.QuotaInput, error) {
	out := make([]store.QuotaInput, len(in))
	for i, q := range in {
		out[i] = store.QuotaInput{NodePoolName: q.NodePool.Name, Limit: q.GPU.Limit, OverQuotaWeight: q.GPU.OverQuotaWeight}
		if q.NodePool.ID != "" {
			id, err := uuid.Parse(q.NodePool.ID)
			if err != nil {
				return nil, badField("resources", "nodePool.id %q is not a valid id; ids are UUIDs such as %s", q.NodePool.ID, store.DefaultNodePoolID)
			}
			out[i].NodePoolID = &id
		}
		if q.GPU.Deserved != nil {
			out[i].Deserved = *q.GPU.Deserved
		}
	}
	return out, nil
}

func optionalQuotas(o optional[[]quotaRequest]) (store.Optional[[]store.QuotaInput], error) {
	if !o.Set {
		return store.Optional[[]store.QuotaInput]{}, nil
	}
	in, err := quotaInputs(o.Value) // null is an empty list: no quotas
	return store.Optional[[]store.QuotaInput]{Set: true, Value: &in}, err
}

// Departments.

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

// Projects.

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
