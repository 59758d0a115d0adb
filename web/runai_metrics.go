package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// usageMetrics answers Run:ai's metrics routes of projects, departments, the cluster and its
// node pools from the usage history: GPUs allocated and GPUs of deserved quota, averaged over
// each of numberOfSamples buckets between start and end. A bucket the history holds no
// recording of (before recording began, while no replica led) has no value; a recorded bucket
// in which a project held nothing is 0.
type usageMetrics struct {
	usage UsageStore // nil: every route answers 503
	keep  store.UsageRetention
	org   organization
}

func (h *usageMetrics) routes(r router) {
	r.api.GET("/org-unit/projects/:id/metrics", h.projectMetrics)
	r.api.GET("/org-unit/departments/:id/metrics", h.departmentMetrics)
	r.api.GET("/clusters/:clusterUuid/metrics", h.clusterMetrics)
	r.api.GET("/clusters/:clusterUuid/nodepools/:nodepoolName/metrics", h.nodePoolMetrics)
}

// The metric types of each route. Run:ai's enumerations name more than the usage history
// holds; those are refused with why (docs/api.md "Metrics").
var (
	projectMetricTypes = metricTypes{served: []string{"GPU_QUOTA", "GPU_ALLOCATION"}, unserved: map[string]string{
		"CPU_QUOTA_MILLICORES": notRecordedCPU, "CPU_MEMORY_QUOTA_MB": notRecordedCPU, "CPU_ALLOCATION_MILLICORES": notRecordedCPU,
		"CPU_MEMORY_ALLOCATION_MB": notRecordedCPU, "GPU_MEMORY_UTILIZATION": notRecordedDevices,
	}}
	departmentMetricTypes = metricTypes{served: []string{"GPU_ALLOCATION"}, unserved: map[string]string{
		"GPU_QUOTA": "the usage history records each project's deserved quota, not the department's own; read the department's quota now " +
			"at /api/v1/org-unit/departments/{id}, or each of its projects' GPU_QUOTA over time",
		"CPU_QUOTA_MILLICORES": notRecordedCPU, "CPU_MEMORY_QUOTA_MB": notRecordedCPU, "CPU_ALLOCATION_MILLICORES": notRecordedCPU,
		"CPU_MEMORY_ALLOCATION_MB": notRecordedCPU, "GPU_MEMORY_UTILIZATION": notRecordedDevices,
	}}
	clusterMetricTypes = metricTypes{served: []string{"TOTAL_GPU", "GPU_QUOTA", "ALLOCATED_GPU", "UNALLOCATED_GPU"}, unserved: map[string]string{
		"TOTAL_GPU_NODES":              "the usage history records each node pool's GPUs, not its nodes",
		"GPU_UTILIZATION":              notRecordedDevices,
		"GPU_UTILIZATION_DISTRIBUTION": notRecordedDevices,
		"GPU_MEMORY_UTILIZATION":       notRecordedDevices,
		"CPU_UTILIZATION":              notRecordedCPU,
		"CPU_MEMORY_UTILIZATION":       notRecordedCPU,
		"AVG_WORKLOAD_WAIT_TIME":       "the usage history records GPUs, not workloads; the workload list answers how long each waited",
		"WORKLOADS_COUNT":              "the usage history records GPUs, not workloads; /api/v1/workloads/count counts them now",
	}}
)

// capacityTypes are figures of node pools, not of projects: they cannot be grouped by project.
var capacityTypes = []string{"TOTAL_GPU", "UNALLOCATED_GPU"}

// runAIMeasurement is Run:ai's MeasurementResponse (and GroupedMeasurementResponse with groups).
type runAIMeasurement struct {
	Type   string             `json:"type"`
	Labels map[string]string  `json:"labels,omitempty"`
	Values []runAIMetricValue `json:"values"`
	Groups []runAIGroup       `json:"groups,omitempty"`
}

type runAIMetricValue struct {
	Value     string    `json:"value"`
	Timestamp time.Time `json:"timestamp"`
}

type runAIGroup struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type runAIMetrics struct {
	Measurements []runAIMeasurement `json:"measurements"`
}

