package store

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Project policy values (scheduling.md S12, S16, S20).
const (
	PreemptOldest   = "oldest"
	PreemptNewest   = "newest"
	ModeTerminate   = "terminate"
	ModeSuspend     = "suspend"
	QueueBestEffort = "best-effort"
	QueueStrict     = "strict"
)

// Policy is a project's scheduling policy (api.md "Policy"); nil priorities mean no default
// and no bound.
type Policy struct {
	DefaultPriorityID   *uuid.UUID `db:"default_priority_id"`
	DefaultPriorityName *string    `db:"default_priority_name"`
	AllowPriorityChange bool       `db:"allow_priority_change"`
	MinPriority         *string    `db:"min_priority"`
	MaxPriority         *string    `db:"max_priority"`
	PreemptionOrder     string     `db:"preemption_order"`
	PreemptionMode      string     `db:"preemption_mode"`
	MinRuntimeSeconds   int        `db:"min_runtime_seconds"`
	Queueing            string     `db:"queueing"`
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
	},
	DefaultSort:  "name",
	TieBreak:     "p.id",
	SearchColumn: "p.name",
	Paged:        true,
}

const projectSelect = `
	SELECT p.id, p.name, p.department_id, d.name AS department_name, ` + namespacesSQL + ` AS namespaces,
	       p.node_pool_ids, p.default_priority_id, dp.name AS default_priority_name, p.allow_priority_change,
	       minp.name AS min_priority, maxp.name AS max_priority, p.preemption_order, p.preemption_mode,
	       p.min_runtime_seconds, p.queueing, p.created_at, p.created_by, p.updated_at, p.updated_by
	FROM projects p
	JOIN departments d ON d.id = p.department_id
	LEFT JOIN workload_priorities dp ON dp.id = p.default_priority_id
	LEFT JOIN workload_priorities minp ON minp.id = p.min_priority_id
	LEFT JOIN workload_priorities maxp ON maxp.id = p.max_priority_id`

// Projects lists one page of projects with their quotas; next is the next page's offset or nil.
func (s *Store) Projects(ctx context.Context, q listquery.Query) (projects []Project, next *int, err error) {
	return projectList(ctx, s.pool, q, true)
}

