package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/english"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"k8s.io/utils/ptr"
)

// NoLimit is the quota limit that means "no limit"; DefaultOverQuotaWeight is the weight of a
// quota that gives none (docs/scheduling.md "Quotas and borrowing").
const (
	NoLimit                = -1
	DefaultOverQuotaWeight = 2
)

// Quota is a department's or project's share of one node pool's GPUs (docs/scheduling.md "Quotas and borrowing").
type Quota struct {
	NodePoolID      uuid.UUID `db:"node_pool_id"`
	NodePoolName    string    `db:"node_pool_name"`
	Deserved        int       `db:"deserved_gpus"`
	Limit           int       `db:"limit_gpus"` // NoLimit or ≥ Deserved
	OverQuotaWeight int       `db:"over_quota_weight"`
}

// QuotaInput is one quota of a replaced quota list: the pool by id or by name, the deserved
// GPUs, and optionally the limit (nil: no limit) and over-quota weight (nil: 2).
type QuotaInput struct {
	NodePoolID      *uuid.UUID
	NodePoolName    string
	Deserved        int
	Limit           *int
	OverQuotaWeight *int
}

// Department groups projects; its quotas bound what its projects together deserve.
type Department struct {
	ID           uuid.UUID `db:"id"`
	Name         string    `db:"name"`
	ProjectCount int       `db:"project_count"`
	// PriorityPolicy and PriorityOffset give its queue priority among departments (S25).
	PriorityPolicy string `db:"priority_policy"`
	PriorityOffset int    `db:"priority_offset"`
	dictionaryRange
	Quotas    []Quota   `db:"-"`
	CreatedAt time.Time `db:"created_at"`
	CreatedBy string    `db:"created_by"`
	UpdatedAt time.Time `db:"updated_at"`
	UpdatedBy string    `db:"updated_by"`
}

// DepartmentSpec is the list spec of departments.
var DepartmentSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":          {Kind: listquery.String, Column: "d.name", Sortable: true},
		"createdAt":     {Kind: listquery.Time, Column: "d.created_at", Sortable: true},
		"clusterId":     {Kind: listquery.String, Column: clusterIDColumn, Sortable: true},
		"totalGpuQuota": {Kind: listquery.Int, Column: "(SELECT coalesce(sum(q.deserved_gpus), 0) FROM department_quotas q WHERE q.department_id = d.id)::int", Sortable: true},
	},
	DefaultSort:  "name",
	TieBreak:     "d.id",
	SearchColumn: "d.name",
	Unserved:     notMeasured(map[string]string{"gpuAllocated": liveAllocation}),
}

const departmentSelect = `
	SELECT d.id, d.name, (SELECT count(*) FROM projects p WHERE p.department_id = d.id)::int AS project_count,
	       d.priority_policy, d.priority_offset, ` + dictionaryRangeSQL + `, d.created_at, d.created_by, d.updated_at, d.updated_by
	FROM departments d`

// Departments lists departments with their quotas.
func (s *Store) Departments(ctx context.Context, q listquery.Query) ([]Department, error) {
	return departmentList(ctx, s.pool, q)
}

func departmentList(ctx context.Context, db querier, q listquery.Query) ([]Department, error) {
	var args listquery.Args
	rows, err := db.Query(ctx, departmentSelect+` WHERE `+q.Where(DepartmentSpec, &args)+` ORDER BY `+q.OrderBy(DepartmentSpec), args...)
	ds, err := scanAll[Department](rows, err)
	if err != nil {
		return nil, err
	}
	return ds, attachQuotas(ctx, db, departmentQuotas, ds, func(d *Department) (uuid.UUID, *[]Quota) { return d.ID, &d.Quotas })
}

// Department returns one department with its quotas.
func (s *Store) Department(ctx context.Context, id uuid.UUID) (Department, error) {
	return department(ctx, s.pool, id)
}

func department(ctx context.Context, db querier, id uuid.UUID) (Department, error) {
	rows, err := db.Query(ctx, departmentSelect+` WHERE d.id = $1`, id)
	d, err := scanOne[Department](rows, err, "department "+id.String())
	if err != nil {
		return d, err
	}
	ds := []Department{d}
	err = attachQuotas(ctx, db, departmentQuotas, ds, func(d *Department) (uuid.UUID, *[]Quota) { return d.ID, &d.Quotas })
	return ds[0], err
}