// bucketFigures are one bucket's figures summed over the points of one group.
type bucketFigures struct {
	allocated, deserved, capacity float64
}

// usageBuckets are figures by group and bucket start; recorded are the buckets the history
// holds a recording of for the pools asked about.
type usageBuckets struct {
	groups   map[string]map[time.Time]*bucketFigures
	order    []string // the groups, as first met
	recorded []time.Time
}

func newUsageBuckets() *usageBuckets {
	return &usageBuckets{groups: map[string]map[time.Time]*bucketFigures{}}
}

func (b *usageBuckets) at(group string, at time.Time) *bucketFigures {
	g, ok := b.groups[group]
	if !ok {
		g = map[time.Time]*bucketFigures{}
		b.groups[group] = g
		b.order = append(b.order, group)
	}
	f, ok := g[at]
	if !ok {
		f = &bucketFigures{}
		g[at] = f
	}
	return f
}

// add sums the points keep selects into their group (groupOf; "" for one series) and the
// pools' capacity into theirs (poolGroup; nil: capacity is not asked for).
func (b *usageBuckets) add(points []store.UsagePoint, capacity []store.PoolCapacityPoint, keep func(store.UsagePoint) bool,
	groupOf func(store.UsagePoint) string, poolGroup func(pool string) string) {
	seen := map[time.Time]bool{}
	for _, c := range capacity {
		at := c.At.UTC()
		seen[at] = true
		if poolGroup != nil {
			b.at(poolGroup(c.NodePool), at).capacity += c.GPUs
		}
	}
	for _, p := range points {
		if !keep(p) {
			continue
		}
		at := p.At.UTC()
		seen[at] = true
		f := b.at(groupOf(p), at)
		f.allocated += p.NonPreemptible + p.Preemptible + p.Borrowed
		f.deserved += p.Deserved
	}
	for at := range seen {
		b.recorded = append(b.recorded, at)
	}
	slices.SortFunc(b.recorded, func(a, c time.Time) int { return a.Compare(c) })
}

// metricValue is metric type t of f.
func metricValue(t string, f bucketFigures) float64 {
	switch t {
	case "GPU_ALLOCATION", "ALLOCATED_GPU":
		return f.allocated
	case "GPU_QUOTA":
		return f.deserved
	case "TOTAL_GPU":
		return f.capacity
	case "UNALLOCATED_GPU":
		return max(f.capacity-f.allocated, 0)
	}
	return 0
}

// measurements are one measurement per type and group, a value at every recorded bucket.
// groupKey names the grouping (Run:ai's groupBy); "" answers ungrouped measurements.
func (b *usageBuckets) measurements(types []string, groupKey string) []runAIMeasurement {
	out := []runAIMeasurement{}
	groups := b.order
	if len(groups) == 0 && groupKey == "" {
		groups = []string{""}
	}
	slices.Sort(groups)
	for _, t := range types {
		for _, g := range groups {
			m := runAIMeasurement{Type: t, Values: make([]runAIMetricValue, 0, len(b.recorded))}
			if groupKey != "" {
				m.Groups = []runAIGroup{{Key: groupKey, Value: g}}
			}
			for _, at := range b.recorded {
				var f bucketFigures
				if got := b.groups[g][at]; got != nil {
					f = *got
				}
				m.Values = append(m.Values, runAIMetricValue{Value: figure(metricValue(t, f)), Timestamp: at})
			}
			out = append(out, m)
		}
	}
	return out
}

func everyPoint(store.UsagePoint) bool    { return true }
func oneSeries(store.UsagePoint) string   { return "" }
func oneSeriesOfPools(pool string) string { return "" }

// series reads the history for w, the pools and projects given (empty: all).
func (h *usageMetrics) series(c echo.Context, w usageWindow, pools []string, projects []uuid.UUID) ([]store.UsagePoint, []store.PoolCapacityPoint, error) {
	return h.read(c, w, func(ctx context.Context, from time.Time, step time.Duration) ([]store.UsagePoint, []store.PoolCapacityPoint, error) {
		return h.usage.UsageSeries(ctx, store.UsageQuery{From: from, To: w.End, Step: step, NodePools: pools, ProjectIDs: projects})
	})
}

