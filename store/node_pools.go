package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// DefaultNodePoolName is the seeded pool that holds every node no other pool selects.
const DefaultNodePoolName = "default"

// DefaultNodePoolID is the default pool's stable id.
var DefaultNodePoolID = SeedID("node-pool", DefaultNodePoolName)

// Placement values of a node pool (docs/rules.md S21).
const (
	Binpack = "binpack"
	Spread  = "spread"
)

// NodePoolLabelKey is the label by which Arbiter's development nodes name their pool; the
// console proposes it for new pools.
const NodePoolLabelKey = "arbiter.dev/node-pool"

// NodePool is a set of nodes selected by one label (the default pool: by none).
type NodePool struct {
	ID         uuid.UUID `db:"id"`
	Name       string    `db:"name"`
	LabelKey   string    `db:"label_key"`
	LabelValue string    `db:"label_value"`
	Placement  string    `db:"placement"`
	CreatedAt  time.Time `db:"created_at"`
	CreatedBy  string    `db:"created_by"`
	UpdatedAt  time.Time `db:"updated_at"`
	UpdatedBy  string    `db:"updated_by"`
	// NetworkTopologyID is the pool's topology (S29), by which its workloads' topology
	// requests are placed; nil: none of Arbiter's (a request then names a level of a cluster
	// topology, or a node label).
	NetworkTopologyID   *uuid.UUID `db:"network_topology_id"`
	NetworkTopologyName *string    `db:"network_topology_name"`
}

// nodePoolSelect reads pools with the name of their topology.
const nodePoolSelect = `SELECT np.*, nt.name AS network_topology_name FROM node_pools np LEFT JOIN network_topologies nt ON nt.id = np.network_topology_id`

// DefaultNodePoolLabelValue is, with NodePoolLabelKey, the label the default pool answers as
// its own. Run:ai requires every pool to name one; the default pool holds every node no other
// pool selects, a node carrying this label among them, and no other pool may select it, so the
// answer is true. The pool's row keeps an empty selector: the scheduler's rule is "every node
// no other pool selects", not this label alone.
const DefaultNodePoolLabelValue = "default"

// Label is the label the pool selects, as the API answers it (the default pool's:
// NodePoolLabelKey=DefaultNodePoolLabelValue).
func (p NodePool) Label() (key, value string) {
	if p.IsDefault() {
		return NodePoolLabelKey, DefaultNodePoolLabelValue
	}
	return p.LabelKey, p.LabelValue
}

// isDefaultPoolLabel reports whether key=value is the label the default pool answers.
func isDefaultPoolLabel(key, value string) bool {
	return key == NodePoolLabelKey && value == DefaultNodePoolLabelValue
}

// IsDefault reports whether this is the seeded default pool.
func (p NodePool) IsDefault() bool { return p.ID == DefaultNodePoolID }

// NodePoolSpec is the list spec of node pools.
var NodePoolSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":       {Kind: listquery.String, Column: "np.name", Sortable: true},
		"labelKey":   {Kind: listquery.String, Column: defaultPoolOr("np.label_key", NodePoolLabelKey), Sortable: true},
		"labelValue": {Kind: listquery.String, Column: defaultPoolOr("np.label_value", DefaultNodePoolLabelValue), Sortable: true},
		"placement":  {Kind: listquery.String, Column: "np.placement", Sortable: true},
		"createdAt":  {Kind: listquery.Time, Column: "np.created_at", Sortable: true},
		"updatedAt":  {Kind: listquery.Time, Column: "np.updated_at", Sortable: true},
		"clusterId":  {Kind: listquery.String, Column: clusterIDColumn, Sortable: true},
		// Run:ai's filter by the pool's topology's name.
		"networkTopologyName": {Kind: listquery.String, Column: "nt.name", Sortable: true, Nullable: true},
	},
	DefaultSort:  "name",
	TieBreak:     "np.id",
	SearchColumn: "np.name",
	Unserved: map[string]string{
		"phase":                           "a pool's phase comes from its nodes' live readiness, not stored",
		"gpuNetworkAccelerationDetection": "Arbiter does not detect GPU network acceleration",
		"gpuNetworkAccelerationDetected":  "Arbiter does not detect GPU network acceleration",
		"gpuNetworkAccelerationLabelKey":  "Arbiter does not detect GPU network acceleration",
		"swapEnabled":                     "Arbiter has no GPU memory swap",
		"nodeLevelSchedulerEnabled":       "Arbiter has no node-level scheduler",
	},
}

