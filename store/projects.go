package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Project policy values (docs/rules.md S12, S16, S20).
const (
	PreemptOldest   = "oldest"
	PreemptNewest   = "newest"
	ModeTerminate   = "terminate"
	ModeSuspend     = "suspend"
	QueueBestEffort = "best-effort"
	QueueStrict     = "strict"
	// PriorityFence and PriorityOpen are a department's or project's priorityPolicy (S25).
	PriorityFence = "fence"
	PriorityOpen  = "open"
)

// Policy is a project's scheduling policy (the OpenAPI schema Policy); nil priorities mean no default
// and no bound.
type Policy struct {
	DefaultPriorityID   *uuid.UUID `db:"default_priority_id"`
	DefaultPriorityName *string    `db:"default_priority_name"`
	AllowPriorityChange bool       `db:"allow_priority_change"`
	// AllowPreemptibilityChange false makes the API refuse, and the scheduler ignore, a
	// preemptibility set on a workload: the type's or category's default applies (S8).
	AllowPreemptibilityChange bool    `db:"allow_preemptibility_change"`
	MinPriority               *string `db:"min_priority"`
	MaxPriority               *string `db:"max_priority"`
	PreemptionOrder           string  `db:"preemption_order"`
	PreemptionMode            string  `db:"preemption_mode"`
	MinRuntimeSeconds         int     `db:"min_runtime_seconds"`
	Queueing                  string  `db:"queueing"`
	// PriorityPolicy and PriorityOffset give the project's queue priority among its
	// department's projects (S25).
	PriorityPolicy string `db:"priority_policy"`
	PriorityOffset int    `db:"priority_offset"`
	// ReclaimMinRuntimeSeconds and PreemptionDelaySeconds are S27's delays.
	ReclaimMinRuntimeSeconds int `db:"reclaim_min_runtime_seconds"`
	PreemptionDelaySeconds   int `db:"preemption_delay_seconds"`
}

// NodePoolRef names a node pool.
type NodePoolRef struct {
	ID   uuid.UUID
	Name string
}

// Project is the unit of quota and queueing: it owns namespaces, has quotas per node pool
// inside its department's, a policy, and an order of node pools to try (S21).
type Project struct {
	ID             uuid.UUID `db:"id"`
	Name           string    `db:"name"`
	DepartmentID   uuid.UUID `db:"department_id"`
	DepartmentName string    `db:"department_name"`
	Namespaces     []string  `db:"namespaces"`
	// NodePoolIDs is the order set for the project; empty means the default order.
	NodePoolIDs []uuid.UUID `db:"node_pool_ids"`
	Policy
	dictionaryRange
	Quotas []Quota `db:"-"`
	// EffectiveNodePools is the order that applies: NodePoolIDs, or else the pools the project
	// has quota in (most deserved GPUs first, then by name) followed by default.
	EffectiveNodePools []NodePoolRef `db:"-"`
	CreatedAt          time.Time     `db:"created_at"`
	CreatedBy          string        `db:"created_by"`
	UpdatedAt          time.Time     `db:"updated_at"`
	UpdatedBy          string        `db:"updated_by"`
}

const namespacesSQL = `coalesce((SELECT array_agg(n.namespace ORDER BY n.namespace) FROM project_namespaces n WHERE n.project_id = p.id), '{}')`

// ProjectSpec is the list spec of projects (paged).
var ProjectSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":           {Kind: listquery.String, Column: "p.name", Sortable: true},
		"departmentName": {Kind: listquery.String, Column: "d.name", Sortable: true},
		"departmentId":   {Kind: listquery.String, Column: "p.department_id::text"},
		"namespaces":     {Kind: listquery.String, Column: "array_to_string(" + namespacesSQL + ", ',')"},
		"createdAt":      {Kind: listquery.Time, Column: "p.created_at", Sortable: true},
		// Run:ai's names: the department is the project's parent.
		"parentId":      {Kind: listquery.String, Column: "p.department_id::text"},
		"parentName":    {Kind: listquery.String, Column: "d.name", Sortable: true},
		"clusterId":     {Kind: listquery.String, Column: clusterIDColumn, Sortable: true},
		"totalGpuQuota": {Kind: listquery.Int, Column: "(SELECT coalesce(sum(q.deserved_gpus), 0) FROM project_quotas q WHERE q.project_id = p.id)::int", Sortable: true},
	},
	DefaultSort:  "name",
	TieBreak:     "p.id",
	SearchColumn: "p.name",
	Paged:        true,
	Unserved: notMeasured(map[string]string{
		"phase":        "an Arbiter project has no phase: it is ready once created",
		"gpuAllocated": liveAllocation,
	}),
}

const projectSelect = `
	SELECT p.id, p.name, p.department_id, d.name AS department_name, ` + namespacesSQL + ` AS namespaces,
	       p.node_pool_ids, p.default_priority_id, dp.name AS default_priority_name, p.allow_priority_change, p.allow_preemptibility_change,
	       minp.name AS min_priority, maxp.name AS max_priority, p.preemption_order, p.preemption_mode,
	       p.min_runtime_seconds, p.queueing, p.priority_policy, p.priority_offset,
	       p.reclaim_min_runtime_seconds, p.preemption_delay_seconds, ` + dictionaryRangeSQL + `, p.created_at, p.created_by, p.updated_at, p.updated_by
	FROM projects p
	JOIN departments d ON d.id = p.department_id
	LEFT JOIN workload_priorities dp ON dp.id = p.default_priority_id
	LEFT JOIN workload_priorities minp ON minp.id = p.min_priority_id
	LEFT JOIN workload_priorities maxp ON maxp.id = p.max_priority_id`

