package web

import (
	"context"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// NetworkTopologyStore holds Arbiter's own network topologies (docs/scheduling.md S29).
type NetworkTopologyStore interface {
	NetworkTopologies(ctx context.Context, q listquery.Query) ([]store.NetworkTopology, error)
	NetworkTopology(ctx context.Context, id uuid.UUID) (store.NetworkTopology, error)
	CreateNetworkTopology(ctx context.Context, name string, levels []string, by store.Actor) (store.NetworkTopology, error)
	DeleteNetworkTopology(ctx context.Context, id uuid.UUID, by store.Actor) error
}

// networkTopologies is Run:ai's network-topologies API: Arbiter's own topologies, which node
// pools refer to by networkTopologyId. Everyone signed in reads them, as they read node pools;
// admins create and delete them. Run:ai has no update: a topology is replaced by creating
// another and pointing the pools at it.
type networkTopologies struct {
	org organization
}

func (h *networkTopologies) routes(r router) {
	r.api.GET("/network-topologies", h.list)
	r.api.POST("/network-topologies", h.create)
	r.api.GET("/network-topologies/count", h.count)
	r.api.GET("/network-topologies/:networkTopologyId", h.get)
	r.api.DELETE("/network-topologies/:networkTopologyId", h.delete)
}

// networkTopologyRequest is Run:ai's NetworkTopologyCreateRequest. clusterId, required there,
// is optional here: there is one cluster.
type networkTopologyRequest struct {
	Name      optional[string]   `json:"name"`
	ClusterID optional[string]   `json:"clusterId"`
	Levels    optional[[]string] `json:"levels"`
}

var networkTopologyFields = []string{"name", "clusterId", "levels"}

func (r networkTopologyRequest) clusterID() optional[string] { return r.ClusterID }

// networkTopologyCreate is a checked create request.
type networkTopologyCreate struct {
	name   string
	levels []string
}

func (r networkTopologyRequest) create() (networkTopologyCreate, error) {
	if !r.Name.Set || r.Name.Null {
		return networkTopologyCreate{}, badField("name", "a network topology needs a name, such as default-topology")
	}
	if !r.Levels.Set || r.Levels.Null {
		return networkTopologyCreate{}, badField("levels", "a network topology needs levels: node label keys from the widest to the narrowest, such as [\"topology.kubernetes.io/zone\", \"kubernetes.io/hostname\"]")
	}
	return networkTopologyCreate{name: r.Name.Value, levels: r.Levels.Value}, nil
}

func (h *networkTopologies) answer(t store.NetworkTopology) views.NetworkTopology {
	pools := t.NodePools
	if pools == nil {
		pools = []string{}
	}
	return views.NetworkTopology{ID: t.ID.String(), Name: t.Name, ClusterID: h.org.cluster, Levels: t.Levels, TenantID: runAITenantID,
		CreatedAt: t.CreatedAt.UTC(), CreatedBy: t.CreatedBy, Phase: "Ready", Source: store.NetworkTopologySource, NodePools: pools,
		Status: views.NetworkTopologyStatus{Phase: "Ready"}}
}

func (h *networkTopologies) list(c echo.Context) error {
	return listAll(c, store.NetworkTopologySpec, "networkTopologies", h.org.store.NetworkTopologies, h.answer)
}

func (h *networkTopologies) count(c echo.Context) error {
	return countAll(c, store.NetworkTopologySpec, h.org.store.NetworkTopologies)
}

func (h *networkTopologies) get(c echo.Context) error {
	return getByID(c, "networkTopologyId", h.org.store.NetworkTopology, h.answer)
}

func (h *networkTopologies) create(c echo.Context) error {
	return createByAdmin(c, "network-topology", "create a network topology", networkTopologyFields, inCluster(c, networkTopologyRequest.create),
		func(ctx context.Context, r networkTopologyCreate, by store.Actor) (store.NetworkTopology, error) {
			return h.org.store.CreateNetworkTopology(ctx, r.name, r.levels, by)
		}, h.answer)
}

func (h *networkTopologies) delete(c echo.Context) error {
	id, err := pathID(c, "networkTopologyId")
	target(c, "delete", "network-topology", c.Param("networkTopologyId"))
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "delete a network topology"); err != nil {
		return err
	}
	if err := h.org.store.DeleteNetworkTopology(c.Request().Context(), id, actor(c)); err != nil {
		return err
	}
	return c.NoContent(204)
}
