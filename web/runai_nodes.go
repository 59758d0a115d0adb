package web

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/labstack/echo/v4"
)

// runAINodeSpec is what Run:ai's nodes list filters and sorts by, of its NodeFilterSortFields:
// the node's name, status, pool and cluster. The cycle knows no GPU type or NVLink domain, so
// those are refused as unknown fields. The list is the last cycle's nodes, held in memory, so
// the columns are unused: runAINodeMatches evaluates the terms.
var runAINodeSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":        {Kind: listquery.String, Sortable: true},
		"status":      {Kind: listquery.String, Sortable: true},
		"nodePool":    {Kind: listquery.String, Sortable: true},
		"clusterUuid": {Kind: listquery.String, Sortable: true},
	},
	DefaultSort: "name",
	Paged:       true,
}

// runAINode is Run:ai's Node with Arbiter's GPU figures (gpus) and cordon (unschedulable)
// beside its fields.
type runAINode struct {
	Name          string           `json:"name"`
	Status        string           `json:"status"` // Ready or NotReady
	NodePool      string           `json:"nodePool"`
	Taints        []runAINodeTaint `json:"taints"`
	ClusterUUID   string           `json:"clusterUuid"`
	CreatedAt     time.Time        `json:"createdAt"`
	UpdatedAt     time.Time        `json:"updatedAt"`
	Unschedulable bool             `json:"unschedulable"`
	GPUs          runAINodeGPUs    `json:"gpus"`
}

type runAINodeTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// runAINodeGPUs are a node's GPUs as the Nodes page counts them: allocated are those held by
// the pods bound to it (Arbiter's and others'), free the rest.
type runAINodeGPUs struct {
	Allocatable int `json:"allocatable"`
	Allocated   int `json:"allocated"`
	Free        int `json:"free"`
}

// field is the value of one of runAINodeSpec's fields.
func (n runAINode) field(name string) string {
	switch name {
	case "status":
		return n.Status
	case "nodePool":
		return n.NodePool
	case "clusterUuid":
		return n.ClusterUUID
	default:
		return n.Name
	}
}

// runAINodes are the nodes of the scheduler's last cycle, by name, with the figures of the
// Nodes page's grid (nodeGrid over the same cycle). Without a cluster, or before the first
// cycle, there are none: the Nodes page then shows no node either, only why. The cycle does
// not record when a node joined the cluster, so createdAt and updatedAt are when the cycle
// took its view of the node.
func runAINodes(cycles LastCycle, cluster string) []runAINode {
	out := []runAINode{}
	if cycles == nil {
		return out
	}
	snap, plan := cycles.LastCycle()
	if snap == nil {
		return out
	}
	byName := map[string]*scheduler.Node{}
	for i := range snap.Nodes {
		byName[snap.Nodes[i].Name] = &snap.Nodes[i]
	}
	grid := nodeGrid(snap, plan, gridFilter{}, func(string) bool { return false }, nil)
	at := snap.Now.UTC()
	for _, g := range grid.Nodes {
		n := runAINode{Name: g.Name, Status: "NotReady", NodePool: g.Pool, Taints: []runAINodeTaint{}, ClusterUUID: cluster,
			CreatedAt: at, UpdatedAt: at, Unschedulable: g.Unschedulable,
			GPUs: runAINodeGPUs{Allocatable: g.GPUs, Allocated: g.Held, Free: g.GPUs - g.Held}}
		if g.Ready {
			n.Status = "Ready"
		}
		for _, t := range byName[g.Name].Taints {
			n.Taints = append(n.Taints, runAINodeTaint{Key: t.Key, Value: t.Value, Effect: t.Effect})
		}
		out = append(out, n)
	}
	return out
}

// queryRunAINodes are the last cycle's nodes the request's filterBy and search select, in its
// sortBy and sortOrder (then by name), unpaged.
func queryRunAINodes(c echo.Context, cycles LastCycle) ([]runAINode, listquery.Query, error) {
	q, err := listquery.Parse(c.QueryParams(), runAINodeSpec)
	if err != nil {
		return nil, q, err
	}
	nodes := slices.DeleteFunc(runAINodes(cycles, clusterID(c)), func(n runAINode) bool { return !runAINodeMatches(n, q) })
	slices.SortStableFunc(nodes, func(a, b runAINode) int {
		by := cmp.Compare(a.field(q.SortBy), b.field(q.SortBy))
		if q.Desc {
			by = -by
		}
		return cmp.Or(by, cmp.Compare(a.Name, b.Name))
	})
	return nodes, q, nil
}

// runAINodeMatches is listquery's filter and search semantics (docs/api.md "Lists") over n.
func runAINodeMatches(n runAINode, q listquery.Query) bool {
	for _, f := range q.Filters {
		if !f.Holds(n.field(f.Field)) {
			return false
		}
	}
	return strings.Contains(strings.ToLower(n.Name), strings.ToLower(q.Search))
}

// listRunAINodes is Run:ai's GET /nodes: one page (offset, limit) of the selected nodes.
// Every signed-in caller may read it, as every one may read the Nodes page's nodes.
func (h *nodes) listRunAINodes(c echo.Context) error {
	nodes, q, err := queryRunAINodes(c, h.cycles)
	if err != nil {
		return err
	}
	nodes = nodes[min(q.Offset, len(nodes)):]
	nodes = nodes[:min(q.Limit, len(nodes))]
	return c.JSON(http.StatusOK, map[string]any{"nodes": nodes})
}

// countRunAINodes is Run:ai's count of the nodes the list selects.
func (h *nodes) countRunAINodes(c echo.Context) error {
	nodes, _, err := queryRunAINodes(c, h.cycles)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, countAnswer{Count: len(nodes)})
}