// Projects lists one page of projects with their quotas; next is the next page's offset or nil.
func (s *Store) Projects(ctx context.Context, q listquery.Query) (projects []Project, next *int, err error) {
	return projectList(ctx, s.pool, q, true, ProjectScope{All: true})
}

// ProjectScope narrows a project list to what a caller may see: every project (All), or those
// with the listed ids.
type ProjectScope struct {
	All bool
	IDs []uuid.UUID
}

// VisibleProjects lists one page of the projects in scope. The scope is part of the query, so
// pages and the next offset count only those projects.
func (s *Store) VisibleProjects(ctx context.Context, q listquery.Query, scope ProjectScope) ([]Project, *int, error) {
	return projectList(ctx, s.pool, q, true, scope)
}

// CountVisibleProjects counts the projects in scope that q's filters and search match, all
// pages of VisibleProjects: the same rows, counted.
func (s *Store) CountVisibleProjects(ctx context.Context, q listquery.Query, scope ProjectScope) (int, error) {
	var args listquery.Args
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (`+projectSelect+` WHERE `+visibleProjectsWhere(q, scope, &args)+`) visible`, args...).Scan(&n)
	return n, err
}

// visibleProjectsWhere is the WHERE clause of the projects a query and a scope show.
func visibleProjectsWhere(q listquery.Query, scope ProjectScope, args *listquery.Args) string {
	where := q.Where(ProjectSpec, args)
	if !scope.All {
		ids := scope.IDs
		if ids == nil {
			ids = []uuid.UUID{}
		}
		where += ` AND p.id = ANY(` + args.Add(ids) + `)`
	}
	return where
}

func projectList(ctx context.Context, db querier, q listquery.Query, paged bool, scope ProjectScope) ([]Project, *int, error) {
	var args listquery.Args
	sql := projectSelect + ` WHERE ` + visibleProjectsWhere(q, scope, &args) + ` ORDER BY ` + q.OrderBy(ProjectSpec)
	if paged {
		sql += ` ` + q.Page(&args)
	}
	rows, err := db.Query(ctx, sql, args...)
	ps, err := scanAll[Project](rows, err)
	if err != nil {
		return nil, nil, err
	}
	var next *int
	if paged {
		ps, next = listquery.Next(q, ps)
	}
	return ps, next, completeProjects(ctx, db, ps)
}

// Project returns one project with its quotas.
func (s *Store) Project(ctx context.Context, id uuid.UUID) (Project, error) {
	return project(ctx, s.pool, id)
}

func project(ctx context.Context, db querier, id uuid.UUID) (Project, error) {
	return projectWhere(ctx, db, `p.id = $1`, id, "project "+id.String())
}

// projectWhere returns the one project matching cond (with its one argument), completed.
func projectWhere(ctx context.Context, db querier, cond string, arg any, what string) (Project, error) {
	rows, err := db.Query(ctx, projectSelect+` WHERE `+cond, arg)
	p, err := scanOne[Project](rows, err, what)
	if err != nil {
		return p, err
	}
	ps := []Project{p}
	err = completeProjects(ctx, db, ps)
	return ps[0], err
}

// completeProjects loads the projects' quotas and works out their node-pool order.
func completeProjects(ctx context.Context, db querier, ps []Project) error {
	if err := attachQuotas(ctx, db, projectQuotas, ps, func(p *Project) (uuid.UUID, *[]Quota) { return p.ID, &p.Quotas }); err != nil {
		return err
	}
	if len(ps) == 0 {
		return nil
	}
	pools, err := nodePoolList(ctx, db, listquery.Query{SortBy: "name"})
	if err != nil {
		return err
	}
	for i := range ps {
		ps[i].EffectiveNodePools = effectiveNodePools(ps[i], pools)
	}
	return nil
}

func effectiveNodePools(p Project, pools []NodePool) []NodePoolRef {
	names := map[uuid.UUID]string{}
	for _, np := range pools {
		names[np.ID] = np.Name
	}
	out := []NodePoolRef{}
	if len(p.NodePoolIDs) > 0 {
		for _, id := range p.NodePoolIDs {
			if name, ok := names[id]; ok {
				out = append(out, NodePoolRef{ID: id, Name: name})
			}
		}
		return out
	}
	quotas := slices.Clone(p.Quotas)
	slices.SortStableFunc(quotas, func(a, b Quota) int {
		return cmp.Or(cmp.Compare(b.Deserved, a.Deserved), strings.Compare(a.NodePoolName, b.NodePoolName))
	})
	for _, q := range quotas {
		out = append(out, NodePoolRef{ID: q.NodePoolID, Name: q.NodePoolName})
	}
	if !slices.ContainsFunc(out, func(r NodePoolRef) bool { return r.ID == DefaultNodePoolID }) {
		out = append(out, NodePoolRef{ID: DefaultNodePoolID, Name: names[DefaultNodePoolID]})
	}
	return out
}

// Organization is everything the scheduler needs to know about who may use what: every node
// pool, every department and every project with quotas, policy and node-pool order.
type Organization struct {
	NodePools   []NodePool
	Departments []Department
	Projects    []Project
}

// OrganizationSnapshot reads the whole organization in one consistent read-only transaction;
// the scheduler loads it at start and again whenever a configuration change is announced
// (OnConfigChange in process, NOTIFY on ConfigChannel for other replicas).
func (s *Store) OrganizationSnapshot(ctx context.Context) (Organization, error) {
	var o Organization
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		byName := listquery.Query{SortBy: "name"}
		if o.NodePools, err = nodePoolList(ctx, tx, byName); err != nil {
			return err
		}
		if o.Departments, err = departmentList(ctx, tx, byName); err != nil {
			return err
		}
		o.Projects, _, err = projectList(ctx, tx, byName, false, ProjectScope{All: true})
		return err
	})
	return o, classify(err)
}
