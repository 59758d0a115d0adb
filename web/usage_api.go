package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// usageAPI is Arbiter's own usage routes: what Run:ai's metric types lack — the allocation
// split into non-preemptible, in-quota preemptible and borrowed GPUs, pending demand, fair
// share, preemptions and reclaims — per node pool and project, over time (/arbiter/usage) and
// in GPU-hours per UTC day (/arbiter/usage/days). A caller sees the projects they may read (by
// the project's department now); the history of a project since deleted is the system
// readers'. Pool capacity is every signed-in caller's, as node pools are.
type usageAPI struct {
	usage UsageStore
	keep  store.UsageRetention
	org   organization
}

// longerStep says what step reaches further back.
func longerStep(coarser time.Duration) string {
	if coarser == 0 {
		return "ask for a later from"
	}
	return fmt.Sprintf("ask for a step of %s or more, or a later from", strings.TrimSuffix(strings.TrimSuffix(coarser.String(), "0s"), "0m"))
}

func (h *usageAPI) routes(r router) {
	r.api.GET("/arbiter/usage", h.series)
	r.api.GET("/arbiter/usage/days", h.days)
}

// maxUsageRows bounds one answer: a step or filters that would answer more are refused with
// what to change.
const maxUsageRows = 100_000

// defaultUsageBuckets is how many buckets a period is cut into when no step is given.
const defaultUsageBuckets = 200

// usageFilter is the query of both routes: the period, the pools and the projects, and which
// of the history's projects the caller may see.
type usageFilter struct {
	from, to   time.Time
	step       time.Duration
	pools      []string
	projects   []uuid.UUID
	department *uuid.UUID
}

// parseUsageFilter reads from, to, step (a Go duration such as 30s, 5m, 1h; withStep only;
// by default the period's 200th part, at least an hour where only roll-ups reach),
// nodePool and projectId (each repeatable), departmentId.
func parseUsageFilter(v url.Values, withStep bool, keep store.UsageRetention, now time.Time) (usageFilter, error) {
	var f usageFilter
	var err error
	if f.from, f.to, err = parsePeriod("from", v.Get("from"), "to", v.Get("to")); err != nil {
		return f, err
	}
	if withStep {
		f.step = (f.to.Sub(f.from) + defaultUsageBuckets - 1) / defaultUsageBuckets
		// The default must answer: the finest level that still holds the period's start.
		for _, coarser := range []time.Duration{time.Hour, 24 * time.Hour} {
			if checkReach("step", keep, f.from, f.step, now, longerStep) != nil {
				f.step = max(f.step, coarser)
			}
		}
		if raw := v.Get("step"); raw != "" {
			if f.step, err = time.ParseDuration(raw); err != nil || f.step <= 0 {
				return f, badField("step", "step %q is not a positive duration; write it as 30s, 5m, 1h or 24h", clipText(raw))
			}
		}
		f.from, f.step = alignBuckets(f.from, f.step)
	}
	if len(v["nodePool"]) > 100 || len(v["projectId"]) > 1000 {
		return f, badRequest("name at most 100 node pools and 1,000 projects; leave them out for all")
	}
	for _, p := range v["nodePool"] {
		if err := checkLength("nodePool", p, 253); err != nil {
			return f, err
		}
		if p == "" {
			return f, badField("nodePool", "nodePool is empty; name a node pool, or leave the parameter out for all")
		}
		f.pools = append(f.pools, p)
	}
	for _, raw := range v["projectId"] {
		id, err := uuid.Parse(raw)
		if err != nil || len(raw) != 36 {
			return f, badField("projectId", "projectId %q is not a project's id; ids are UUIDs such as 6723b9d7-73d1-5e4c-a494-d8fdeddc541c", clipText(raw))
		}
		f.projects = append(f.projects, id)
	}
	if raw := v.Get("departmentId"); raw != "" {
		id, err := uuid.Parse(raw)
		if err != nil || len(raw) != 36 {
			return f, badField("departmentId", "departmentId %q is not a department's id; ids are UUIDs such as 6723b9d7-73d1-5e4c-a494-d8fdeddc541c", clipText(raw))
		}
		f.department = &id
	}
	return f, nil
}