// DepartmentUpdate holds the editable fields of a department; Resources replaces its quotas.
type DepartmentUpdate struct {
	Name           Optional[string]
	Resources      Optional[[]QuotaInput]
	PriorityPolicy Optional[string] // S25; null means the default, fence
	PriorityOffset Optional[int]
}

// CreateDepartment adds a department.
func (s *Store) CreateDepartment(ctx context.Context, u DepartmentUpdate, by Actor) (Department, error) {
	var created Department
	if !u.Name.Set || u.Name.Value == nil {
		return created, InvalidField("name", "a department needs a name")
	}
	id := uuid.New()
	err := s.changeConfig(ctx, "departments", by.entry("create", "department", id.String(), *u.Name.Value), func(tx pgx.Tx, audit *AuditEntry) error {
		if _, err := tx.Exec(ctx, `INSERT INTO departments (id, name, created_by, updated_by) VALUES ($1, $2, $3, $3)`, id, "department-"+id.String(), by.Subject); err != nil {
			return err
		}
		var err error
		created, err = applyDepartmentUpdate(ctx, tx, id, func(Department) (DepartmentUpdate, error) { return u, nil }, by, audit)
		audit.asCreated()
		return err
	})
	return created, err
}

// DepartmentPatch works out a change from the department as it is, read under its row lock
// inside the change's transaction (see ProjectPatch).
type DepartmentPatch func(current Department) (DepartmentUpdate, error)

// UpdateDepartment renames a department or replaces its quotas. Lowering its deserved GPUs in
// a pool below what its projects there deserve together is refused with the numbers.
func (s *Store) UpdateDepartment(ctx context.Context, id uuid.UUID, u DepartmentUpdate, by Actor) (Department, error) {
	return s.PatchDepartment(ctx, id, func(Department) (DepartmentUpdate, error) { return u, nil }, by)
}

// PatchDepartment locks the department's row, reads it, asks patch for the change and makes
// it, with the audit row's "from" values taken from the locked row.
func (s *Store) PatchDepartment(ctx context.Context, id uuid.UUID, patch DepartmentPatch, by Actor) (Department, error) {
	var updated Department
	err := s.changeConfig(ctx, "departments", by.entry("update", "department", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		var err error
		updated, err = applyDepartmentUpdate(ctx, tx, id, patch, by, audit)
		return err
	})
	return updated, err
}

func applyDepartmentUpdate(ctx context.Context, tx pgx.Tx, id uuid.UUID, patch DepartmentPatch, by Actor, audit *AuditEntry) (Department, error) {
	if _, err := lockDepartment(ctx, tx, id); err != nil {
		return Department{}, err
	}
	before, err := department(ctx, tx, id)
	if err != nil {
		return before, err
	}
	u, err := patch(before)
	if err != nil {
		return before, err
	}
	name := before.Name
	if u.Name.Set {
		if u.Name.Value == nil {
			return before, InvalidField("name", "a department's name cannot be null")
		}
		name = *u.Name.Value
		if err := CheckName("department", name); err != nil {
			return before, err
		}
		if err := nameFree(ctx, tx, "departments", "department", name, id); err != nil {
			return before, err
		}
	}
	policy, offset := before.PriorityPolicy, before.PriorityOffset
	setOr(&policy, u.PriorityPolicy, PriorityFence)
	setOr(&offset, u.PriorityOffset, 0)
	if err := checkPriorityPolicy(policy, offset); err != nil {
		return before, err
	}
	if _, err := tx.Exec(ctx, `UPDATE departments SET name = $2, updated_at = now(), updated_by = $3,
		  priority_policy = $4, priority_offset = $5 WHERE id = $1`, id, name, by.Subject, policy, offset); err != nil {
		return before, err
	}
	if u.Resources.Set {
		if err := replaceQuotas(ctx, tx, departmentQuotas, id, ptr.Deref(u.Resources.Value, nil)); err != nil {
			return before, err
		}
		if err := checkDepartmentShare(ctx, tx, id, true); err != nil {
			return before, err
		}
	}
	after, err := department(ctx, tx, id)
	if err != nil {
		return before, err
	}
	audit.EntityName = after.Name
	recordChange(audit.Changes, "name", before.Name, after.Name)
	recordChange(audit.Changes, "resources", QuotaText(before.Quotas), QuotaText(after.Quotas))
	recordChange(audit.Changes, "priorityPolicy", before.PriorityPolicy, after.PriorityPolicy)
	recordChange(audit.Changes, "priorityOffset", before.PriorityOffset, after.PriorityOffset)
	return after, nil
}

