package store

import (
	"context"
	"strconv"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Preemptibility values (docs/scheduling.md "The words").
const (
	Preemptible    = "preemptible"
	NonPreemptible = "non-preemptible"
	// SemiPreemptible: the gang minimum is non-preemptible, replicas beyond it preemptible (S26).
	SemiPreemptible = "semi-preemptible"
)

// Priority is an entry of the priority dictionary.
type Priority struct {
	ID        uuid.UUID `db:"id"`
	Name      string    `db:"name"`
	Value     int       `db:"value"`
	Source    string    `db:"source"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// Category is a workload category with its defaults.
type Category struct {
	ID                    uuid.UUID `db:"id"`
	Name                  string    `db:"name"`
	Description           string    `db:"description"`
	DefaultPriorityID     uuid.UUID `db:"default_priority_id"`
	DefaultPriorityName   string    `db:"default_priority_name"`
	DefaultPreemptibility string    `db:"default_preemptibility"`
	CreatedAt             time.Time `db:"created_at"`
	CreatedBy             string    `db:"created_by"`
	UpdatedAt             time.Time `db:"updated_at"`
	UpdatedBy             string    `db:"updated_by"`
}

// WorkloadType is a workload type with its own settings (null = the category's default) and
// the values that apply after defaults are resolved.
type WorkloadType struct {
	ID                      uuid.UUID  `db:"id"`
	Name                    string     `db:"name"`
	Group                   string     `db:"group"`
	External                bool       `db:"external"`
	CategoryID              *uuid.UUID `db:"category_id"`
	CategoryName            *string    `db:"category_name"`
	PriorityID              *uuid.UUID `db:"priority_id"`
	PriorityName            *string    `db:"priority_name"`
	Preemptibility          *string    `db:"preemptibility"`
	EffectivePriorityID     uuid.UUID  `db:"effective_priority_id"`
	EffectivePriorityName   string     `db:"effective_priority_name"`
	EffectivePriorityValue  int        `db:"effective_priority_value"`
	EffectivePreemptibility string     `db:"effective_preemptibility"`
	GangPolicy              string     `db:"gang_policy"`
	CreatedAt               time.Time  `db:"created_at"`
	CreatedBy               string     `db:"created_by"`
	UpdatedAt               time.Time  `db:"updated_at"`
	UpdatedBy               string     `db:"updated_by"`
}

// PrioritySpec, CategorySpec and WorkloadTypeSpec are the list specs of the three lists.
var PrioritySpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":  {Kind: listquery.String, Column: "p.name", Sortable: true},
		"value": {Kind: listquery.Int, Column: "p.value", Sortable: true},
	},
	DefaultSort:  "value",
	TieBreak:     "p.id",
	SearchColumn: "p.name",
}

var CategorySpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":                  {Kind: listquery.String, Column: "c.name", Sortable: true},
		"defaultPriorityName":   {Kind: listquery.String, Column: "dp.name", Sortable: true},
		"defaultPreemptibility": {Kind: listquery.String, Column: "c.default_preemptibility", Sortable: true},
	},
	DefaultSort:  "name",
	TieBreak:     "c.id",
	SearchColumn: "c.name",
}

var WorkloadTypeSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":                    {Kind: listquery.String, Column: "t.name", Sortable: true},
		"group":                   {Kind: listquery.String, Column: `t."group"`, Sortable: true},
		"categoryName":            {Kind: listquery.String, Column: "c.name", Sortable: true, Nullable: true},
		"priorityName":            {Kind: listquery.String, Column: "tp.name", Sortable: true, Nullable: true},
		"preemptibility":          {Kind: listquery.String, Column: "t.preemptibility", Sortable: true, Nullable: true},
		"effectivePriorityName":   {Kind: listquery.String, Column: "ep.name", Sortable: true},
		"effectivePreemptibility": {Kind: listquery.String, Column: effectivePreemptibilitySQL, Sortable: true},
		"external":                {Kind: listquery.Bool, Column: "t.external", Sortable: true},
	},
	DefaultSort:  "name",
	TieBreak:     "t.id",
	SearchColumn: "t.name",
}

// The effective values are computed here as well as by the core (scheduler.Catalog), so that
// the list sorts and filters by them; TestEffectiveValuesInSQLAreTheCores pins the two
// together. A type without a category and its own priority takes the cluster default
// (docs/rules.md S2), and without a preemptibility of its own one from its priority (S8).
var effectivePreemptibilitySQL = `coalesce(t.preemptibility, c.default_preemptibility,
	CASE WHEN ep.value < ` + strconv.Itoa(scheduler.PreemptibleBelow) + ` THEN '` + Preemptible + `' ELSE '` + NonPreemptible + `' END)`

// Priorities lists the dictionary.
func (s *Store) Priorities(ctx context.Context, q listquery.Query) ([]Priority, error) {
	var args listquery.Args
	sql := `SELECT p.* FROM workload_priorities p WHERE ` + q.Where(PrioritySpec, &args) + ` ORDER BY ` + q.OrderBy(PrioritySpec)
	rows, err := s.pool.Query(ctx, sql, args...)
	return scanAll[Priority](rows, err)
}

// Priority returns one dictionary entry.
func (s *Store) Priority(ctx context.Context, id uuid.UUID) (Priority, error) {
	rows, err := s.pool.Query(ctx, `SELECT p.* FROM workload_priorities p WHERE p.id = $1`, id)
	return scanOne[Priority](rows, err, "priority "+id.String())
}

const categorySelect = `
	SELECT c.id, c.name, c.description, c.default_priority_id, dp.name AS default_priority_name,
	       c.default_preemptibility, c.created_at, c.created_by, c.updated_at, c.updated_by
	FROM workload_categories c JOIN workload_priorities dp ON dp.id = c.default_priority_id`

// Categories lists the workload categories.
func (s *Store) Categories(ctx context.Context, q listquery.Query) ([]Category, error) {
	var args listquery.Args
	rows, err := s.pool.Query(ctx, categorySelect+` WHERE `+q.Where(CategorySpec, &args)+` ORDER BY `+q.OrderBy(CategorySpec), args...)
	return scanAll[Category](rows, err)
}

// Category returns one category.
func (s *Store) Category(ctx context.Context, id uuid.UUID) (Category, error) {
	return category(ctx, s.pool, id)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func category(ctx context.Context, db querier, id uuid.UUID) (Category, error) {
	rows, err := db.Query(ctx, categorySelect+` WHERE c.id = $1`, id)
	return scanOne[Category](rows, err, "workload category "+id.String())
}

var workloadTypeSelect = `
	SELECT t.id, t.name, t."group", t.external, t.category_id, c.name AS category_name,
	       t.priority_id, tp.name AS priority_name, t.preemptibility,
	       ep.id AS effective_priority_id, ep.name AS effective_priority_name, ep.value AS effective_priority_value,
	       ` + effectivePreemptibilitySQL + ` AS effective_preemptibility,
	       t.gang_policy, t.created_at, t.created_by, t.updated_at, t.updated_by
	FROM workload_types t
	LEFT JOIN workload_categories c ON c.id = t.category_id
	LEFT JOIN workload_priorities tp ON tp.id = t.priority_id
	JOIN workload_priorities ep ON ep.id = coalesce(t.priority_id, c.default_priority_id,
	     (SELECT id FROM workload_priorities WHERE name = '` + scheduler.ClusterDefaultPriority + `'))`

// WorkloadTypes lists workload types; externalOnly keeps only the Kubernetes kinds.
func (s *Store) WorkloadTypes(ctx context.Context, q listquery.Query, externalOnly bool) ([]WorkloadType, error) {
	var args listquery.Args
	where := q.Where(WorkloadTypeSpec, &args)
	if externalOnly {
		where += " AND t.external"
	}
	rows, err := s.pool.Query(ctx, workloadTypeSelect+` WHERE `+where+` ORDER BY `+q.OrderBy(WorkloadTypeSpec), args...)
	return scanAll[WorkloadType](rows, err)
}

// WorkloadType returns one workload type.
func (s *Store) WorkloadType(ctx context.Context, id uuid.UUID) (WorkloadType, error) {
	return workloadType(ctx, s.pool, id)
}

func workloadType(ctx context.Context, db querier, id uuid.UUID) (WorkloadType, error) {
	rows, err := db.Query(ctx, workloadTypeSelect+` WHERE t.id = $1`, id)
	return scanOne[WorkloadType](rows, err, "workload type "+id.String())
}

// Optional is an optional field of an update: Set says the caller gave it; a nil Value with
// Set means "back to the default" where the field allows it.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// WorkloadTypeUpdate holds the editable fields of a workload type.
type WorkloadTypeUpdate struct {
	CategoryID     Optional[uuid.UUID]
	PriorityID     Optional[uuid.UUID]
	Preemptibility Optional[string]
}

// UpdateWorkloadType changes a type's category, priority and preemptibility in one
// transaction with its audit row, and returns the type as it now is.
func (s *Store) UpdateWorkloadType(ctx context.Context, id uuid.UUID, u WorkloadTypeUpdate, by Actor) (WorkloadType, error) {
	var updated WorkloadType
	err := s.changeConfig(ctx, "workload_types", by.entry("update", "workload-type", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		before, err := workloadType(ctx, tx, id)
		if err != nil {
			return err
		}
		if u.CategoryID.Set && u.CategoryID.Value != nil {
			if _, err := category(ctx, tx, *u.CategoryID.Value); err != nil {
				return InvalidField("categoryId", "categoryId %s is not a workload category; list them with GET /api/v1/workload-categories", u.CategoryID.Value)
			}
		}
		if u.PriorityID.Set && u.PriorityID.Value != nil {
			if err := priorityExists(ctx, tx, *u.PriorityID.Value); err != nil {
				return err
			}
		}
		if u.Preemptibility.Set && u.Preemptibility.Value != nil {
			if err := CheckPreemptibility(*u.Preemptibility.Value); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `
			UPDATE workload_types SET
			  category_id    = CASE WHEN $2 THEN $3 ELSE category_id END,
			  priority_id    = CASE WHEN $4 THEN $5 ELSE priority_id END,
			  preemptibility = CASE WHEN $6 THEN $7 ELSE preemptibility END,
			  updated_at = now(), updated_by = $8
			WHERE id = $1`,
			id, u.CategoryID.Set, u.CategoryID.Value, u.PriorityID.Set, u.PriorityID.Value,
			u.Preemptibility.Set, u.Preemptibility.Value, by.Subject)
		if err != nil {
			return err
		}
		if updated, err = workloadType(ctx, tx, id); err != nil {
			return err
		}
		audit.EntityName = updated.Name
		recordChange(audit.Changes, "category", before.CategoryName, updated.CategoryName)
		recordChange(audit.Changes, "priority", before.PriorityName, updated.PriorityName)
		recordChange(audit.Changes, "preemptibility", before.Preemptibility, updated.Preemptibility)
		return nil
	})
	return updated, err
}

// CategoryUpdate holds the editable fields of a category (neither may be unset).
type CategoryUpdate struct {
	DefaultPriorityID     *uuid.UUID
	DefaultPreemptibility *string
}

// UpdateCategory changes a category's defaults (an Arbiter extension of the Run:ai API).
func (s *Store) UpdateCategory(ctx context.Context, id uuid.UUID, u CategoryUpdate, by Actor) (Category, error) {
	var updated Category
	err := s.changeConfig(ctx, "workload_categories", by.entry("update", "workload-category", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		before, err := category(ctx, tx, id)
		if err != nil {
			return err
		}
		if u.DefaultPriorityID != nil {
			if err := priorityExists(ctx, tx, *u.DefaultPriorityID); err != nil {
				return err
			}
		}
		if u.DefaultPreemptibility != nil {
			if err := CheckPreemptibility(*u.DefaultPreemptibility); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `
			UPDATE workload_categories SET
			  default_priority_id = coalesce($2, default_priority_id),
			  default_preemptibility = coalesce($3, default_preemptibility),
			  updated_at = now(), updated_by = $4
			WHERE id = $1`, id, u.DefaultPriorityID, u.DefaultPreemptibility, by.Subject)
		if err != nil {
			return err
		}
		if updated, err = category(ctx, tx, id); err != nil {
			return err
		}
		audit.EntityName = updated.Name
		recordChange(audit.Changes, "defaultPriority", before.DefaultPriorityName, updated.DefaultPriorityName)
		recordChange(audit.Changes, "defaultPreemptibility", before.DefaultPreemptibility, updated.DefaultPreemptibility)
		return nil
	})
	return updated, err
}

func priorityExists(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workload_priorities WHERE id = $1)`, id).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return InvalidField("priorityId", "priorityId %s is not in the priority dictionary; list the priorities with GET /api/v1/workload-priorities", id)
	}
	return nil
}

// CheckPreemptibility rejects anything but the three preemptibility values.
func CheckPreemptibility(v string) error {
	if v != Preemptible && v != NonPreemptible && v != SemiPreemptible {
		return InvalidField("preemptibility", "preemptibility %q is not valid; use %q, %q or %q (or null for the default)", v, Preemptible, NonPreemptible, SemiPreemptible)
	}
	return nil
}

// recordChange notes a field in the audit changes when its value differs.
func recordChange(changes map[string]any, field string, before, after any) {
	if b, a := deref(before), deref(after); b != a {
		changes[field] = Change{From: b, To: a}
	}
}

func deref(v any) any {
	switch p := v.(type) {
	case *string:
		if p == nil {
			return nil
		}
		return *p
	}
	return v
}
