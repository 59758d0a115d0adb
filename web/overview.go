package web

import (
	"net/http"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// eventWindow is how far back the Overview counts preemptions and reclaims.
const eventWindow = 24 * time.Hour

// overview is the landing page after sign-in: the cluster's capacity and what runs and waits,
// over what the caller may read, refreshed in place every few seconds.
type overview struct {
	org       organization
	workloads *workloads.Service // the counts of the workloads the caller may see
	connected bool               // a scheduler reports live status
	layout
}

func newOverview(d Deps, org organization, service *workloads.Service, l layout) *overview {
	return &overview{org: org, workloads: service, connected: d.OrgStatus != nil, layout: l}
}

func (h *overview) routes(r router) {
	r.page(http.MethodGet, "/", routenames.Home, h.overviewPage)
	r.page(http.MethodGet, "/overview/live", routenames.OverviewLive, h.overviewLive)
}

func (h *overview) overviewPage(c echo.Context) error {
	live, err := h.live(c)
	if err != nil {
		return err
	}
	page := h.page(c, "Overview", routenames.Home)
	page.Charts = true
	return render(c, http.StatusOK, views.OverviewView(views.OverviewPage{Page: page, Live: live}))
}

// overviewLive is the region the page polls: swapped whole (outerHTML), so the page around it
// keeps its scroll position.
func (h *overview) overviewLive(c echo.Context) error {
	live, err := h.live(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.OverviewLiveView(live))
}

// live reads what the Overview is made of, over what the caller may read, and counts it
// (overviewFigures).
func (h *overview) live(c echo.Context) (views.OverviewLive, error) {
	ctx := c.Request().Context()
	in := overviewInput{Connected: h.connected}
	pools, err := h.org.store.NodePools(ctx, listquery.Query{SortBy: "name", Limit: listquery.MaxLimit})
	if err != nil {
		return views.OverviewLive{}, err
	}
	in.Pools = mapSlice(pools, h.org.nodePoolView)
	projects, next, err := h.org.visibleProjects(c, listquery.Query{SortBy: "name", Limit: listquery.MaxLimit})
	if err != nil {
		return views.OverviewLive{}, err
	}
	in.Projects, in.MoreProjects = mapSlice(projects, h.org.projectView), next != nil
	if h.workloads.HasRecords() {
		if in.Counts, err = h.workloads.Counts(ctx, identity(c), time.Now().Add(-eventWindow)); err != nil {
			return views.OverviewLive{}, err
		}
	}
	live := overviewFigures(in)
	live.Usage = overviewUsagePanel(c)
	return live, nil
}
