package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// The Node pools page's part on network topologies (S29): Arbiter's own, which admins create
// and delete there as through the API, each pool's topology in its row, and the topologies
// the cluster describes (Kueue's and KAI's Topology objects in the scheduler's last cycle).

// topologies is the page's part on topologies, with form (the create form as sent, when it
// was refused), and the choices of a pool's topology.
func (h *nodePools) topologies(c echo.Context, form ...views.TopologyForm) (views.TopologiesSection, []views.TopologyChoice, error) {
	own, err := h.org.store.NetworkTopologies(c.Request().Context(), listquery.Query{SortBy: "name"})
	if err != nil {
		return views.TopologiesSection{}, nil, err
	}
	m := views.TopologiesSection{Own: make([]views.NetworkTopology, 0, len(own)), CanEdit: canManageOrg(c), CSRFToken: h.page(c, "", "").CSRFToken}
	if len(form) > 0 {
		m.Form = form[0]
	}
	choices := make([]views.TopologyChoice, 0, len(own))
	for _, t := range own {
		m.Own = append(m.Own, views.NetworkTopology{ID: t.ID.String(), Name: t.Name, Levels: t.Levels, NodePools: t.NodePools})
		choices = append(choices, views.TopologyChoice{ID: t.ID.String(), Name: t.Name})
	}
	if h.cycles != nil {
		if snap, _ := h.cycles.LastCycle(); snap != nil {
			m.Connected = true
			m.Cluster = []views.ClusterTopology{}
			for _, t := range snap.Topologies {
				if !slices.ContainsFunc(own, func(o store.NetworkTopology) bool { return o.Name == t.Name }) {
					m.Cluster = append(m.Cluster, views.ClusterTopology{Name: t.Name, Levels: t.Levels})
				}
			}
		}
	}
	return m, choices, nil
}

// formTopology is a pool's topology as its select sends it: empty for none, else an id.
func formTopology(v string) (store.Optional[uuid.UUID], error) {
	if v == "" {
		return store.Optional[uuid.UUID]{Set: true}, nil
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return store.Optional[uuid.UUID]{}, badField("networkTopologyId", "%q is not one of the topologies; choose one from the list", v)
	}
	return store.Optional[uuid.UUID]{Set: true, Value: &id}, nil
}

// formLevels splits the levels field: one label key a line (commas too), blanks dropped.
func formLevels(raw string) []string {
	return strings.FieldsFunc(raw, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' || r == ' ' || r == '\t' })
}

func (h *nodePools) createTopologyForm(c echo.Context) error {
	target(c, "create", "network-topology", "")
	form := views.TopologyForm{Name: strings.TrimSpace(c.FormValue("name")), Levels: c.FormValue("levels")}
	err := requireAdmin(c, "create a network topology")
	if err == nil {
		_, err = h.org.store.CreateNetworkTopology(c.Request().Context(), form.Name, formLevels(form.Levels), actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		form.Error = formRefusal(err)
		return h.renderNodePoolsPage(c, status, views.NodePoolForm{LabelKey: store.NodePoolLabelKey, Placement: store.Binpack}, form)
	}
	return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.NodePools)+"#topologies-title")
}

func (h *nodePools) deleteTopologyForm(c echo.Context) error {
	id, err := changeTarget(c, "delete", "network-topology")
	if err != nil {
		return err
	}
	err = requireAdmin(c, "delete a network topology")
	if err == nil {
		err = h.org.store.DeleteNetworkTopology(c.Request().Context(), id, actor(c))
	}
	if err != nil {
		status, _ := statusOf(err)
		return h.renderNodePoolsPage(c, status, views.NodePoolForm{LabelKey: store.NodePoolLabelKey, Placement: store.Binpack},
			views.TopologyForm{Error: views.FieldError{Message: formRefusal(err).Message}})
	}
	return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.NodePools)+"#topologies-title")
}
