package web

import (
	"bytes"
	"io"
	"net/http"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// projects is the projects feature: the API resource (/api/v1/org-unit/projects) and the
// Projects page (project_pages.go). A project owns namespaces, deserves GPUs per node pool
// within its department's share, and has a policy.
type projects struct {
	org   organization
	prios priorityDictionary // the policy's choices
	layout
}

func (h *projects) routes(r router) {
	r.api.GET("/org-unit/projects", h.listProjects)
	r.api.GET("/org-unit/projects/count", h.countProjects)
	r.api.POST("/org-unit/projects", h.createProject)
	r.api.GET("/org-unit/projects/:id", h.getProject)
	r.api.PUT("/org-unit/projects/:id", h.putProject)
	r.api.DELETE("/org-unit/projects/:id", h.deleteProject)
	r.api.PUT("/org-unit/projects/:id/resources", h.putProjectResources)
	r.api.PATCH("/org-unit/projects/:id/resources", h.patchProjectResources)
	r.page(http.MethodGet, "/projects", routenames.Projects, h.projectsPage)
	r.page(http.MethodGet, "/projects.csv", routenames.ProjectsCSV, h.projectsCSV)
	r.page(http.MethodPost, "/projects", routenames.ProjectCreate, h.createProjectForm)
	r.page(http.MethodPost, "/projects/:id", routenames.ProjectSave, h.saveProjectRow)
	r.page(http.MethodPost, "/projects/:id/quotas/:pool", routenames.ProjectQuotaSave, h.saveProjectQuota)
	r.page(http.MethodPost, "/projects/:id/policy", routenames.ProjectPolicySave, h.saveProjectPolicy)
	r.page(http.MethodPost, "/projects/:id/delete", routenames.ProjectDelete, h.deleteProjectRow)
}

type policyRequest struct {
	DefaultPriorityID         optional[string] `json:"defaultPriorityId"`
	AllowPriorityChange       optional[bool]   `json:"allowPriorityChange"`
	AllowPreemptibilityChange optional[bool]   `json:"allowPreemptibilityChange"`
	MinPriority               optional[string] `json:"minPriority"`
	MaxPriority               optional[string] `json:"maxPriority"`
	PreemptionOrder           optional[string] `json:"preemptionOrder"`
	PreemptionMode            optional[string] `json:"preemptionMode"`
	MinRuntimeSeconds         optional[int]    `json:"minRuntimeSeconds" range:"0,2147483647"`
	Queueing                  optional[string] `json:"queueing"`
	PriorityPolicy            optional[string] `json:"priorityPolicy"`
	PriorityOffset            optional[int]    `json:"priorityOffset" range:"-2147483648,2147483647"`
	// S27
	ReclaimMinRuntimeSeconds optional[int] `json:"reclaimMinRuntimeSeconds" range:"0,2147483647"`
	PreemptionDelaySeconds   optional[int] `json:"preemptionDelaySeconds" range:"0,2147483647"`
}

type projectRequest struct {
	Name         optional[string]   `json:"name"`
	DepartmentID optional[string]   `json:"departmentId"`
	Namespaces   optional[[]string] `json:"namespaces"`
	// Run:ai's names: parentId is departmentId, requestedNamespace a namespaces list of one;
	// clusterId and enforceRunaiScheduler are accepted when they say what Arbiter is (its one
	// cluster; its own scheduler runs every workload of the project).
	ParentID              optional[string]         `json:"parentId"`
	RequestedNamespace    optional[string]         `json:"requestedNamespace"`
	ClusterID             optional[string]         `json:"clusterId"`
	EnforceRunaiScheduler optional[bool]           `json:"enforceRunaiScheduler"`
	NodePools             optional[[]string]       `json:"nodePools"`
	Resources             optional[[]quotaRequest] `json:"resources"`
	Policy                optional[policyRequest]  `json:"policy"`
}

var projectFields = []string{"name", "departmentId", "namespaces", "nodePools", "resources", "policy",
	"parentId", "requestedNamespace", "clusterId", "enforceRunaiScheduler"}

func (r projectRequest) update() (store.ProjectUpdate, error) {
	var u store.ProjectUpdate
	var err error
	if r, err = r.fromRunAI(); err != nil {
		return u, err
	}
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
			p = policyRequest{DefaultPriorityID: null, AllowPriorityChange: optional[bool]{Set: true, Null: true},
				AllowPreemptibilityChange: optional[bool]{Set: true, Null: true}, MinPriority: null,
				MaxPriority: null, PreemptionOrder: null, PreemptionMode: null, MinRuntimeSeconds: optional[int]{Set: true, Null: true}, Queueing: null,
				PriorityPolicy: null, PriorityOffset: optional[int]{Set: true, Null: true},
				ReclaimMinRuntimeSeconds: optional[int]{Set: true, Null: true}, PreemptionDelaySeconds: optional[int]{Set: true, Null: true}}
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
		AllowPreemptibilityChange: storeOptionalValue(p.AllowPreemptibilityChange),
		MinPriority:               storeOptionalValue(p.MinPriority), MaxPriority: storeOptionalValue(p.MaxPriority),
		PreemptionOrder: storeOptionalValue(p.PreemptionOrder), PreemptionMode: storeOptionalValue(p.PreemptionMode),
		MinRuntimeSeconds: storeOptionalValue(p.MinRuntimeSeconds), Queueing: storeOptionalValue(p.Queueing),
		PriorityPolicy: storeOptionalValue(p.PriorityPolicy), PriorityOffset: storeOptionalValue(p.PriorityOffset),
		ReclaimMinRuntimeSeconds: storeOptionalValue(p.ReclaimMinRuntimeSeconds),
		PreemptionDelaySeconds:   storeOptionalValue(p.PreemptionDelaySeconds),
	}, err
}

