package store

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"k8s.io/utils/ptr"
)

// PolicyUpdate holds the editable policy fields; a nil Value with Set means the default.
type PolicyUpdate struct {
	DefaultPriorityID         Optional[uuid.UUID]
	AllowPriorityChange       Optional[bool]
	AllowPreemptibilityChange Optional[bool]
	MinPriority               Optional[string] // a dictionary name
	MaxPriority               Optional[string]
	PreemptionOrder           Optional[string]
	PreemptionMode            Optional[string]
	MinRuntimeSeconds         Optional[int]
	Queueing                  Optional[string]
	PriorityPolicy            Optional[string]
	PriorityOffset            Optional[int]
	// S27's delays
	ReclaimMinRuntimeSeconds Optional[int]
	PreemptionDelaySeconds   Optional[int]
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
		return created, InvalidField("name", "a project needs a name")
	}
	if !u.DepartmentID.Set || u.DepartmentID.Value == nil {
		return created, InvalidField("departmentId", "a project needs a departmentId; list the departments with GET /api/v1/org-unit/departments")
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
		created, err = applyProjectUpdate(ctx, tx, s.NamespaceRules(), id, constantPatch(u), by, audit)
		audit.asCreated()
		return err
	})
	return created, err
}

// ProjectPatch works out a change from the project as it is: PatchProject calls it inside the
// change's transaction with the project read under its row lock, so that parallel changes
// apply one after the other, each to what the one before left. An error refuses the change
// and is returned as it is (a caller may refuse with its own error, e.g. a role check).
type ProjectPatch func(current Project) (ProjectUpdate, error)

func constantPatch(u ProjectUpdate) ProjectPatch {
	return func(Project) (ProjectUpdate, error) { return u, nil }
}

// UpdateProject changes a project; its quotas must stay inside its department's (checked
// with the numbers), its namespaces must belong to no other project. Fields not set in u
// keep the value they have when the change is made (under the row lock), not when it was
// asked for.
func (s *Store) UpdateProject(ctx context.Context, id uuid.UUID, u ProjectUpdate, by Actor) (Project, error) {
	return s.PatchProject(ctx, id, constantPatch(u), by)
}

// PatchProject locks the project's row, reads it, asks patch for the change and makes it,
// with the audit row's "from" values taken from the locked row.
func (s *Store) PatchProject(ctx context.Context, id uuid.UUID, patch ProjectPatch, by Actor) (Project, error) {
	var updated Project
	err := s.changeConfig(ctx, "projects", by.entry("update", "project", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		var err error
		updated, err = applyProjectUpdate(ctx, tx, s.NamespaceRules(), id, patch, by, audit)
		return err
	})
	return updated, err
}