func projectList(ctx context.Context, db querier, q listquery.Query, paged bool) ([]Project, *int, error) {
	var args listquery.Args
	sql := projectSelect + ` WHERE ` + q.Where(ProjectSpec, &args) + ` ORDER BY ` + q.OrderBy(ProjectSpec)
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

// PolicyUpdate holds the editable policy fields; a nil Value with Set means the default.
type PolicyUpdate struct {
	DefaultPriorityID   Optional[uuid.UUID]
	AllowPriorityChange Optional[bool]
	MinPriority         Optional[string] // a dictionary name
	MaxPriority         Optional[string]
	PreemptionOrder     Optional[string]
	PreemptionMode      Optional[string]
	MinRuntimeSeconds   Optional[int]
	Queueing            Optional[string]
}

// ProjectUpdate holds the editable fields of a project. Namespaces, NodePools (nil Value:
// the default order) and Resources replace the project's lists.
type ProjectUpdate struct {
	Name         Optional[string]
	DepartmentID Optional[uuid.UUID]
	Namespaces   Optional[[]string]
	NodePools    Optional[[]uuid.UUID]
	Resources    Optional[[]QuotaInput]
	Policy       PolicyUpdate
}

// CreateProject adds a project to a department.
func (s *Store) CreateProject(ctx context.Context, u ProjectUpdate, by Actor) (Project, error) {
	var created Project
	if !u.Name.Set || u.Name.Value == nil {
		return created, Invalid("a project needs a name")
	}
	if !u.DepartmentID.Set || u.DepartmentID.Value == nil {
		return created, Invalid("a project needs a departmentId; list the departments with GET /api/v1/org-unit/departments")
	}
	id := uuid.New()
	err := s.changeConfig(ctx, "projects", by.entry("create", "project", id.String(), *u.Name.Value), func(tx pgx.Tx, audit *AuditEntry) error {
		if _, err := projectDepartment(ctx, tx, *u.DepartmentID.Value); err != nil {
			return err
		}
		// A placeholder name unique to the row; the update that follows validates and sets
		// the real one, as for any later change.
		if _, err := tx.Exec(ctx, `INSERT INTO projects (id, name, department_id, created_by, updated_by) VALUES ($1, $2, $3, $4, $4)`,
			id, "project-"+id.String(), *u.DepartmentID.Value, by.Subject); err != nil {
			return err
		}
		var err error
		created, err = applyProjectUpdate(ctx, tx, id, u, by, audit)
		return err
	})
	return created, err
}

// UpdateProject changes a project; its quotas must stay inside its department's (checked
// with the numbers), its namespaces must belong to no other project.
func (s *Store) UpdateProject(ctx context.Context, id uuid.UUID, u ProjectUpdate, by Actor) (Project, error) {
	var updated Project
	err := s.changeConfig(ctx, "projects", by.entry("update", "project", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		var err error
		updated, err = applyProjectUpdate(ctx, tx, id, u, by, audit)
		return err
	})
	return updated, err
}

// ReplaceProjectQuotas makes in the project's whole quota list.
func (s *Store) ReplaceProjectQuotas(ctx context.Context, id uuid.UUID, in []QuotaInput, by Actor) (Project, error) {
	return s.UpdateProject(ctx, id, ProjectUpdate{Resources: Optional[[]QuotaInput]{Set: true, Value: &in}}, by)
}

// projectDepartment locks the department a project is to belong to; an unknown one is bad input.
func projectDepartment(ctx context.Context, tx pgx.Tx, id uuid.UUID) (string, error) {
	name, err := lockDepartment(ctx, tx, id)
	if errors.Is(err, ErrNotFound) {
		return "", Invalid("departmentId %s is not a department; list the departments with GET /api/v1/org-unit/departments", id)
	}
	return name, err
}

func applyProjectUpdate(ctx context.Context, tx pgx.Tx, id uuid.UUID, u ProjectUpdate, by Actor, audit *AuditEntry) (Project, error) {
	before, err := project(ctx, tx, id)
	if err != nil {
		return before, err
	}
	deptID := before.DepartmentID
	if u.DepartmentID.Set {
		if u.DepartmentID.Value == nil {
			return before, Invalid("a project always belongs to a department; departmentId cannot be null")
		}
		deptID = *u.DepartmentID.Value
	}
	if _, err := projectDepartment(ctx, tx, deptID); err != nil {
		return before, err
	}
	name := before.Name
	if u.Name.Set {
		if u.Name.Value == nil {
			return before, Invalid("a project's name cannot be null")
		}
		name = *u.Name.Value
		if err := CheckName("project", name); err != nil {
			return before, err
		}
		if err := nameFree(ctx, tx, "projects", "project", name, id); err != nil {
			return before, err
		}
	}
	pol, err := applyPolicyUpdate(ctx, tx, before.Policy, u.Policy)
	if err != nil {
		return before, err
	}
	poolIDs := before.NodePoolIDs
	if u.NodePools.Set {
		if poolIDs, err = checkNodePoolOrder(ctx, tx, deref0(u.NodePools.Value)); err != nil {
			return before, err
		}
	}
	if _, err := tx.Exec(ctx, `
		UPDATE projects SET name = $2, department_id = $3, node_pool_ids = $4,
		  default_priority_id = $5, allow_priority_change = $6,
		  min_priority_id = (SELECT id FROM workload_priorities WHERE name = $7),
		  max_priority_id = (SELECT id FROM workload_priorities WHERE name = $8),
		  preemption_order = $9, preemption_mode = $10, min_runtime_seconds = $11, queueing = $12,
		  updated_at = now(), updated_by = $13
		WHERE id = $1`,
		id, name, deptID, poolIDs, pol.DefaultPriorityID, pol.AllowPriorityChange, pol.MinPriority, pol.MaxPriority,
		pol.PreemptionOrder, pol.PreemptionMode, pol.MinRuntimeSeconds, pol.Queueing, by.Subject); err != nil {
		return before, err
	}
	if u.Namespaces.Set {
		if err := replaceNamespaces(ctx, tx, id, deref0(u.Namespaces.Value)); err != nil {
			return before, err
		}
	}
	if u.Resources.Set {
		if err := replaceQuotas(ctx, tx, projectQuotas, id, deref0(u.Resources.Value)); err != nil {
			return before, err
		}
	}
	if u.Resources.Set || deptID != before.DepartmentID {
		if err := checkDepartmentShare(ctx, tx, deptID, false); err != nil {
			return before, err
		}
	}
	after, err := project(ctx, tx, id)
	if err != nil {
		return before, err
	}
	audit.EntityName = after.Name
	c := audit.Changes
	recordChange(c, "name", before.Name, after.Name)
	recordChange(c, "department", before.DepartmentName, after.DepartmentName)
	recordChange(c, "namespaces", strings.Join(before.Namespaces, ","), strings.Join(after.Namespaces, ","))
	recordChange(c, "nodePools", poolNames(before.EffectiveNodePools), poolNames(after.EffectiveNodePools))
	recordChange(c, "resources", QuotaText(before.Quotas), QuotaText(after.Quotas))
	recordChange(c, "defaultPriority", before.DefaultPriorityName, after.DefaultPriorityName)
	recordChange(c, "allowPriorityChange", before.AllowPriorityChange, after.AllowPriorityChange)
	recordChange(c, "minPriority", before.MinPriority, after.MinPriority)
	recordChange(c, "maxPriority", before.MaxPriority, after.MaxPriority)
	recordChange(c, "preemptionOrder", before.PreemptionOrder, after.PreemptionOrder)
	recordChange(c, "preemptionMode", before.PreemptionMode, after.PreemptionMode)
	recordChange(c, "minRuntimeSeconds", before.MinRuntimeSeconds, after.MinRuntimeSeconds)
	recordChange(c, "queueing", before.Queueing, after.Queueing)
	return after, nil
}

func poolNames(refs []NodePoolRef) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.Name
	}
	return strings.Join(names, ",")
}

