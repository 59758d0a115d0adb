package web

import (
	"net/http"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// clusters answers Run:ai's cluster routes for an installation that is one cluster: the
// list holds it alone, by the stable id the node pools, departments and projects name as
// their clusterId (Deps.ClusterID). Every signed-in caller may read it, as they may read
// that id on every node pool.
type clusters struct {
	org OrganizationStore
}

func (h *clusters) routes(r router) {
	r.api.GET("/clusters", h.listClusters)
	r.api.GET("/clusters/:clusterUuid", h.getCluster)
}

// runAICluster is Run:ai's DisplayedCluster. Its createdAt is the default node pool's: the
// pool is made with the installation's database and cannot be deleted, so the time is when
// Arbiter began to know this cluster, the same on every replica.
type runAICluster struct {
	UUID      string    `json:"uuid"`
	TenantID  int       `json:"tenantId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

func (h *clusters) theCluster(c echo.Context) (runAICluster, error) {
	pool, err := h.org.NodePool(c.Request().Context(), store.DefaultNodePoolID)
	if err != nil {
		return runAICluster{}, err
	}
	return runAICluster{UUID: clusterID(c), TenantID: runAITenantID, Name: runAIClusterName, CreatedAt: pool.CreatedAt.UTC()}, nil
}

func (h *clusters) listClusters(c echo.Context) error {
	cl, err := h.theCluster(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, []runAICluster{cl})
}

func (h *clusters) getCluster(c echo.Context) error {
	id, err := pathID(c, "clusterUuid")
	if err != nil {
		return err
	}
	if id.String() != clusterID(c) {
		return store.NotFound("cluster %s was not found: this installation is one cluster, %s", id, clusterID(c))
	}
	cl, err := h.theCluster(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cl)
}
