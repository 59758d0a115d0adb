package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// WorkloadPropertiesStore is what the workload-properties routes need from the store.
type WorkloadPropertiesStore interface {
	Priorities(ctx context.Context, q listquery.Query) ([]store.Priority, error)
	Priority(ctx context.Context, id uuid.UUID) (store.Priority, error)
	Categories(ctx context.Context, q listquery.Query) ([]store.Category, error)
	Category(ctx context.Context, id uuid.UUID) (store.Category, error)
	UpdateCategory(ctx context.Context, id uuid.UUID, u store.CategoryUpdate, by store.Actor) (store.Category, error)
	WorkloadTypes(ctx context.Context, q listquery.Query, externalOnly bool) ([]store.WorkloadType, error)
	WorkloadType(ctx context.Context, id uuid.UUID) (store.WorkloadType, error)
	UpdateWorkloadType(ctx context.Context, id uuid.UUID, u store.WorkloadTypeUpdate, by store.Actor) (store.WorkloadType, error)
	// ConfigVersion changes whenever the configuration may have (see responseCache).
	ConfigVersion() uint64
}

func (h *workloadProperties) listPriorities(c echo.Context) error {
	return listAll(c, store.PrioritySpec, "priorities", h.props.Priorities, h.prios.view)
}

func (h *workloadProperties) getPriority(c echo.Context) error {
	return getByID(c, "id", h.props.Priority, h.prios.view)
}

func (h *workloadProperties) listCategories(c echo.Context) error {
	return listAll(c, store.CategorySpec, "categories", h.props.Categories, categoryView)
}

func (h *workloadProperties) getCategory(c echo.Context) error {
	return getByID(c, "id", h.props.Category, categoryView)
}

type categoryRequest struct {
	DefaultPriorityID     optional[string] `json:"defaultPriorityId"`
	DefaultPreemptibility optional[string] `json:"defaultPreemptibility"`
}

func (h *workloadProperties) putCategory(c echo.Context) error {
	id, err := adminChange(c, "update", "workload-category", "change a workload category")
	if err != nil {
		return err
	}
	var req categoryRequest
	if err := decodeJSON(c, &req, "defaultPriorityId", "defaultPreemptibility"); err != nil {
		return err
	}
	var u store.CategoryUpdate
	if req.DefaultPriorityID.Null || req.DefaultPreemptibility.Null {
		return badRequest("a category always has a default priority and preemptibility; null is not allowed here")
	}
	prio, err := storeOptionalID("defaultPriorityId", req.DefaultPriorityID)
	if err != nil {
		return err
	}
	u.DefaultPriorityID = prio.Value
	u.DefaultPreemptibility = storeOptionalValue(req.DefaultPreemptibility).Value
	cat, err := h.props.UpdateCategory(c.Request().Context(), id, u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, categoryView(cat))
}

func (h *workloadProperties) listWorkloadTypes(c echo.Context) error {
	q, err := listquery.Parse(c.QueryParams(), store.WorkloadTypeSpec)
	if err != nil {
		return err
	}
	externalOnly, err := boolParam(c, "externalTypesOnly")
	if err != nil {
		return err
	}
	return cachedJSON(c, &h.typesCache, h.props.ConfigVersion, c.QueryString(), func() (any, error) {
		ts, err := h.props.WorkloadTypes(c.Request().Context(), q, externalOnly)
		if err != nil {
			return nil, err
		}
		return map[string]any{"types": mapSlice(ts, workloadTypeAnswer)}, nil
	})
}

func (h *workloadProperties) getWorkloadType(c echo.Context) error {
	return getByID(c, "workloadTypeId", h.props.WorkloadType, workloadTypeAnswer)
}

type workloadTypeRequest struct {
	CategoryID     optional[string] `json:"categoryId"`
	PriorityID     optional[string] `json:"priorityId"`
	Preemptibility optional[string] `json:"preemptibility"`
}

func (h *workloadProperties) putWorkloadType(c echo.Context) error {
	id, err := pathID(c, "workloadTypeId")
	target(c, "update", "workload-type", c.Param("workloadTypeId"))
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "change a workload type's defaults"); err != nil {
		return err
	}
	var req workloadTypeRequest
	if err := decodeJSON(c, &req, "categoryId", "priorityId", "preemptibility"); err != nil {
		return err
	}
	u, err := workloadTypeUpdate(req)
	if err != nil {
		return err
	}
	t, err := h.props.UpdateWorkloadType(c.Request().Context(), id, u, actor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, workloadTypeAnswer(t))
}