// applyPolicyUpdate returns the policy after u, checked against the priority dictionary.
func applyPolicyUpdate(ctx context.Context, tx pgx.Tx, p Policy, u PolicyUpdate) (Policy, error) {
	prios, err := dictionary(ctx, tx)
	if err != nil {
		return p, err
	}
	if u.DefaultPriorityID.Set {
		p.DefaultPriorityID, p.DefaultPriorityName = u.DefaultPriorityID.Value, nil
		if id := u.DefaultPriorityID.Value; id != nil {
			i := slices.IndexFunc(prios, func(x Priority) bool { return x.ID == *id })
			if i < 0 {
				return p, Invalid("defaultPriorityId %s is not in the priority dictionary; list the priorities with GET /api/v1/workload-priorities", id)
			}
			p.DefaultPriorityName = &prios[i].Name
		}
	}
	setOr(&p.AllowPriorityChange, u.AllowPriorityChange, true)
	for _, bound := range []struct {
		field string
		dst   **string
		u     Optional[string]
	}{{"minPriority", &p.MinPriority, u.MinPriority}, {"maxPriority", &p.MaxPriority, u.MaxPriority}} {
		if !bound.u.Set {
			continue
		}
		*bound.dst = bound.u.Value
		if v := bound.u.Value; v != nil && !slices.ContainsFunc(prios, func(x Priority) bool { return x.Name == *v }) {
			return p, Invalid("%s %q is not in the priority dictionary; use one of: %s (or null for no bound)", bound.field, *v, priorityNames(prios))
		}
	}
	setOr(&p.PreemptionOrder, u.PreemptionOrder, PreemptOldest)
	setOr(&p.PreemptionMode, u.PreemptionMode, ModeTerminate)
	setOr(&p.MinRuntimeSeconds, u.MinRuntimeSeconds, 0)
	setOr(&p.Queueing, u.Queueing, QueueBestEffort)
	return p, checkPolicy(p, prios)
}

func setOr[T any](dst *T, o Optional[T], def T) {
	if !o.Set {
		return
	}
	*dst = def
	if o.Value != nil {
		*dst = *o.Value
	}
}