// NodePools lists the node pools.
func (s *Store) NodePools(ctx context.Context, q listquery.Query) ([]NodePool, error) {
	return nodePoolList(ctx, s.pool, q)
}

func nodePoolList(ctx context.Context, db querier, q listquery.Query) ([]NodePool, error) {
	var args listquery.Args
	rows, err := db.Query(ctx, nodePoolSelect+` WHERE `+q.Where(NodePoolSpec, &args)+` ORDER BY `+q.OrderBy(NodePoolSpec), args...)
	return scanAll[NodePool](rows, err)
}

// NodePool returns one node pool.
func (s *Store) NodePool(ctx context.Context, id uuid.UUID) (NodePool, error) {
	return nodePool(ctx, s.pool, id)
}

func nodePool(ctx context.Context, db querier, id uuid.UUID) (NodePool, error) {
	rows, err := db.Query(ctx, nodePoolSelect+` WHERE np.id = $1`, id)
	return scanOne[NodePool](rows, err, "node pool "+id.String())
}

// NodePoolUpdate holds the editable fields of a node pool. On create, Name is required, an
// absent LabelKey is an error for every pool but default, an absent LabelValue is the pool's
// name and an absent Placement is binpack. A nil Placement value means binpack.
type NodePoolUpdate struct {
	Name       Optional[string]
	LabelKey   Optional[string]
	LabelValue Optional[string]
	Placement  Optional[string]
	// NetworkTopology is the pool's topology; a nil value: none.
	NetworkTopology Optional[uuid.UUID]
}

// CreateNodePool adds a node pool.
func (s *Store) CreateNodePool(ctx context.Context, u NodePoolUpdate, by Actor) (NodePool, error) {
	var created NodePool
	if !u.Name.Set || u.Name.Value == nil {
		return created, InvalidField("name", "a node pool needs a name")
	}
	if !u.LabelValue.Set {
		u.LabelValue = Optional[string]{Set: true, Value: u.Name.Value}
	}
	if !u.LabelKey.Set {
		u.LabelKey = Optional[string]{Set: true, Value: new(string)} // refused below, with the reason
	}
	id := uuid.New()
	err := s.changeConfig(ctx, "node_pools", by.entry("create", "node-pool", id.String(), *u.Name.Value), func(tx pgx.Tx, audit *AuditEntry) error {
		// The row starts with a placeholder name and selector unique to it; the update that
		// follows validates and sets the real ones, as for any later change.
		if _, err := tx.Exec(ctx, `INSERT INTO node_pools (id, name, label_key, label_value, created_by, updated_by) VALUES ($1, $2, $2, $2, $3, $3)`,
			id, "pool-"+id.String(), by.Subject); err != nil {
			return err
		}
		var err error
		created, err = applyNodePoolUpdate(ctx, tx, id, u, by, audit)
		return err
	})
	return created, err
}

// UpdateNodePool changes a node pool. The default pool keeps its name and its empty selector.
func (s *Store) UpdateNodePool(ctx context.Context, id uuid.UUID, u NodePoolUpdate, by Actor) (NodePool, error) {
	var updated NodePool
	err := s.changeConfig(ctx, "node_pools", by.entry("update", "node-pool", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		var err error
		updated, err = applyNodePoolUpdate(ctx, tx, id, u, by, audit)
		return err
	})
	return updated, err
}