func workloadTypeUpdate(req workloadTypeRequest) (store.WorkloadTypeUpdate, error) {
	var u store.WorkloadTypeUpdate
	var err error
	if u.CategoryID, err = storeOptionalID("categoryId", req.CategoryID); err != nil {
		return u, err
	}
	if u.PriorityID, err = storeOptionalID("priorityId", req.PriorityID); err != nil {
		return u, err
	}
	u.Preemptibility = storeOptionalValue(req.Preemptibility)
	return u, nil
}

func boolParam(c echo.Context, name string) (bool, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, badField(name, "%s=%q must be true or false", name, raw)
	}
	return b, nil
}

// View-model conversions: the same models feed the JSON API and the pages.

// workloadProperties is the workload properties feature: the priority dictionary, workload
// categories and workload types in the API, and the Workload types and Priorities pages
// (workload_property_pages.go).
type workloadProperties struct {
	props WorkloadPropertiesStore
	prios priorityDictionary
	// typesCache holds encoded workload-type lists between configuration changes.
	typesCache responseCache
	layout
}

func (h *workloadProperties) routes(r router) {
	r.api.GET("/workload-priorities", h.listPriorities)
	r.api.GET("/workload-priorities/:id", h.getPriority)
	r.api.GET("/workload-categories", h.listCategories)
	r.api.GET("/workload-categories/:id", h.getCategory)
	r.api.PUT("/workload-categories/:id", h.putCategory)
	r.api.GET("/workload-types", h.listWorkloadTypes)
	r.api.GET("/workload-types/:workloadTypeId", h.getWorkloadType)
	r.api.PUT("/workload-types/:workloadTypeId", h.putWorkloadType)
	r.page(http.MethodGet, "/workload-types", routenames.WorkloadTypes, h.workloadTypesPage)
	r.page(http.MethodGet, "/workload-types.csv", routenames.WorkloadTypesCSV, h.workloadTypesCSV)
	r.page(http.MethodPost, "/workload-types/:id", routenames.WorkloadTypeSave, h.saveWorkloadTypeRow)
	r.page(http.MethodGet, "/priorities", routenames.Priorities, h.prioritiesPage)
	r.page(http.MethodGet, "/priorities.csv", routenames.PrioritiesCSV, h.prioritiesCSV)
}

// priorityDictionary is the priority dictionary as the API and the pages show it: each entry
// says whether its PriorityClass matches in the cluster. The Priorities page, the workload
// types' and the projects' priority selects all read it.
type priorityDictionary struct {
	store    WorkloadPropertiesStore
	clusters PriorityClassStatus
}

func (d priorityDictionary) view(p store.Priority) views.Priority {
	return views.Priority{
		ID: p.ID.String(), Name: p.Name, Value: p.Value, Source: p.Source,
		CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC(), ClusterStatus: d.clusters.PriorityClassStatus(p.Name),
	}
}

func (d priorityDictionary) views(ps []store.Priority) []views.Priority {
	return mapSlice(ps, d.view)
}

func categoryView(c store.Category) views.Category {
	return views.Category{
		ID: c.ID.String(), Name: c.Name, Description: c.Description, DefaultPriorityID: c.DefaultPriorityID.String(),
		DefaultPriorityName: c.DefaultPriorityName, DefaultPreemptibility: c.DefaultPreemptibility,
		CreatedAt: c.CreatedAt.UTC(), CreatedBy: c.CreatedBy, UpdatedAt: c.UpdatedAt.UTC(), UpdatedBy: c.UpdatedBy,
	}
}

func workloadTypeView(t store.WorkloadType) views.WorkloadType {
	return views.WorkloadType{
		ID: t.ID.String(), Name: t.Name, Group: t.Group, External: t.External,
		CategoryID: idString(t.CategoryID), CategoryName: t.CategoryName,
		PriorityID: idString(t.PriorityID), PriorityName: t.PriorityName, Preemptibility: t.Preemptibility,
		EffectivePriorityName: t.EffectivePriorityName, EffectivePreemptibility: t.EffectivePreemptibility,
		GangPolicy: t.GangPolicy, CreatedAt: t.CreatedAt.UTC(), CreatedBy: t.CreatedBy,
		UpdatedAt: t.UpdatedAt.UTC(), UpdatedBy: t.UpdatedBy,
	}
}

func workloadTypeAnswer(t store.WorkloadType) views.WorkloadTypeAnswer {
	return views.WorkloadTypeAnswer{WorkloadType: workloadTypeView(t),
		PriorityID: t.EffectivePriorityID.String(), PriorityName: t.EffectivePriorityName,
		OwnPriorityID: idString(t.PriorityID), OwnPriorityName: t.PriorityName}
}

func idString(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

func mapSlice[T, V any](in []T, f func(T) V) []V {
	out := make([]V, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