// departmentSeries reads a department's totals for w (the roll-ups keep them summed, so a
// department's metrics read one row a bucket and pool, not each of its projects'), as points
// of the department and the pools' capacity.
func (h *usageMetrics) departmentSeries(c echo.Context, w usageWindow, pools []string, department uuid.UUID) ([]store.UsagePoint, []store.PoolCapacityPoint, error) {
	return h.read(c, w, func(ctx context.Context, from time.Time, step time.Duration) ([]store.UsagePoint, []store.PoolCapacityPoint, error) {
		depts, totals, err := h.usage.DepartmentUsageSeries(ctx, store.UsageTotalsQuery{From: from, To: w.End, Step: step, NodePools: pools,
			DepartmentIDs: []uuid.UUID{department}})
		if err != nil {
			return nil, nil, err
		}
		return departmentPoints(depts), poolCapacity(totals), nil
	})
}

// read checks that the history still holds w's buckets, then reads them with get.
func (h *usageMetrics) read(c echo.Context, w usageWindow,
	get func(ctx context.Context, from time.Time, step time.Duration) ([]store.UsagePoint, []store.PoolCapacityPoint, error)) ([]store.UsagePoint, []store.PoolCapacityPoint, error) {
	if h.usage == nil {
		return nil, nil, errNoUsageHistory
	}
	from, step := w.Buckets()
	fewer := func(coarser time.Duration) string {
		if coarser == 0 {
			return "ask for a later start"
		}
		return fmt.Sprintf("ask for at most %d samples over this period, or a later start", max(int(w.End.Sub(w.Start)/coarser), 1))
	}
	if err := checkReach("numberOfSamples", h.keep, from, step, time.Now(), fewer); err != nil {
		return nil, nil, err
	}
	points, capacity, err := get(c.Request().Context(), from, step)
	return points, capacity, usageStoreError(err, "numberOfSamples", "ask for fewer samples or a longer period")
}

// poolFilter is the nodepoolName query parameter: nil when absent, 404 when no pool has that name.
func (h *usageMetrics) poolFilter(c echo.Context) ([]string, error) {
	name := c.QueryParam("nodepoolName")
	if name == "" {
		return nil, nil
	}
	if err := h.poolExists(c, name); err != nil {
		return nil, err
	}
	return []string{name}, nil
}

func (h *usageMetrics) poolExists(c echo.Context, name string) error {
	if err := checkLength("nodepoolName", name, 253); err != nil {
		return err
	}
	pools, err := h.org.store.NodePools(c.Request().Context(), listquery.Query{SortBy: "name", Limit: 1,
		Filters: []listquery.Filter{{Field: "name", Op: listquery.Eq, Value: name}}})
	if err != nil {
		return err
	}
	if len(pools) == 0 {
		return store.NotFound("node pool %q was not found", name)
	}
	return nil
}

func (h *usageMetrics) projectMetrics(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	p, err := h.org.readableProject(c)(c.Request().Context(), id)
	if err != nil {
		return err
	}
	types, w, pools, err := h.metricsQuery(c, projectMetricTypes)
	if err != nil {
		return err
	}
	points, capacity, err := h.series(c, w, pools, []uuid.UUID{p.ID})
	if err != nil {
		return err
	}
	b := newUsageBuckets()
	b.add(points, capacity, func(u store.UsagePoint) bool { return u.ProjectID == p.ID }, oneSeries, nil)
	return c.JSON(http.StatusOK, runAIMetrics{Measurements: b.measurements(types, "")})
}

// departmentMetrics sums the department's projects as the history recorded them: a project
// counts towards the department it was in at each moment.
func (h *usageMetrics) departmentMetrics(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	d, err := h.org.readableDepartment(c)(c.Request().Context(), id)
	if err != nil {
		return err
	}
	types, w, pools, err := h.metricsQuery(c, departmentMetricTypes)
	if err != nil {
		return err
	}
	points, capacity, err := h.departmentSeries(c, w, pools, d.ID)
	if err != nil {
		return err
	}
	b := newUsageBuckets()
	b.add(points, capacity, func(u store.UsagePoint) bool { return u.DepartmentID == d.ID }, oneSeries, nil)
	return c.JSON(http.StatusOK, runAIMetrics{Measurements: b.measurements(types, "")})
}