// applyNodePoolUpdate applies u to the pool as it is under its row lock (FOR NO KEY UPDATE:
// parallel changes of the pool wait for each other and each keeps the fields the others set;
// quotas that merely refer to the pool do not wait).
func applyNodePoolUpdate(ctx context.Context, tx pgx.Tx, id uuid.UUID, u NodePoolUpdate, by Actor, audit *AuditEntry) (NodePool, error) {
	rows, err := tx.Query(ctx, nodePoolSelect+` WHERE np.id = $1 FOR NO KEY UPDATE OF np`, id)
	before, err := scanOne[NodePool](rows, err, "node pool "+id.String())
	if err != nil {
		return before, err
	}
	after := before
	if u.Name.Set {
		if u.Name.Value == nil {
			return before, InvalidField("name", "a node pool's name cannot be null")
		}
		after.Name = *u.Name.Value
	}
	if u.LabelKey.Set {
		if u.LabelKey.Value == nil {
			return before, InvalidField("labelKey", "a node pool's labelKey cannot be null")
		}
		after.LabelKey = *u.LabelKey.Value
	}
	if u.LabelValue.Set {
		after.LabelValue = ""
		if u.LabelValue.Value != nil {
			after.LabelValue = *u.LabelValue.Value
		}
	}
	if u.Placement.Set {
		after.Placement = Binpack
		if u.Placement.Value != nil {
			after.Placement = *u.Placement.Value
		}
	}
	if u.NetworkTopology.Set {
		after.NetworkTopologyID, after.NetworkTopologyName = nil, nil
		if id := u.NetworkTopology.Value; id != nil {
			// A share lock on the topology's row: a delete of it waits for this change, or
			// this change for the delete (and then finds it gone).
			var name string
			err := tx.QueryRow(ctx, `SELECT name FROM network_topologies WHERE id = $1 FOR KEY SHARE`, *id).Scan(&name)
			if errors.Is(err, pgx.ErrNoRows) {
				return before, InvalidField("networkTopologyId", "networkTopologyId %s is not a network topology of this installation; list them at /api/v1/network-topologies", id)
			} else if err != nil {
				return before, err
			}
			after.NetworkTopologyID, after.NetworkTopologyName = id, &name
		}
	}
	if err := checkNodePool(before, after); err != nil {
		return before, err
	}
	if before.IsDefault() { // sent back as read: the row keeps its empty selector
		after.LabelKey, after.LabelValue = "", ""
	}
	if err := nameFree(ctx, tx, "node_pools", "node pool", after.Name, id); err != nil {
		return before, err
	}
	var other string
	err = tx.QueryRow(ctx, `SELECT name FROM node_pools WHERE label_key = $1 AND label_value = $2 AND id <> $3`, after.LabelKey, after.LabelValue, id).Scan(&other)
	if err == nil {
		return before, ConflictField("labelValue", "node pool %s already selects the nodes labelled %s=%s; choose another label", other, after.LabelKey, after.LabelValue)
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return before, err
	}
	if _, err := tx.Exec(ctx, `
		UPDATE node_pools SET name = $2, label_key = $3, label_value = $4, placement = $5, network_topology_id = $7, updated_at = now(), updated_by = $6
		WHERE id = $1`, id, after.Name, after.LabelKey, after.LabelValue, after.Placement, by.Subject, after.NetworkTopologyID); err != nil {
		return before, err
	}
	if after, err = nodePool(ctx, tx, id); err != nil {
		return before, err
	}
	audit.EntityName = after.Name
	if audit.Action == "update" {
		recordChange(audit.Changes, "name", before.Name, after.Name)
		recordChange(audit.Changes, "labelKey", before.LabelKey, after.LabelKey)
		recordChange(audit.Changes, "labelValue", before.LabelValue, after.LabelValue)
		recordChange(audit.Changes, "placement", before.Placement, after.Placement)
		recordChange(audit.Changes, "networkTopologyName", before.NetworkTopologyName, after.NetworkTopologyName)
	} else {
		audit.Changes["labelKey"] = Change{To: after.LabelKey}
		audit.Changes["labelValue"] = Change{To: after.LabelValue}
		audit.Changes["placement"] = Change{To: after.Placement}
		if after.NetworkTopologyName != nil {
			audit.Changes["networkTopologyName"] = Change{To: *after.NetworkTopologyName}
		}
	}
	return after, nil
}

func checkNodePool(before, after NodePool) error {
	if before.IsDefault() {
		if after.Name != DefaultNodePoolName {
			return InvalidField("name", "the default node pool cannot be renamed; it holds every node no other pool selects")
		}
		if (after.LabelKey != "" || after.LabelValue != "") && !isDefaultPoolLabel(after.LabelKey, after.LabelValue) {
			return InvalidField("labelKey", "labelKey and labelValue of the default node pool stay %s=%s (it holds every node no other pool selects); create another pool for %s=%s", NodePoolLabelKey, DefaultNodePoolLabelValue, after.LabelKey, after.LabelValue)
		}
	} else {
		if err := CheckName("node pool", after.Name); err != nil {
			return err
		}
		if err := checkLabelKey(after.LabelKey); err != nil {
			return err
		}
		if err := checkLabelValue(after.LabelValue); err != nil {
			return err
		}
		if isDefaultPoolLabel(after.LabelKey, after.LabelValue) {
			return InvalidField("labelValue", "labelValue %s on %s is the default node pool's label (a node carrying it is in the default pool); choose another", after.LabelValue, after.LabelKey)
		}
	}
	if after.Placement != Binpack && after.Placement != Spread {
		return InvalidField("placement", "placement %q is not valid; use %q (fill the fullest node first) or %q", after.Placement, Binpack, Spread)
	}
	return nil
}

