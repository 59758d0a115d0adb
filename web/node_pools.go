package web

import (
	"net/http"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// Node pools: the API resource (/api/v1/node-pools) and the Node pools page. A pool holds
// the nodes labelled with its label key and value; quotas are given per pool.
func (s *Server) routeNodePools(api *echo.Group, pages *echo.Echo) {
	api.GET("/node-pools", s.listNodePools)
	api.POST("/node-pools", s.createNodePool)
	api.GET("/node-pools/:id", s.getNodePool)
	api.PUT("/node-pools/:id", s.putNodePool)
	api.DELETE("/node-pools/:id", s.deleteNodePool)
	pages.GET("/node-pools", s.nodePoolsPage)
	pages.GET("/node-pools.csv", s.nodePoolsCSV)
	pages.POST("/node-pools", s.createNodePoolForm)
	pages.POST("/node-pools/:id", s.saveNodePoolRow)
	pages.POST("/node-pools/:id/delete", s.deleteNodePoolRow)
}

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

// The page.

func (s *Server) nodePoolsPage(c echo.Context) error {
	return s.renderNodePoolsPage(c, http.StatusOK, views.NodePoolForm{LabelKey: store.NodePoolLabelKey, Placement: store.Binpack})
}

func (s *Server) renderNodePoolsPage(c echo.Context, status int, form views.NodePoolForm) error {
	q, err := pageQuery(c, store.NodePoolSpec)
	if err != nil {
		return err
	}
	pools, err := s.org.store.NodePools(c.Request().Context(), q)
	if err != nil {
		return err
	}
	m := views.NodePoolsPage{
		Page: s.page(c, "Node pools", "node-pools"), Pools: mapSlice(pools, s.nodePoolView), Search: q.Search,
		CSVHref: "/node-pools.csv?" + c.QueryParams().Encode(), CanEdit: canManageOrg(c), Form: form,
		Columns: sortLinks(c, q, [][2]string{{"Name", "name"}, {"Label key", "labelKey"}, {"Label value", "labelValue"}, {"Placement", "placement"}}),
	}
	return render(c, status, views.NodePoolsView(m))
}

func (s *Server) createNodePoolForm(c echo.Context) error {
	target(c, "create", "node-pool", "")
	form := views.NodePoolForm{Name: c.FormValue("name"), LabelKey: c.FormValue("labelKey"), LabelValue: c.FormValue("labelValue"), Placement: c.FormValue("placement")}
	err := requireAdmin(c, "create a node pool")
	if err == nil {
		u := store.NodePoolUpdate{Name: formString(form.Name), LabelKey: formString(form.LabelKey), Placement: formString(form.Placement)}
		if form.LabelValue != "" {
			u.LabelValue = formString(form.LabelValue)
		}
		_, err = s.org.store.CreateNodePool(c.Request().Context(), u, actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return s.renderNodePoolsPage(c, status, form)
	}
	return c.Redirect(http.StatusSeeOther, "/node-pools")
}

func (s *Server) saveNodePoolRow(c echo.Context) error {
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
		_, saveErr = s.org.store.UpdateNodePool(ctx, id, u, actor(c))
	}
	return rowResult(c, "/node-pools", saveErr, func(status int) error {
		p, err := s.org.store.NodePool(ctx, id)
		if err != nil {
			return err
		}
		row := views.NodePoolRow{Pool: s.nodePoolView(p), CanEdit: canManageOrg(c), CSRFToken: s.page(c, "", "").CSRFToken,
			Saved: savedField(saveErr, "row"), Error: refusal("", saveErr)}
		return render(c, status, views.NodePoolRowView(row))
	})
}

func (s *Server) deleteNodePoolRow(c echo.Context) error {
	id, err := changeTarget(c, "delete", "node-pool")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	delErr := requireAdmin(c, "delete a node pool")
	if delErr == nil {
		delErr = s.org.store.DeleteNodePool(ctx, id, actor(c))
	}
	return rowResult(c, "/node-pools", delErr, func(status int) error {
		if delErr == nil {
			return c.HTML(http.StatusOK, "") // htmx swaps the row for nothing
		}
		p, err := s.org.store.NodePool(ctx, id)
		if err != nil {
			return err
		}
		row := views.NodePoolRow{Pool: s.nodePoolView(p), CanEdit: canManageOrg(c), CSRFToken: s.page(c, "", "").CSRFToken, Error: refusal("delete", delErr)}
		return render(c, status, views.NodePoolRowView(row))
	})
}
