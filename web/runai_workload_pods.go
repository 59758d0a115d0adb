package web

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// workloadReads are Run:ai's reads of a workload's pods and history, and of every pod the
// caller may see. The pods are the scheduler's last cycle's (the workload's page shows the
// same); the history is the workload's recorded events.
type workloadReads struct {
	service *workloads.Service
	pods    WorkloadPods // nil: no cluster is connected, and no pod is known
	cycles  LastCycle    // the pools of the pods' nodes; nil: no cluster
}

func (h *workloadReads) routes(r router) {
	r.api.GET("/workloads/pods", h.listPods) // Echo matches these static paths before /workloads/:id
	r.api.GET("/workloads/pods/count", h.countPods)
	r.api.GET("/workloads/:id/pods", h.workloadPods)
	r.api.GET("/workloads/:id/history", h.workloadHistory)
}

// runAIPodSpec is what Run:ai's pods lists filter and sort by (its PodsFilter and PodsSort).
// The pods are in memory, so the columns are unused: podMatches evaluates the terms. Arbiter
// keeps no revisions and no record of a pod once it is gone, so revisionId, completedAt and
// deletedAt are null: a filter on them matches nothing but !=.
var runAIPodSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"clusterId":       {Kind: listquery.String, Sortable: true},
		"workloadId":      {Kind: listquery.String, Sortable: true},
		"revisionId":      {Kind: listquery.String, Sortable: true, Nullable: true},
		"nodeName":        {Kind: listquery.String, Sortable: true, Nullable: true},
		"currentNodepool": {Kind: listquery.String, Sortable: true, Nullable: true},
		"createdAt":       {Kind: listquery.Time, Sortable: true},
		"completedAt":     {Kind: listquery.Time, Sortable: true, Nullable: true},
		"deletedAt":       {Kind: listquery.Time, Sortable: true, Nullable: true},
	},
	DefaultSort: "createdAt",
	Paged:       true,
}

// runAIPod is Run:ai's Pod (its sync, computed and verbosity fields) with the GPUs it requests
// beside them. Arbiter's view holds a pod's creation and start but not when its phase last
// changed: k8sPhaseUpdatedAt and updatedAt are its start, or its creation until it starts.
type runAIPod struct {
	ID                string               `json:"id"`
	Name              string               `json:"name"`
	WorkloadID        string               `json:"workloadId"`
	ClusterID         string               `json:"clusterId"`
	TenantID          int                  `json:"tenantId"`
	ProjectID         string               `json:"projectId,omitempty"`
	PriorityClassName string               `json:"priorityClassName"`
	NodeName          *string              `json:"nodeName"`
	CurrentNodePool   *string              `json:"currentNodePool"`
	CreatedAt         time.Time            `json:"createdAt"`
	CompletedAt       *time.Time           `json:"completedAt"`
	DeletedAt         *time.Time           `json:"deletedAt"`
	K8sPhase          string               `json:"k8sPhase"`
	K8sPhaseUpdatedAt time.Time            `json:"k8sPhaseUpdatedAt"`
	UpdatedAt         time.Time            `json:"updatedAt"`
	Containers        []views.PodContainer `json:"containers"`
	GPUs              int                  `json:"gpus"`
	WorkloadName      string               `json:"workloadName,omitempty"` // verbosity=full
	ProjectName       string               `json:"projectName,omitempty"`  // verbosity=full
}