// DeleteNodePool removes a node pool. The default pool cannot be deleted (ErrInvalid); a
// pool that quotas refer to cannot either (ErrConflict naming them), so that no guarantee
// disappears unnoticed. The pool leaves every project's node-pool order.
func (s *Store) DeleteNodePool(ctx context.Context, id uuid.UUID, by Actor) error {
	return s.changeConfig(ctx, "node_pools", by.entry("delete", "node-pool", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		p, err := nodePool(ctx, tx, id)
		if err != nil {
			return err
		}
		audit.EntityName = p.Name
		if p.IsDefault() {
			return Invalid("the default node pool cannot be deleted; it holds every node no other pool selects")
		}
		var users []string
		err = tx.QueryRow(ctx, `
			SELECT coalesce(array_agg(who ORDER BY who), '{}') FROM (
			  SELECT 'department ' || d.name AS who FROM department_quotas q JOIN departments d ON d.id = q.department_id WHERE q.node_pool_id = $1
			  UNION ALL
			  SELECT 'project ' || p.name FROM project_quotas q JOIN projects p ON p.id = q.project_id WHERE q.node_pool_id = $1) u`, id).Scan(&users)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return Conflict("node pool %s is in the quotas of %s; remove those quotas first", p.Name, listNames(users))
		}
		if _, err := tx.Exec(ctx, `UPDATE projects SET node_pool_ids = array_remove(node_pool_ids, $1) WHERE $1 = ANY(node_pool_ids)`, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM node_pools WHERE id = $1`, id)
		return err
	})
}

// dnsLabel is a DNS-1123 label: what Kubernetes accepts as a namespace name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// CheckName accepts names that are DNS-1123 labels (lower-case letters, digits and '-',
// starting and ending with a letter or digit, at most 63 characters), so that a name can
// also name a namespace or a label value.
func CheckName(what, name string) error {
	if name == "" {
		return InvalidField("name", "a %s needs a name", what)
	}
	if len(name) > 63 || !dnsLabel.MatchString(name) {
		return InvalidField("name", "%s name %q is not valid; use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit", what, name)
	}
	return nil
}

var (
	labelPrefix = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelName   = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
)

func checkLabelKey(key string) error {
	if key == "" {
		return InvalidField("labelKey", "a node pool other than default needs a labelKey: it holds the nodes labelled labelKey=labelValue (for example %s=gpu-a100)", NodePoolLabelKey)
	}
	if !IsLabelKey(key) {
		return InvalidField("labelKey", "labelKey %q is not a valid Kubernetes label key; use an optional DNS prefix and '/' and a name of at most 63 letters, digits, '-', '_' or '.', such as %s", key, NodePoolLabelKey)
	}
	return nil
}

func checkLabelValue(v string) error {
	if v != "" && (len(v) > 63 || !labelName.MatchString(v)) {
		return InvalidField("labelValue", "labelValue %q is not a valid Kubernetes label value; use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", v)
	}
	return nil
}

// nameFree refuses a name another row of table already has.
func nameFree(ctx context.Context, tx pgx.Tx, table, what, name string, self uuid.UUID) error {
	var taken bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE name = $1 AND id <> $2)`, name, self).Scan(&taken); err != nil {
		return err
	}
	if taken {
		return ConflictField("name", "a %s named %s already exists; choose another name", what, name)
	}
	return nil
}

// listNames joins names for a sentence, shortening long lists.
func listNames(names []string) string {
	const most = 5
	if len(names) > most {
		return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
	}
	return strings.Join(names, ", ")
}

// defaultPoolOr is a list column of column, but for the default pool, which answers value.
func defaultPoolOr(column, value string) string {
	return "CASE WHEN np.id = '" + DefaultNodePoolID.String() + "' THEN '" + value + "' ELSE " + column + " END"
}