// lockProject locks a project's row for the transaction (FOR NO KEY UPDATE: parallel changes
// of the project wait for each other, while rows that merely refer to it do not).
func lockProject(ctx context.Context, tx pgx.Tx, id uuid.UUID, forDelete bool) error {
	mode := "NO KEY UPDATE"
	if forDelete {
		mode = "UPDATE"
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM projects WHERE id = $1 FOR `+mode, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return NotFound("project %s was not found", id)
	}
	return err
}

// ReplaceProjectQuotas makes in the project's whole quota list.
func (s *Store) ReplaceProjectQuotas(ctx context.Context, id uuid.UUID, in []QuotaInput, by Actor) (Project, error) {
	return s.UpdateProject(ctx, id, ProjectUpdate{Resources: Optional[[]QuotaInput]{Set: true, Value: &in}}, by)
}

// projectDepartment locks the department a project is to belong to; an unknown one is bad input.
func projectDepartment(ctx context.Context, tx pgx.Tx, id uuid.UUID) (string, error) {
	name, err := lockDepartment(ctx, tx, id)
	if errors.Is(err, ErrNotFound) {
		return "", InvalidField("departmentId", "departmentId %s is not a department; list the departments with GET /api/v1/org-unit/departments", id)
	}
	return name, err
}

// applyProjectUpdate locks the project (before its department: every change of a project
// takes the locks in that order), then applies patch to the locked row.
func applyProjectUpdate(ctx context.Context, tx pgx.Tx, rules NamespaceRules, id uuid.UUID, patch ProjectPatch, by Actor, audit *AuditEntry) (Project, error) {
	if err := lockProject(ctx, tx, id, false); err != nil {
		return Project{}, err
	}
	before, err := project(ctx, tx, id)
	if err != nil {
		return before, err
	}
	u, err := patch(before)
	if err != nil {
		return before, err
	}
	deptID := before.DepartmentID
	if u.DepartmentID.Set {
		if u.DepartmentID.Value == nil {
			return before, InvalidField("departmentId", "a project always belongs to a department; departmentId cannot be null")
		}
		deptID = *u.DepartmentID.Value
	}
	if _, err := projectDepartment(ctx, tx, deptID); err != nil {
		return before, err
	}
	name := before.Name
	if u.Name.Set {
		if u.Name.Value == nil {
			return before, InvalidField("name", "a project's name cannot be null")
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
		if poolIDs, err = checkNodePoolOrder(ctx, tx, ptr.Deref(u.NodePools.Value, nil)); err != nil {
			return before, err
		}
	}
	if _, err := tx.Exec(ctx, `
		UPDATE projects SET name = $2, department_id = $3, node_pool_ids = $4,
		  default_priority_id = $5, allow_priority_change = $6,
		  min_priority_id = (SELECT id FROM workload_priorities WHERE name = $7),
		  max_priority_id = (SELECT id FROM workload_priorities WHERE name = $8),
		  preemption_order = $9, preemption_mode = $10, min_runtime_seconds = $11, queueing = $12,
		  updated_at = now(), updated_by = $13, allow_preemptibility_change = $14, priority_policy = $15, priority_offset = $16,
		  reclaim_min_runtime_seconds = $17, preemption_delay_seconds = $18
		WHERE id = $1`,
		id, name, deptID, poolIDs, pol.DefaultPriorityID, pol.AllowPriorityChange, pol.MinPriority, pol.MaxPriority,
		pol.PreemptionOrder, pol.PreemptionMode, pol.MinRuntimeSeconds, pol.Queueing, by.Subject,
		pol.AllowPreemptibilityChange, pol.PriorityPolicy, pol.PriorityOffset, pol.ReclaimMinRuntimeSeconds, pol.PreemptionDelaySeconds); err != nil {
		return before, err
	}
	if u.Namespaces.Set {
		if err := claimNamespaces(ctx, tx, rules, id, ptr.Deref(u.Namespaces.Value, nil), by); err != nil {
			return before, err
		}
	}
	if u.Resources.Set {
		if err := replaceQuotas(ctx, tx, projectQuotas, id, ptr.Deref(u.Resources.Value, nil)); err != nil {
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
	recordChange(c, "allowPreemptibilityChange", before.AllowPreemptibilityChange, after.AllowPreemptibilityChange)
	recordChange(c, "minPriority", before.MinPriority, after.MinPriority)
	recordChange(c, "maxPriority", before.MaxPriority, after.MaxPriority)
	recordChange(c, "preemptionOrder", before.PreemptionOrder, after.PreemptionOrder)
	recordChange(c, "preemptionMode", before.PreemptionMode, after.PreemptionMode)
	recordChange(c, "minRuntimeSeconds", before.MinRuntimeSeconds, after.MinRuntimeSeconds)
	recordChange(c, "queueing", before.Queueing, after.Queueing)
	recordChange(c, "priorityPolicy", before.PriorityPolicy, after.PriorityPolicy)
	recordChange(c, "priorityOffset", before.PriorityOffset, after.PriorityOffset)
	recordChange(c, "reclaimMinRuntimeSeconds", before.ReclaimMinRuntimeSeconds, after.ReclaimMinRuntimeSeconds)
	recordChange(c, "preemptionDelaySeconds", before.PreemptionDelaySeconds, after.PreemptionDelaySeconds)
	return after, nil
}

func poolNames(refs []NodePoolRef) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.Name
	}
	return strings.Join(names, ",")
}

// checkNodePoolOrder checks an explicit node-pool order: known pools, each once.
func checkNodePoolOrder(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) ([]uuid.UUID, error) {
	seen := map[uuid.UUID]bool{}
	for _, id := range ids {
		p, err := nodePool(ctx, tx, id)
		if err != nil {
			return nil, InvalidField("nodePools", "nodePools names %s, which is not a node pool; list them with GET /api/v1/node-pools", id)
		}
		if seen[id] {
			return nil, InvalidField("nodePools", "node pool %s appears more than once in nodePools; list each pool once, in the order to try", p.Name)
		}
		seen[id] = true
	}
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return ids, nil
}

// DeleteProject removes a project with its quotas and namespaces.
func (s *Store) DeleteProject(ctx context.Context, id uuid.UUID, by Actor) error {
	return s.DeleteProjectIf(ctx, id, nil, by)
}

// DeleteProjectIf removes a project when check (nil: none) accepts it as it is, read under
// the row lock; check's error is returned as it is.
func (s *Store) DeleteProjectIf(ctx context.Context, id uuid.UUID, check func(Project) error, by Actor) error {
	return s.changeConfig(ctx, "projects", by.entry("delete", "project", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		if err := lockProject(ctx, tx, id, true); err != nil {
			return err
		}
		p, err := project(ctx, tx, id)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(p); err != nil {
				return err
			}
		}
		audit.EntityName = p.Name
		_, err = tx.Exec(ctx, `DELETE FROM projects WHERE id = $1`, id)
		return err
	})
}