// metricsQuery reads metricType, start, end, numberOfSamples and nodepoolName.
func (h *usageMetrics) metricsQuery(c echo.Context, accepted metricTypes) ([]string, usageWindow, []string, error) {
	v := c.QueryParams()
	types, err := accepted.parse(v)
	if err != nil {
		return nil, usageWindow{}, nil, err
	}
	w, err := parseUsageWindow(v)
	if err != nil {
		return nil, w, nil, err
	}
	pools, err := h.poolFilter(c)
	return types, w, pools, err
}

// theClusterMetrics checks the clusterUuid path parameter names this installation's cluster, and that
// the caller may read figures of the whole cluster.
func theClusterMetrics(c echo.Context) error {
	id, err := pathID(c, "clusterUuid")
	if err != nil {
		return err
	}
	if id.String() != clusterID(c) {
		return store.NotFound("cluster %s was not found: this installation is one cluster, %s", id, clusterID(c))
	}
	return authorize(c, auth.Read, auth.System, "read the usage of the whole cluster")
}

// The groupings of the cluster's metrics Arbiter answers; Run:ai's Category is refused.
var clusterGroupings = map[string]func(store.UsagePoint) string{
	"Nodepool":   func(u store.UsagePoint) string { return u.NodePool },
	"Project":    func(u store.UsagePoint) string { return u.ProjectID.String() },
	"Department": func(u store.UsagePoint) string { return u.DepartmentID.String() },
}

func (h *usageMetrics) clusterMetrics(c echo.Context) error {
	if err := theClusterMetrics(c); err != nil {
		return err
	}
	types, w, pools, err := h.metricsQuery(c, clusterMetricTypes)
	if err != nil {
		return err
	}
	groupBy := c.QueryParam("groupBy")
	groupOf, poolGroup := oneSeries, oneSeriesOfPools
	switch groupBy {
	case "":
	case "Category":
		return badField("groupBy", "groupBy Category is not available: the usage history records GPUs per project and node pool, not per workload category; use Nodepool, Project or Department")
	case "Nodepool":
		groupOf, poolGroup = clusterGroupings[groupBy], func(pool string) string { return pool }
	case "Project", "Department":
		for _, t := range types {
			if slices.Contains(capacityTypes, t) {
				return badField("groupBy", "groupBy %s cannot group %s: it is a figure of node pools, not of a %s; group it by Nodepool or not at all", groupBy, t, strings.ToLower(groupBy))
			}
		}
		groupOf, poolGroup = clusterGroupings[groupBy], nil
	default:
		return badField("groupBy", "groupBy %q is not a grouping; use Nodepool, Project or Department", clipText(groupBy))
	}
	points, capacity, err := h.series(c, w, pools, nil)
	if err != nil {
		return err
	}
	b := newUsageBuckets()
	b.add(points, capacity, everyPoint, groupOf, poolGroup)
	return c.JSON(http.StatusOK, runAIMetrics{Measurements: b.measurements(types, groupBy)})
}

func (h *usageMetrics) nodePoolMetrics(c echo.Context) error {
	if err := theClusterMetrics(c); err != nil {
		return err
	}
	pool := c.Param("nodepoolName")
	if err := h.poolExists(c, pool); err != nil {
		return err
	}
	v := c.QueryParams()
	types, err := clusterMetricTypes.parse(v)
	if err != nil {
		return err
	}
	w, err := parseUsageWindow(v)
	if err != nil {
		return err
	}
	points, capacity, err := h.series(c, w, []string{pool}, nil)
	if err != nil {
		return err
	}
	b := newUsageBuckets()
	b.add(points, capacity, func(u store.UsagePoint) bool { return u.NodePool == pool }, oneSeries, oneSeriesOfPools)
	return c.JSON(http.StatusOK, runAIMetrics{Measurements: b.measurements(types, "")})
}