func checkPolicy(p Policy, prios []Priority) error {
	value := func(name *string) (int, bool) {
		if name == nil {
			return 0, false
		}
		i := slices.IndexFunc(prios, func(x Priority) bool { return x.Name == *name })
		return prios[i].Value, true
	}
	lo, hasLo := value(p.MinPriority)
	hi, hasHi := value(p.MaxPriority)
	def, hasDef := value(p.DefaultPriorityName)
	switch {
	case hasLo && hasHi && lo > hi:
		return Invalid("minPriority %s (%d) is above maxPriority %s (%d); the allowed range would be empty", *p.MinPriority, lo, *p.MaxPriority, hi)
	case hasDef && hasLo && def < lo:
		return Invalid("the default priority %s (%d) is below minPriority %s (%d); raise it or lower the bound", *p.DefaultPriorityName, def, *p.MinPriority, lo)
	case hasDef && hasHi && def > hi:
		return Invalid("the default priority %s (%d) is above maxPriority %s (%d); lower it or raise the bound", *p.DefaultPriorityName, def, *p.MaxPriority, hi)
	case p.PreemptionOrder != PreemptOldest && p.PreemptionOrder != PreemptNewest:
		return Invalid("preemptionOrder %q is not valid; use %q (the earliest started is preempted first) or %q", p.PreemptionOrder, PreemptOldest, PreemptNewest)
	case p.PreemptionMode != ModeTerminate && p.PreemptionMode != ModeSuspend:
		return Invalid("preemptionMode %q is not valid; use %q or %q", p.PreemptionMode, ModeTerminate, ModeSuspend)
	case p.MinRuntimeSeconds < 0:
		return Invalid("minRuntimeSeconds is %d; it must be 0 or more", p.MinRuntimeSeconds)
	case p.Queueing != QueueBestEffort && p.Queueing != QueueStrict:
		return Invalid("queueing %q is not valid; use %q or %q", p.Queueing, QueueBestEffort, QueueStrict)
	}
	return nil
}

func dictionary(ctx context.Context, db querier) ([]Priority, error) {
	rows, err := db.Query(ctx, `SELECT p.* FROM workload_priorities p ORDER BY p.value`)
	return scanAll[Priority](rows, err)
}

func priorityNames(prios []Priority) string {
	names := make([]string, len(prios))
	for i, p := range prios {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// checkNodePoolOrder checks an explicit node-pool order: known pools, each once.
func checkNodePoolOrder(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) ([]uuid.UUID, error) {
	seen := map[uuid.UUID]bool{}
	for _, id := range ids {
		p, err := nodePool(ctx, tx, id)
		if err != nil {
			return nil, Invalid("nodePools names %s, which is not a node pool; list them with GET /api/v1/node-pools", id)
		}
		if seen[id] {
			return nil, Invalid("node pool %s appears more than once in nodePools; list each pool once, in the order to try", p.Name)
		}
		seen[id] = true
	}
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return ids, nil
}

// replaceNamespaces makes list the project's namespaces; each must be a valid namespace name
// that no other project owns.
func replaceNamespaces(ctx context.Context, tx pgx.Tx, id uuid.UUID, list []string) error {
	seen := map[string]bool{}
	for _, ns := range list {
		if len(ns) > 63 || !dnsLabel.MatchString(ns) {
			return Invalid("namespace %q is not a valid Kubernetes namespace name; use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit", ns)
		}
		if seen[ns] {
			return Invalid("namespace %s appears more than once in namespaces", ns)
		}
		seen[ns] = true
	}
	var ns, other string
	err := tx.QueryRow(ctx, `
		SELECT n.namespace, p.name FROM project_namespaces n JOIN projects p ON p.id = n.project_id
		WHERE n.namespace = ANY($1) AND n.project_id <> $2 ORDER BY n.namespace LIMIT 1`, list, id).Scan(&ns, &other)
	if err == nil {
		return Conflict("namespace %s already belongs to project %s; a namespace belongs to at most one project", ns, other)
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM project_namespaces WHERE project_id = $1`, id); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO project_namespaces (namespace, project_id) SELECT unnest($1::text[]), $2`, list, id)
	return err
}

// DeleteProject removes a project with its quotas and namespaces.
func (s *Store) DeleteProject(ctx context.Context, id uuid.UUID, by Actor) error {
	return s.changeConfig(ctx, "projects", by.entry("delete", "project", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		var name string
		if err := tx.QueryRow(ctx, `DELETE FROM projects WHERE id = $1 RETURNING name`, id).Scan(&name); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return NotFound("project %s was not found", id)
			}
			return err
		}
		audit.EntityName = name
		return nil
	})
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
		o.Projects, _, err = projectList(ctx, tx, byName, false)
		return err
	})
	return o, classify(err)
}