// visibility says which of the history's projects the caller may see: every one for a
// system reader; else those the caller may read now.
type visibility struct {
	all      bool
	readable map[uuid.UUID]bool
}

func (v visibility) sees(project uuid.UUID) bool { return v.all || v.readable[project] }

// narrow is the projects to ask the store for: those named, else those the caller may read
// (nil, every project, for a system reader or one who may read none: the rows are filtered by
// sees either way).
func (v visibility) narrow(named []uuid.UUID) []uuid.UUID {
	if len(named) > 0 || v.all {
		return named
	}
	out := make([]uuid.UUID, 0, len(v.readable))
	for id := range v.readable {
		out = append(out, id)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// authorizeFilter checks the named projects and department (404 for one the caller may not
// read, as for one that does not exist) and says which projects the caller sees.
func (h *usageAPI) authorizeFilter(c echo.Context, f usageFilter) (visibility, error) {
	if !identity(c).Authenticated() {
		return visibility{}, unauthorized("sign in to read usage over time")
	}
	ctx := c.Request().Context()
	if f.department != nil {
		if _, err := h.org.readableDepartment(c)(ctx, *f.department); err != nil {
			return visibility{}, err
		}
	}
	if can(c, auth.Read, auth.System) {
		return visibility{all: true}, nil
	}
	vis := visibility{readable: map[uuid.UUID]bool{}}
	refs, err := h.org.store.ProjectRefs(ctx)
	if err != nil {
		return vis, err
	}
	for _, p := range refs {
		if can(c, auth.Read, auth.Project(p.ID.String(), p.DepartmentID.String())) {
			vis.readable[p.ID] = true
		}
	}
	for _, id := range f.projects {
		if !vis.readable[id] {
			return vis, projectNotFound(id)
		}
	}
	return vis, nil
}

// keep says whether the history's row of project in department answers the filter for the caller.
func (f usageFilter) keep(vis visibility, project, department uuid.UUID) bool {
	return vis.sees(project) && (f.department == nil || *f.department == department)
}

// usagePointView is one bucket of one project in one pool.
type usagePointView struct {
	At              time.Time `json:"at"`
	NodePool        string    `json:"nodePool"`
	ProjectID       uuid.UUID `json:"projectId"`
	DepartmentID    uuid.UUID `json:"departmentId"`
	Allocated       float64   `json:"allocated"`
	NonPreemptible  float64   `json:"nonPreemptible"`
	Preemptible     float64   `json:"preemptible"`
	Borrowed        float64   `json:"borrowed"`
	Pending         float64   `json:"pending"`
	Deserved        float64   `json:"deserved"`
	FairShare       float64   `json:"fairShare"`
	Preemptions     int       `json:"preemptions"`
	Reclaims        int       `json:"reclaims"`
	RecordedSeconds float64   `json:"recordedSeconds"`
}

type poolCapacityView struct {
	At              time.Time `json:"at"`
	NodePool        string    `json:"nodePool"`
	GPUs            float64   `json:"gpus"`
	RecordedSeconds float64   `json:"recordedSeconds"`
}

type usageSeriesView struct {
	From        time.Time          `json:"from"`
	To          time.Time          `json:"to"`
	StepSeconds float64            `json:"stepSeconds"`
	Projects    []usagePointView   `json:"projects"`
	Capacity    []poolCapacityView `json:"capacity"`
}

func tooManyRows(n int) error {
	return badField("step", "the answer would hold %d rows, over the %d one answer may; ask for a longer step, a shorter period, or fewer node pools or projects", n, maxUsageRows)
}

func (h *usageAPI) series(c echo.Context) error {
	f, err := parseUsageFilter(c.QueryParams(), true, h.keep, time.Now())
	if err != nil {
		return err
	}
	vis, err := h.authorizeFilter(c, f)
	if err != nil {
		return err
	}
	if h.usage == nil {
		return errNoUsageHistory
	}
	if err := checkReach("step", h.keep, f.from, f.step, time.Now(), longerStep); err != nil {
		return err
	}
	points, capacity, err := h.usage.UsageSeries(c.Request().Context(), store.UsageQuery{From: f.from, To: f.to, Step: f.step, NodePools: f.pools, ProjectIDs: vis.narrow(f.projects)})
	if err != nil {
		return usageStoreError(err, "step", "ask for a longer step or a shorter period")
	}
	out := usageSeriesView{From: f.from, To: f.to, StepSeconds: f.step.Seconds(), Projects: []usagePointView{}, Capacity: make([]poolCapacityView, 0, len(capacity))}
	for _, p := range points {
		if !f.keep(vis, p.ProjectID, p.DepartmentID) {
			continue
		}
		if len(out.Projects) == maxUsageRows {
			return tooManyRows(len(points))
		}
		out.Projects = append(out.Projects, usagePointView{At: p.At.UTC(), NodePool: p.NodePool, ProjectID: p.ProjectID, DepartmentID: p.DepartmentID,
			Allocated: p.NonPreemptible + p.Preemptible + p.Borrowed, NonPreemptible: p.NonPreemptible, Preemptible: p.Preemptible,
			Borrowed: p.Borrowed, Pending: p.Pending, Deserved: p.Deserved, FairShare: p.FairShare, Preemptions: p.Preemptions,
			Reclaims: p.Reclaims, RecordedSeconds: p.RecordedSeconds})
	}
	for _, p := range capacity {
		out.Capacity = append(out.Capacity, poolCapacityView{At: p.At.UTC(), NodePool: p.NodePool, GPUs: p.GPUs, RecordedSeconds: p.RecordedSeconds})
	}
	return c.JSON(http.StatusOK, out)
}

// usageDayView is one project's GPU-hours in one pool on one UTC day.
type usageDayView struct {
	Day                    string    `json:"day"` // YYYY-MM-DD, UTC
	NodePool               string    `json:"nodePool"`
	ProjectID              uuid.UUID `json:"projectId"`
	DepartmentID           uuid.UUID `json:"departmentId"`
	AllocatedGPUHours      float64   `json:"allocatedGpuHours"`
	NonPreemptibleGPUHours float64   `json:"nonPreemptibleGpuHours"`
	BorrowedGPUHours       float64   `json:"borrowedGpuHours"`
	PendingGPUHours        float64   `json:"pendingGpuHours"`
	DeservedGPUHours       float64   `json:"deservedGpuHours"`
	FairShareGPUHours      float64   `json:"fairShareGpuHours"`
	Preemptions            int       `json:"preemptions"`
	Reclaims               int       `json:"reclaims"`
}

func (h *usageAPI) days(c echo.Context) error {
	v := c.QueryParams()
	if v.Has("step") {
		return badField("step", "step is not a parameter of daily usage: its rows are whole UTC days")
	}
	f, err := parseUsageFilter(v, false, h.keep, time.Now())
	if err != nil {
		return err
	}
	vis, err := h.authorizeFilter(c, f)
	if err != nil {
		return err
	}
	if h.usage == nil {
		return errNoUsageHistory
	}
	days, err := h.usage.UsageDays(c.Request().Context(), f.from, f.to, f.pools, vis.narrow(f.projects))
	if err != nil {
		return usageStoreError(err, "from", "give a period the history can answer")
	}
	out := struct {
		From time.Time      `json:"from"`
		To   time.Time      `json:"to"`
		Days []usageDayView `json:"days"`
	}{From: f.from, To: f.to, Days: []usageDayView{}}
	for _, d := range days {
		if !f.keep(vis, d.ProjectID, d.DepartmentID) {
			continue
		}
		if len(out.Days) == maxUsageRows {
			return badField("from", "the answer would hold %d rows, over the %d one answer may; ask for a shorter period, or fewer node pools or projects", len(days), maxUsageRows)
		}
		out.Days = append(out.Days, usageDayView{Day: d.Day.UTC().Format(time.DateOnly), NodePool: d.NodePool, ProjectID: d.ProjectID,
			DepartmentID: d.DepartmentID, AllocatedGPUHours: d.AllocatedGPUHours, NonPreemptibleGPUHours: d.NonPreemptibleGPUHours,
			BorrowedGPUHours: d.BorrowedGPUHours, PendingGPUHours: d.PendingGPUHours, DeservedGPUHours: d.DeservedGPUHours,
			FairShareGPUHours: d.FairShareGPUHours, Preemptions: d.Preemptions, Reclaims: d.Reclaims})
	}
	return c.JSON(http.StatusOK, out)
}
