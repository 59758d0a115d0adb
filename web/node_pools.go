package web

import (
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// nodePools is the node pools feature: the API resource (/api/v1/node-pools) and the Node pools
// page. A pool holds the nodes labelled with its label key and value; quotas are given per pool.
type nodePools struct {
	org    organization
	cycles LastCycle // the nodes of each pool; nil: no cluster
	layout
}

func (h *nodePools) routes(r router) {
	r.api.GET("/node-pools", h.listNodePools)
	r.api.GET("/node-pools/count", h.countNodePools)
	r.api.POST("/node-pools", h.createNodePool)
	r.api.GET("/node-pools/:id", h.getNodePool)
	r.api.PUT("/node-pools/:id", h.putNodePool)
	r.api.DELETE("/node-pools/:id", h.deleteNodePool)
	r.api.GET("/arbiter/node-pools/:id/time-based-fairness", h.getFairness)
	r.api.PUT("/arbiter/node-pools/:id/time-based-fairness", h.putFairness)
	r.page(http.MethodGet, "/node-pools", routenames.NodePools, h.nodePoolsPage)
	r.page(http.MethodGet, "/node-pools.csv", routenames.NodePoolsCSV, h.nodePoolsCSV)
	r.page(http.MethodPost, "/node-pools", routenames.NodePoolCreate, h.createNodePoolForm)
	r.page(http.MethodPost, "/node-pools/:id", routenames.NodePoolSave, h.saveNodePoolRow)
	r.page(http.MethodPost, "/node-pools/:id/delete", routenames.NodePoolDelete, h.deleteNodePoolRow)
	r.page(http.MethodPost, "/network-topologies", routenames.NetworkTopologyCreate, h.createTopologyForm)
	r.page(http.MethodPost, "/network-topologies/:id/delete", routenames.NetworkTopologyDelete, h.deleteTopologyForm)
}

type nodePoolRequest struct {
	// ClusterID is Run:ai's: accepted when it names the installation's one cluster.
	ClusterID  optional[string] `json:"clusterId"`
	Name       optional[string] `json:"name"`
	LabelKey   optional[string] `json:"labelKey"`
	LabelValue optional[string] `json:"labelValue"`
	Placement  optional[string] `json:"placement"`
	// NetworkTopologyID is Run:ai's: the pool's network topology (S29); null: none.
	NetworkTopologyID optional[string] `json:"networkTopologyId"`
}

var nodePoolFields = []string{"clusterId", "name", "labelKey", "labelValue", "placement", "networkTopologyId"}

func (r nodePoolRequest) update() (store.NodePoolUpdate, error) {
	topology, err := storeOptionalID("networkTopologyId", r.NetworkTopologyID)
	return store.NodePoolUpdate{Name: storeOptionalValue(r.Name), LabelKey: storeOptionalValue(r.LabelKey),
		LabelValue: storeOptionalValue(r.LabelValue), Placement: storeOptionalValue(r.Placement), NetworkTopology: topology}, err
}

// listNodePools answers the pools under Run:ai's key, nodepools, and under Arbiter's,
// nodePools, for the scripts that read it (a handful of pools: the list is small).
func (h *nodePools) listNodePools(c echo.Context) error {
	pools, _, err := queryList(c, store.NodePoolSpec, h.org.store.NodePools)
	if err != nil {
		return err
	}
	answers := mapSlice(pools, h.answer(nodesByPool(h.cycles)))
	return c.JSON(http.StatusOK, map[string]any{"nodepools": answers, "nodePools": answers})
}

// countNodePools is Run:ai's count of the node pools the list shows (every caller sees all).
func (h *nodePools) countNodePools(c echo.Context) error {
	return countAll(c, store.NodePoolSpec, h.org.store.NodePools)
}

func (h *nodePools) getNodePool(c echo.Context) error {
	return getByID(c, "id", h.org.store.NodePool, h.answer(nodesByPool(h.cycles)))
}

func (h *nodePools) createNodePool(c echo.Context) error {
	return createByAdmin(c, "node-pool", "create a node pool", nodePoolFields, inCluster(c, nodePoolRequest.update), h.org.store.CreateNodePool, h.answer(nodesByPool(h.cycles)))
}

func (h *nodePools) putNodePool(c echo.Context) error {
	return putByAdmin(c, "node-pool", "change a node pool", nodePoolFields, inCluster(c, nodePoolRequest.update), h.org.store.UpdateNodePool, h.answer(nodesByPool(h.cycles)))
}

// answer is the API's view of a pool, given its nodes by pool name.
func (h *nodePools) answer(nodes map[string][]string) func(store.NodePool) views.NodePoolAnswer {
	return func(p store.NodePool) views.NodePoolAnswer {
		return nodePoolAnswer(h.org.nodePoolView(p), nodes[p.Name], h.org.cluster)
	}
}

func (h *nodePools) deleteNodePool(c echo.Context) error {
	return deleteByID(c, "node-pool", "delete a node pool", h.org.store.DeleteNodePool)
}

func (h *nodePools) nodePoolsPage(c echo.Context) error {
	return h.renderNodePoolsPage(c, http.StatusOK, views.NodePoolForm{LabelKey: store.NodePoolLabelKey, Placement: store.Binpack})
}

func (h *nodePools) renderNodePoolsPage(c echo.Context, status int, form views.NodePoolForm, topologyForm ...views.TopologyForm) error {
	q, err := pageQuery(c, store.NodePoolSpec)
	if err != nil {
		return err
	}
	pools, err := h.org.store.NodePools(c.Request().Context(), q)
	if err != nil {
		return err
	}
	shown, err := h.withFairness(c.Request().Context(), mapSlice(pools, h.org.nodePoolView))
	if err != nil {
		return err
	}
	m := views.NodePoolsPage{
		Page: h.page(c, "Node pools", "node-pools"), Pools: shown, Search: q.Search,
		CSVHref: pathTo(c, routenames.NodePoolsCSV) + "?" + c.QueryParams().Encode(), CanEdit: canManageOrg(c), Form: form,
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}, {"Label key", "labelKey"}, {"Label value", "labelValue"}, {"Placement and topology", "placement"}}),
	}
	if m.Topologies, m.TopologyChoices, err = h.topologies(c, topologyForm...); err != nil {
		return err
	}
	return render(c, status, views.NodePoolsView(m))
}

