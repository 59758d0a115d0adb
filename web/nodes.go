package web

import (
	"context"
	"net/http"

	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// LastCycle gives the scheduler's last cycle: the snapshot it decided from and its plan, both
// nil before the first cycle. Neither may be changed.
type LastCycle interface {
	LastCycle() (*scheduler.Snapshot, *scheduler.Plan)
}

// nodes is the Nodes page: per node a grid of its GPUs and which workload holds each, from the
// scheduler's last cycle.
type nodes struct {
	cycles    LastCycle          // nil: no cluster is connected
	workloads *workloads.Service // who may read which project's workloads
	projects  interface {        // the organization's projects, whose order gives their swatches
		ProjectRefs(ctx context.Context) ([]store.ProjectRef, error)
	}
	layout
}

func (h *nodes) routes(r router) {
	r.page(http.MethodGet, "/nodes", routenames.Nodes, h.nodesPage)
	r.api.GET("/nodes", h.listRunAINodes)
	r.api.GET("/nodes/count", h.countRunAINodes)
}

func (h *nodes) nodesPage(c echo.Context) error {
	m := views.NodesPage{Page: h.page(c, "Nodes", routenames.Nodes), Pool: c.QueryParam("pool"), Project: c.QueryParam("project"),
		Group: c.QueryParam("group"), LiveHref: pathTo(c, routenames.Nodes) + "?" + c.QueryParams().Encode()}
	m.NodeGrid = nodeGrid(nil, nil, gridFilter{}, nil, nil)
	if h.cycles != nil {
		m.Connected = true
		snap, plan := h.cycles.LastCycle()
		if snap != nil {
			scope, err := h.scope(c)
			if err != nil {
				return err
			}
			// the last cycle names projects as they are now
			visible := scope.IncludesNamed
			var swatches map[string]views.Swatch
			if h.projects != nil {
				refs, err := h.projects.ProjectRefs(c.Request().Context())
				if err != nil {
					return err
				}
				swatches = projectSwatches(refs)
			}
			m.Cycled = true
			m.NodeGrid = nodeGrid(snap, plan, gridFilter{Pool: m.Pool, Project: m.Project}, visible, swatches)
			m.Groupings, m.Domains = topologyGroupings(snap), nodeDomains(snap, m.Nodes, m.Group)
		}
	}
	return render(c, http.StatusOK, views.NodesView(m))
}

// scope is whose workloads the caller may see named: as the workloads API lists them.
func (h *nodes) scope(c echo.Context) (store.WorkloadScope, error) {
	return h.workloads.Scope(c.Request().Context(), identity(c))
}