// DeleteDepartment removes a department that has no projects (ErrConflict naming them otherwise).
func (s *Store) DeleteDepartment(ctx context.Context, id uuid.UUID, by Actor) error {
	return s.changeConfig(ctx, "departments", by.entry("delete", "department", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		name, err := lockDepartment(ctx, tx, id)
		if err != nil {
			return err
		}
		audit.EntityName = name
		var projects []string
		if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(name ORDER BY name), '{}') FROM projects WHERE department_id = $1`, id).Scan(&projects); err != nil {
			return err
		}
		if len(projects) > 0 {
			return Conflict("department %s has %s (%s); move them to another department or delete them first",
				name, plural(len(projects), "project"), listNames(projects))
		}
		_, err = tx.Exec(ctx, `DELETE FROM departments WHERE id = $1`, id)
		return err
	})
}

// lockDepartment locks a department's row for the transaction, so that concurrent changes to
// it and its projects' quotas are checked one after the other.
func lockDepartment(ctx context.Context, tx pgx.Tx, id uuid.UUID) (string, error) {
	var name string
	err := tx.QueryRow(ctx, `SELECT name FROM departments WHERE id = $1 FOR UPDATE`, id).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", NotFound("department %s was not found", id)
	}
	return name, err
}

// checkDepartmentShare refuses a state in which a department's projects together deserve more
// GPUs in a pool than the department does, saying by how much. departmentChanged chooses the
// sentence: the department's change or a project's change caused it.
func checkDepartmentShare(ctx context.Context, tx pgx.Tx, departmentID uuid.UUID, departmentChanged bool) error {
	var dept, pool string
	var has, projects int64
	err := tx.QueryRow(ctx, `
		SELECT d.name, np.name, coalesce(dq.deserved_gpus, 0), sum(pq.deserved_gpus)
		FROM project_quotas pq
		JOIN projects p ON p.id = pq.project_id
		JOIN departments d ON d.id = p.department_id
		JOIN node_pools np ON np.id = pq.node_pool_id
		LEFT JOIN department_quotas dq ON dq.department_id = d.id AND dq.node_pool_id = pq.node_pool_id
		WHERE d.id = $1
		GROUP BY d.name, np.name, dq.deserved_gpus
		HAVING sum(pq.deserved_gpus) > coalesce(dq.deserved_gpus, 0)
		ORDER BY np.name LIMIT 1`, departmentID).Scan(&dept, &pool, &has, &projects)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if departmentChanged {
		return InvalidField("resources", "department %s would have %d deserved GPUs in pool %s; its projects have %d, %d more; lower the projects' quotas first",
			dept, has, pool, projects, projects-has)
	}
	return InvalidField("resources", "department %s has %d deserved GPUs in pool %s; its projects would have %d, %d more than it has",
		dept, has, pool, projects, projects-has)
}

// quotaTable names the quota table of departments or projects and its owner column.
type quotaTable struct{ table, owner string }

var (
	departmentQuotas = quotaTable{"department_quotas", "department_id"}
	projectQuotas    = quotaTable{"project_quotas", "project_id"}
)

// attachQuotas loads the quotas of every owner in list with one query.
func attachQuotas[T any](ctx context.Context, db querier, t quotaTable, list []T, slot func(*T) (uuid.UUID, *[]Quota)) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(list))
	for i := range list {
		ids[i], _ = slot(&list[i])
	}
	type owned struct {
		OwnerID uuid.UUID `db:"owner_id"`
		Quota
	}
	rows, err := db.Query(ctx, `
		SELECT q.`+t.owner+` AS owner_id, q.node_pool_id, np.name AS node_pool_name, q.deserved_gpus, q.limit_gpus, q.over_quota_weight
		FROM `+t.table+` q JOIN node_pools np ON np.id = q.node_pool_id
		WHERE q.`+t.owner+` = ANY($1) ORDER BY np.name`, ids)
	all, err := scanAll[owned](rows, err)
	if err != nil {
		return err
	}
	byOwner := map[uuid.UUID][]Quota{}
	for _, q := range all {
		byOwner[q.OwnerID] = append(byOwner[q.OwnerID], q.Quota)
	}
	for i := range list {
		id, quotas := slot(&list[i])
		*quotas = byOwner[id]
		if *quotas == nil {
			*quotas = []Quota{}
		}
	}
	return nil
}

// replaceQuotas validates a quota list and makes it the owner's whole list.
func replaceQuotas(ctx context.Context, tx pgx.Tx, t quotaTable, owner uuid.UUID, in []QuotaInput) error {
	seen := map[uuid.UUID]bool{}
	if _, err := tx.Exec(ctx, `DELETE FROM `+t.table+` WHERE `+t.owner+` = $1`, owner); err != nil {
		return err
	}
	for _, q := range in {
		pool, err := resolvePool(ctx, tx, q)
		if err != nil {
			return err
		}
		if seen[pool.ID] {
			return InvalidField("resources", "node pool %s appears more than once in resources; give one quota per pool", pool.Name)
		}
		seen[pool.ID] = true
		limit, weight := NoLimit, DefaultOverQuotaWeight
		if q.Limit != nil {
			limit = *q.Limit
		}
		if q.OverQuotaWeight != nil {
			weight = *q.OverQuotaWeight
		}
		if err := CheckQuota(pool.Name, q.Deserved, limit, weight); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+t.table+` (`+t.owner+`, node_pool_id, deserved_gpus, limit_gpus, over_quota_weight) VALUES ($1, $2, $3, $4, $5)`,
			owner, pool.ID, q.Deserved, limit, weight); err != nil {
			return err
		}
	}
	return nil
}

// CheckQuota applies docs/scheduling.md "Quotas and borrowing" to one pool's numbers.
func CheckQuota(pool string, deserved, limit, weight int) error {
	switch {
	case deserved < 0:
		return InvalidField("resources", "deserved GPUs in pool %s is %d; it must be 0 or more", pool, deserved)
	case limit < NoLimit:
		return InvalidField("resources", "limit in pool %s is %d; use -1 for no limit or a number of GPUs of at least the deserved %d", pool, limit, deserved)
	case limit != NoLimit && limit < deserved:
		return InvalidField("resources", "limit %d GPUs in pool %s is below the deserved %d, by %d; use -1 for no limit or a limit of at least %d", limit, pool, deserved, deserved-limit, deserved)
	case weight < 0:
		return InvalidField("resources", "over-quota weight in pool %s is %d; it must be 0 or more", pool, weight)
	case deserved > MaxQuotaGPUs:
		return InvalidField("resources", "deserved GPUs in pool %s is %d; it may be at most %d", pool, deserved, MaxQuotaGPUs)
	case limit > MaxQuotaGPUs:
		return InvalidField("resources", "limit in pool %s is %d; it may be at most %d GPUs (or -1 for no limit)", pool, limit, MaxQuotaGPUs)
	case weight > MaxOverQuotaWeight:
		return InvalidField("resources", "over-quota weight in pool %s is %d; it may be at most %d", pool, weight, MaxOverQuotaWeight)
	}
	return nil
}

func resolvePool(ctx context.Context, tx pgx.Tx, q QuotaInput) (NodePool, error) {
	switch {
	case q.NodePoolID != nil:
		p, err := nodePool(ctx, tx, *q.NodePoolID)
		if errors.Is(err, ErrNotFound) {
			return p, InvalidField("resources", "nodePool id %s is not a node pool; list them with GET /api/v1/node-pools", q.NodePoolID)
		}
		if err == nil && q.NodePoolName != "" && q.NodePoolName != p.Name {
			return p, InvalidField("resources", "nodePool id %s is pool %s, not %s; give the id or the name", q.NodePoolID, p.Name, q.NodePoolName)
		}
		return p, err
	case q.NodePoolName != "":
		rows, err := tx.Query(ctx, nodePoolSelect+` WHERE np.name = $1`, q.NodePoolName)
		p, err := scanOne[NodePool](rows, err, "node pool "+q.NodePoolName)
		if errors.Is(err, ErrNotFound) {
			return p, InvalidField("resources", "there is no node pool named %s; list them with GET /api/v1/node-pools", q.NodePoolName)
		}
		return p, err
	}
	return NodePool{}, InvalidField("resources", "each quota names its node pool: give nodePool.id or nodePool.name")
}

// QuotaText describes a quota list in one line, for the audit log and CSV downloads.
func QuotaText(qs []Quota) string {
	parts := make([]string, len(qs))
	for i, q := range qs {
		limit := "none"
		if q.Limit != NoLimit {
			limit = fmt.Sprint(q.Limit)
		}
		parts[i] = fmt.Sprintf("%s: deserved %d, limit %s, weight %d", q.NodePoolName, q.Deserved, limit, q.OverQuotaWeight)
	}
	return strings.Join(parts, "; ")
}

var plural = english.Plural
