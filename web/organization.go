package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

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
	Projects(ctx context.Context, q listquery.Query) ([]store.Project, *int, error)
	Project(ctx context.Context, id uuid.UUID) (store.Project, error)
	CreateProject(ctx context.Context, u store.ProjectUpdate, by store.Actor) (store.Project, error)
	UpdateProject(ctx context.Context, id uuid.UUID, u store.ProjectUpdate, by store.Actor) (store.Project, error)
	ReplaceProjectQuotas(ctx context.Context, id uuid.UUID, in []store.QuotaInput, by store.Actor) (store.Project, error)
	DeleteProject(ctx context.Context, id uuid.UUID, by store.Actor) error
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
				return nil, badRequest("nodePool.id %q is not a valid id; ids are UUIDs such as %s", q.NodePool.ID, store.DefaultNodePoolID)
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
	return listAll(c, store.DepartmentSpec, "departments", s.org.store.Departments, s.departmentView)
}

func (s *Server) getDepartment(c echo.Context) error {
	return getByID(c, "id", s.org.store.Department, s.departmentView)
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
					return u, badRequest("nodePools holds %q, which is not a valid id; list node pool ids in the order to try", raw)
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
	ps, next, err := s.org.store.Projects(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"projects": mapSlice(ps, s.projectView), "next": next})
}

func (s *Server) getProject(c echo.Context) error {
	return getByID(c, "id", s.org.store.Project, s.projectView)
}

func (s *Server) createProject(c echo.Context) error {
	target(c, "create", "project", "")
	if err := requireAdmin(c, "create a project"); err != nil {
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
	p, err := s.org.store.CreateProject(c.Request().Context(), u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s.projectView(p))
}

func (s *Server) putProject(c echo.Context) error {
	id, err := adminChange(c, "update", "project", "change a project")
	if err != nil {
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
	p, err := s.org.store.UpdateProject(c.Request().Context(), id, u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.projectView(p))
}

// putProjectResources replaces the project's quotas with the body, a JSON array of Quota.
func (s *Server) putProjectResources(c echo.Context) error {
	id, err := adminChange(c, "update", "project", "change a project's quotas")
	if err != nil {
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
	p, err := s.org.store.ReplaceProjectQuotas(c.Request().Context(), id, in, actor(c))
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
	return deleteByID(c, "project", "delete a project", s.org.store.DeleteProject)
}

// View-model conversions: the same models feed the JSON API and the pages.

func (s *Server) nodePoolView(p store.NodePool) views.NodePool {
	return views.NodePool{
		ID: p.ID.String(), Name: p.Name, LabelKey: p.LabelKey, LabelValue: p.LabelValue, Placement: p.Placement,
		Default: p.IsDefault(), Status: s.org.status.NodePoolStatus(p.Name),
		CreatedAt: p.CreatedAt.UTC(), CreatedBy: p.CreatedBy, UpdatedAt: p.UpdatedAt.UTC(), UpdatedBy: p.UpdatedBy,
	}
}

func quotaView(q store.Quota) views.Quota {
	return views.Quota{
		NodePool: views.NodePoolRef{ID: q.NodePoolID.String(), Name: q.NodePoolName},
		GPU:      views.QuotaGPU{Deserved: q.Deserved, Limit: q.Limit, OverQuotaWeight: q.OverQuotaWeight},
	}
}

// orgStatus sums a project's or department's usage over the pools it has quota in.
func (s *Server) orgStatus(kind, name string, quotas []store.Quota) views.OrgStatus {
	st := views.OrgStatus{NodePools: []views.PoolUsage{}}
	for _, q := range quotas {
		u := s.org.status.Usage(kind, name, q.NodePoolName)
		st.NodePools = append(st.NodePools, views.PoolUsage{NodePool: views.NodePoolRef{ID: q.NodePoolID.String(), Name: q.NodePoolName}, Usage: u})
		st.Allocated += u.Allocated
		st.AllocatedNonPreemptible += u.AllocatedNonPreemptible
		st.Borrowed += u.Borrowed
		st.Requested += u.Requested
		st.PendingWorkloads += u.PendingWorkloads
		st.RunningWorkloads += u.RunningWorkloads
	}
	return st
}

func (s *Server) departmentView(d store.Department) views.Department {
	return views.Department{
		ID: d.ID.String(), Name: d.Name, Resources: mapSlice(d.Quotas, quotaView), ProjectCount: d.ProjectCount,
		Status:    s.orgStatus("department", d.Name, d.Quotas),
		CreatedAt: d.CreatedAt.UTC(), CreatedBy: d.CreatedBy, UpdatedAt: d.UpdatedAt.UTC(), UpdatedBy: d.UpdatedBy,
	}
}

func (s *Server) projectView(p store.Project) views.Project {
	v := views.Project{
		ID: p.ID.String(), Name: p.Name, DepartmentID: p.DepartmentID.String(), DepartmentName: p.DepartmentName,
		Namespaces: p.Namespaces, Resources: mapSlice(p.Quotas, quotaView),
		EffectiveNodePools: mapSlice(p.EffectiveNodePools, func(r store.NodePoolRef) views.NodePoolRef {
			return views.NodePoolRef{ID: r.ID.String(), Name: r.Name}
		}),
		Policy: views.Policy{
			DefaultPriorityID: idString(p.DefaultPriorityID), AllowPriorityChange: p.AllowPriorityChange,
			MinPriority: p.MinPriority, MaxPriority: p.MaxPriority, PreemptionOrder: p.PreemptionOrder,
			PreemptionMode: p.PreemptionMode, MinRuntimeSeconds: p.MinRuntimeSeconds, Queueing: p.Queueing,
		},
		Status:    s.orgStatus("project", p.Name, p.Quotas),
		CreatedAt: p.CreatedAt.UTC(), CreatedBy: p.CreatedBy, UpdatedAt: p.UpdatedAt.UTC(), UpdatedBy: p.UpdatedBy,
	}
	if len(p.NodePoolIDs) > 0 {
		v.NodePools = mapSlice(p.NodePoolIDs, uuid.UUID.String)
	}
	if v.Namespaces == nil {
		v.Namespaces = []string{}
	}
	return v
}