func (h *nodePools) createNodePoolForm(c echo.Context) error {
	target(c, "create", "node-pool", "")
	form := views.NodePoolForm{Name: c.FormValue("name"), LabelKey: c.FormValue("labelKey"), LabelValue: c.FormValue("labelValue"), Placement: c.FormValue("placement"),
		NetworkTopologyID: c.FormValue("networkTopologyId")}
	err := requireAdmin(c, "create a node pool")
	if err == nil {
		u := store.NodePoolUpdate{Name: formString(form.Name), LabelKey: formString(form.LabelKey), Placement: formString(form.Placement)}
		if form.LabelValue != "" {
			u.LabelValue = formString(form.LabelValue)
		}
		u.NetworkTopology, err = formTopology(form.NetworkTopologyID)
		if err == nil {
			_, err = h.org.store.CreateNodePool(c.Request().Context(), u, actor(c))
		}
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return h.renderNodePoolsPage(c, status, form)
	}
	return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.NodePools))
}

func (h *nodePools) saveNodePoolRow(c echo.Context) error {
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
		if _, ok := c.Request().PostForm["networkTopologyId"]; ok {
			u.NetworkTopology, saveErr = formTopology(c.FormValue("networkTopologyId"))
		}
		if saveErr == nil {
			_, saveErr = h.org.store.UpdateNodePool(ctx, id, u, actor(c))
		}
	}
	return rowResult(c, routenames.NodePools, saveErr, func(status int) error {
		p, err := h.org.store.NodePool(ctx, id)
		if err != nil {
			return err
		}
		shown, err := h.withFairness(ctx, []views.NodePool{h.org.nodePoolView(p)})
		if err != nil {
			return err
		}
		_, choices, err := h.topologies(c)
		if err != nil {
			return err
		}
		row := views.NodePoolRow{Pool: shown[0], TopologyChoices: choices, CanEdit: canManageOrg(c), CSRFToken: h.page(c, "", "").CSRFToken,
			Saved: savedField(saveErr, "row"), Error: refusal("", saveErr)}
		return render(c, status, views.NodePoolRowView(row))
	})
}

func (h *nodePools) deleteNodePoolRow(c echo.Context) error {
	id, err := changeTarget(c, "delete", "node-pool")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	delErr := requireAdmin(c, "delete a node pool")
	if delErr == nil {
		delErr = h.org.store.DeleteNodePool(ctx, id, actor(c))
	}
	return deleteRow(c, routenames.NodePools, delErr, func(refused views.FieldError) (templ.Component, error) {
		p, err := h.org.store.NodePool(ctx, id)
		if err != nil {
			return nil, err
		}
		shown, err := h.withFairness(ctx, []views.NodePool{h.org.nodePoolView(p)})
		if err != nil {
			return nil, err
		}
		_, choices, err := h.topologies(c)
		row := views.NodePoolRow{Pool: shown[0], TopologyChoices: choices, CanEdit: canManageOrg(c), CSRFToken: h.page(c, "", "").CSRFToken, Error: refused}
		return views.NodePoolRowView(row), err
	})
}

func (h *nodePools) nodePoolsCSV(c echo.Context) error {
	q, err := pageQuery(c, store.NodePoolSpec)
	if err != nil {
		return err
	}
	pools, err := h.org.store.NodePools(c.Request().Context(), q)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "labelKey", "labelValue", "placement", "networkTopologyName", "nodes", "readyNodes", "gpus", "allocatedGpus"}}
	for _, p := range mapSlice(pools, h.org.nodePoolView) {
		topology := ""
		if p.NetworkTopologyName != nil {
			topology = *p.NetworkTopologyName
		}
		rows = append(rows, []string{p.ID, p.Name, p.LabelKey, p.LabelValue, p.Placement, topology, strconv.Itoa(p.Status.Nodes),
			strconv.Itoa(p.Status.ReadyNodes), strconv.Itoa(p.Status.GPUs), strconv.Itoa(p.Status.AllocatedGPUs)})
	}
	return writeCSV(c, "node-pools.csv", rows)
}