// field is the value of one of runAIPodSpec's fields, and whether it is null.
func (p runAIPod) field(name string) (string, bool) {
	switch name {
	case "clusterId":
		return p.ClusterID, false
	case "workloadId":
		return p.WorkloadID, false
	case "nodeName":
		return deref(p.NodeName), p.NodeName == nil
	case "currentNodepool":
		return deref(p.CurrentNodePool), p.CurrentNodePool == nil
	case "createdAt":
		return p.CreatedAt.Format(time.RFC3339Nano), false
	}
	return "", true // revisionId, completedAt, deletedAt
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// podMatches is listquery's filter and search semantics (docs/api.md "Lists") over p: a null
// field matches only != and !@ (as SQL's IS DISTINCT FROM and coalesce do), times compare as
// times, and search looks in the pod's name.
func podMatches(p runAIPod, q listquery.Query) bool {
	for _, f := range q.Filters {
		v, null := p.field(f.Field)
		switch {
		case null:
			if f.Op != listquery.NotEq && f.Op != listquery.NotContains {
				return false
			}
		case runAIPodSpec.Fields[f.Field].Kind == listquery.Time:
			if !timeHolds(f, p.CreatedAt) {
				return false
			}
		case !f.Holds(v):
			return false
		}
	}
	return strings.Contains(strings.ToLower(p.Name), strings.ToLower(q.Search))
}

// timeHolds is a time filter's meaning (listquery accepts only ==, !=, <= and >= on times,
// with an RFC 3339 value).
func timeHolds(f listquery.Filter, v time.Time) bool {
	at, _ := time.Parse(time.RFC3339, f.Value)
	switch f.Op {
	case listquery.Eq:
		return v.Equal(at)
	case listquery.NotEq:
		return !v.Equal(at)
	case listquery.LessEq:
		return !v.After(at)
	}
	return !v.Before(at)
}

// podsQuery reads a pods list's parameters: Run:ai's filterBy, sortBy, sortOrder, offset,
// limit and search, and deleted, completed and verbosity. Pods gone from the cluster are not
// kept, and the view holds only pods that have not completed: deleted=true and
// completed=true select none.
type podsQuery struct {
	listquery.Query
	none, full bool
}

func parsePodsQuery(c echo.Context) (podsQuery, error) {
	q, err := listquery.Parse(c.QueryParams(), runAIPodSpec)
	if err != nil {
		return podsQuery{}, err
	}
	deleted, err := boolParam(c, "deleted")
	if err != nil {
		return podsQuery{}, err
	}
	out := podsQuery{Query: q, none: deleted}
	switch completed := c.QueryParam("completed"); completed {
	case "", "all", "false":
	case "true":
		out.none = true
	default:
		return podsQuery{}, badField("completed", "completed %q is not valid; use true, false or all", completed)
	}
	switch verbosity := c.QueryParam("verbosity"); verbosity {
	case "", "brief":
	case "full":
		out.full = true
	default:
		return podsQuery{}, badField("verbosity", "verbosity %q is not valid; use brief or full", verbosity)
	}
	return out, nil
}

// selectPods are the pods q selects, in its order (then by pod id), unpaged.
func selectPods(pods []runAIPod, q podsQuery) []runAIPod {
	if q.none {
		return []runAIPod{}
	}
	pods = slices.DeleteFunc(pods, func(p runAIPod) bool { return !podMatches(p, q.Query) })
	slices.SortStableFunc(pods, func(a, b runAIPod) int {
		var by int
		if q.SortBy == "createdAt" {
			by = a.CreatedAt.Compare(b.CreatedAt)
		} else {
			av, _ := a.field(q.SortBy)
			bv, _ := b.field(q.SortBy)
			by = cmp.Compare(av, bv)
		}
		if q.Desc {
			by = -by
		}
		return cmp.Or(by, cmp.Compare(a.ID, b.ID))
	})
	return pods
}

// page is one page (offset, limit) of the selected pods, with the offset of the next.
func podsPage(pods []runAIPod, q podsQuery) map[string]any {
	page, next := listquery.Next(q.Query, pods[min(q.Offset, len(pods)):])
	answer := map[string]any{"pods": page}
	if next != nil {
		answer["next"] = *next
	}
	return answer
}

// podAnswer is p, a pod of the workload record r (nil: none is recorded yet), in Run:ai's shape.
func podAnswer(p views.WorkloadPod, r *store.WorkloadRecord, poolOf map[string]string, full bool, cluster string) runAIPod {
	changed := p.CreatedAt
	if p.StartedAt != nil {
		changed = *p.StartedAt
	}
	out := runAIPod{ID: p.UID, Name: p.Name, WorkloadID: p.WorkloadUID, ClusterID: cluster, TenantID: runAITenantID,
		PriorityClassName: p.PriorityClassName, CreatedAt: p.CreatedAt, K8sPhase: p.K8sPhase, K8sPhaseUpdatedAt: changed, UpdatedAt: changed,
		Containers: p.Containers, GPUs: p.GPUs}
	if p.Node != "" {
		node := p.Node
		out.NodeName = &node
		if pool, ok := poolOf[node]; ok {
			out.CurrentNodePool = &pool
		}
	}
	if r != nil {
		if out.PriorityClassName == "" { // Arbiter labels the top owner, not the pod's spec
			out.PriorityClassName = r.PriorityName
		}
		if r.ProjectID != nil {
			out.ProjectID = r.ProjectID.String()
		}
		if full {
			out.WorkloadName, out.ProjectName = r.Name, r.ProjectName
		}
	}
	return out
}

// nodePools are the pool of each node of the last cycle (nodesByPool, turned around).
func (h *workloadReads) nodePools() map[string]string {
	out := map[string]string{}
	for pool, nodes := range nodesByPool(h.cycles) {
		for _, n := range nodes {
			out[n] = pool
		}
	}
	return out
}

// workloadPods is Run:ai's GET /workloads/{workloadId}/pods: the pods of a workload the caller
// may see (a 404 otherwise, as GET /workloads/{workloadId}), paged.
func (h *workloadReads) workloadPods(c echo.Context) error {
	q, err := parsePodsQuery(c)
	if err != nil {
		return err
	}
	w, err := visibleWorkload(c, h.service)
	if err != nil {
		return err
	}
	var pods []views.WorkloadPod
	if h.pods != nil {
		pods, _ = h.pods.WorkloadPods(w.Record.UID)
	}
	poolOf := h.nodePools()
	answers := make([]runAIPod, 0, len(pods))
	for _, p := range pods {
		answers = append(answers, podAnswer(p, &w.Record, poolOf, q.full, clusterID(c)))
	}
	return c.JSON(http.StatusOK, podsPage(selectPods(answers, q), q))
}

// visiblePods are the last cycle's pods of the workloads the caller may see (VisibleRecords),
// that q selects. The view holds the cluster's pods, so the list is as bounded as the cluster.
func (h *workloadReads) visiblePods(c echo.Context, q podsQuery) ([]runAIPod, error) {
	if h.pods == nil {
		return []runAIPod{}, nil
	}
	pods := h.pods.Pods()
	uids := make([]string, 0, len(pods))
	for _, p := range pods {
		if len(uids) == 0 || uids[len(uids)-1] != p.WorkloadUID {
			uids = append(uids, p.WorkloadUID)
		}
	}
	records, all, err := h.service.VisibleRecords(c.Request().Context(), identity(c), uids)
	if err != nil {
		return nil, err
	}
	poolOf := h.nodePools()
	answers := make([]runAIPod, 0, len(pods))
	for _, p := range pods {
		r, ok := records[p.WorkloadUID]
		switch {
		case ok:
			answers = append(answers, podAnswer(p, &r, poolOf, q.full, clusterID(c)))
		case all: // it sees every record: this workload has none yet
			answers = append(answers, podAnswer(p, nil, poolOf, q.full, clusterID(c)))
		}
	}
	return selectPods(answers, q), nil
}

// listPods is Run:ai's GET /workloads/pods: a page of the pods the caller may see.
func (h *workloadReads) listPods(c echo.Context) error {
	q, err := parsePodsQuery(c)
	if err != nil {
		return err
	}
	pods, err := h.visiblePods(c, q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, podsPage(pods, q))
}

// countPods is Run:ai's count of the pods the list selects, all pages.
func (h *workloadReads) countPods(c echo.Context) error {
	q, err := parsePodsQuery(c)
	if err != nil {
		return err
	}
	pods, err := h.visiblePods(c, q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, countAnswer{Count: len(pods)})
}