func (h *projects) listProjects(c echo.Context) error {
	q, err := listquery.Parse(c.QueryParams(), store.ProjectSpec)
	if err != nil {
		return err
	}
	ps, next, err := h.org.visibleProjects(c, q)
	if err != nil {
		return err
	}
	answer := map[string]any{"projects": mapSlice(ps, h.org.projectView)}
	if next != nil { // absent on the last page: Run:ai's next is an integer or nothing
		answer["next"] = *next
	}
	return c.JSON(http.StatusOK, answer)
}

// countProjects is Run:ai's count of the projects the list would show the caller, all pages.
func (h *projects) countProjects(c echo.Context) error {
	q, err := listquery.Parse(c.QueryParams(), store.ProjectSpec)
	if err != nil {
		return err
	}
	n, err := h.org.countVisibleProjects(c, q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, countAnswer{Count: n})
}

func (h *projects) getProject(c echo.Context) error {
	return getByID(c, "id", h.org.readableProject(c), h.org.projectView)
}

func (h *projects) createProject(c echo.Context) error {
	target(c, "create", "project", "")
	if err := authorizeSomewhere(c, auth.ManageDepartment, "create a project"); err != nil {
		return err
	}
	u, err := decodeChange(c, projectFields, inCluster(c, projectRequest.update))
	if err != nil {
		return err
	}
	if err := mayCreateProject(c, u); err != nil {
		return err
	}
	p, err := h.org.store.CreateProject(c.Request().Context(), u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.org.projectView(p))
}

func (h *projects) putProject(c echo.Context) error {
	id, err := changeTarget(c, "update", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageProject, "change a project"); err != nil {
		return err
	}
	u, err := decodeChange(c, projectFields, inCluster(c, projectRequest.update))
	if err != nil {
		return err
	}
	if err := mayChangeFieldsSomewhere(c, projectFieldRoles, projectFieldsSet(u)); err != nil {
		return err
	}
	p, err := h.org.store.PatchProject(c.Request().Context(), id, projectChange(c, u), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.org.projectView(p))
}

// putProjectResources replaces the project's quotas with the body, a JSON array of Quota.
// putProjectResources replaces a project's quotas (Run:ai's PUT .../resources).
func (h *projects) putProjectResources(c echo.Context) error {
	return h.changeProjectResources(c, false)
}

// patchProjectResources replaces the quotas of the pools the body names and keeps the others
// (Run:ai's PATCH .../resources; store.MergeQuotas).
func (h *projects) patchProjectResources(c echo.Context) error {
	return h.changeProjectResources(c, true)
}

func (h *projects) changeProjectResources(c echo.Context, merge bool) error {
	id, err := changeTarget(c, "update", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageProject, "change a project"); err != nil {
		return err
	}
	if err := mayChangeFieldsSomewhere(c, projectFieldRoles, []string{"resources"}); err != nil {
		return err
	}
	quotas, err := decodeResources(c, merge)
	if err != nil {
		return err
	}
	change := func(p store.Project) (store.ProjectUpdate, error) {
		list := quotas(p.Quotas)
		u := store.ProjectUpdate{Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &list}}
		return u, mayChangeProject(c, p, u)
	}
	p, err := h.org.store.PatchProject(c.Request().Context(), id, change, actor(c))
	if err != nil {
		return err
	}
	// Run:ai answers the quotas as they now are, as the request sent them: an array.
	return c.JSON(http.StatusOK, h.org.projectView(p).Resources)
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

func (h *projects) deleteProject(c echo.Context) error {
	id, err := changeTarget(c, "delete", "project")
	if err != nil {
		return err
	}
	if err := authorizeSomewhere(c, auth.ManageDepartment, "delete a project"); err != nil {
		return err
	}
	if err := h.org.store.DeleteProjectIf(c.Request().Context(), id, mayDeleteProject(c), actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
