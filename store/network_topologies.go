package store

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arbiterhq/arbiter/internal/listquery"
)

// A network topology is Arbiter's own description of how nodes are grouped by the network
// between them (docs/scheduling.md S29), in the shape of Run:ai's network-topologies API: an
// ordered list of node label keys, widest first. Node pools refer to one; the scheduler places
// a pool's topology-aware workloads by it. Kueue's and KAI's Topology objects in the cluster
// are read by the scheduler, not stored here.

// MaxNetworkTopologies bounds the topologies an installation keeps: a cluster has a handful
// (one per kind of hardware); past it a create is refused, saying so.
const MaxNetworkTopologies = 100

// MaxTopologyLevels bounds a topology's levels, as Kueue's Topology does.
const MaxTopologyLevels = 16

// NetworkTopologySource is the source Arbiter's own topologies answer (Run:ai's
// NetworkTopologiesSource, "the source of the topology").
const NetworkTopologySource = "Arbiter"

// networkTopologyLock is the transaction-level advisory lock every create of a topology takes
// ("nettopo" in ASCII), so that two creates cannot both pass MaxNetworkTopologies.
const networkTopologyLock int64 = 0x6e6574746f706f

// NetworkTopology is one of Arbiter's own topologies and the node pools that refer to it.
type NetworkTopology struct {
	ID        uuid.UUID `db:"id"`
	Name      string    `db:"name"`
	Levels    []string  `db:"levels"`
	CreatedAt time.Time `db:"created_at"`
	CreatedBy string    `db:"created_by"`
	// NodePools names the pools that refer to it, sorted.
	NodePools []string `db:"node_pools"`
}

// networkTopologySelect reads topologies with the names of the pools that refer to them.
const networkTopologySelect = `SELECT nt.*, coalesce((SELECT array_agg(np.name ORDER BY np.name) FROM node_pools np
	WHERE np.network_topology_id = nt.id), '{}') AS node_pools FROM network_topologies nt`

// NetworkTopologySpec is what the topologies list filters and sorts by: Run:ai's
// NetworkTopologiesFilterBy (name, clusterId, source, phase).
var NetworkTopologySpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":      {Kind: listquery.String, Column: "nt.name", Sortable: true},
		"clusterId": {Kind: listquery.String, Column: clusterIDColumn, Sortable: true},
		"source":    {Kind: listquery.String, Column: "'" + NetworkTopologySource + "'", Sortable: true},
		// Arbiter's own topologies are in force as soon as they are stored.
		"phase":     {Kind: listquery.String, Column: "'Ready'", Sortable: true},
		"createdAt": {Kind: listquery.Time, Column: "nt.created_at", Sortable: true},
	},
	DefaultSort:  "name",
	TieBreak:     "nt.id",
	SearchColumn: "nt.name",
}

// NetworkTopologies lists the topologies q selects (at most MaxNetworkTopologies).
func (s *Store) NetworkTopologies(ctx context.Context, q listquery.Query) ([]NetworkTopology, error) {
	var args listquery.Args
	rows, err := s.pool.Query(ctx, networkTopologySelect+` WHERE `+q.Where(NetworkTopologySpec, &args)+` ORDER BY `+q.OrderBy(NetworkTopologySpec), args...)
	return scanAll[NetworkTopology](rows, err)
}

// NetworkTopology returns one topology.
func (s *Store) NetworkTopology(ctx context.Context, id uuid.UUID) (NetworkTopology, error) {
	return networkTopology(ctx, s.pool, id)
}

func networkTopology(ctx context.Context, db querier, id uuid.UUID) (NetworkTopology, error) {
	rows, err := db.Query(ctx, networkTopologySelect+` WHERE nt.id = $1`, id)
	return scanOne[NetworkTopology](rows, err, "network topology "+id.String())
}

// CreateNetworkTopology stores a topology: a name (Run:ai's NetworkTopologyName) and its levels,
// node label keys widest first, none twice.
func (s *Store) CreateNetworkTopology(ctx context.Context, name string, levels []string, by Actor) (NetworkTopology, error) {
	var created NetworkTopology
	if err := CheckTopologyName(name); err != nil {
		return created, err
	}
	if err := CheckTopologyLevels(levels); err != nil {
		return created, err
	}
	id := uuid.New()
	err := s.changeConfig(ctx, "network_topologies", by.entry("create", "network-topology", id.String(), name), func(tx pgx.Tx, audit *AuditEntry) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, networkTopologyLock); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM network_topologies`).Scan(&n); err != nil {
			return err
		}
		// Run:ai's create answers 400 for every refusal (its document lists no 409), so a
		// name taken and the bound reached are invalid values of name here.
		if n >= MaxNetworkTopologies {
			return InvalidField("name", "this installation already has %d network topologies, the most it keeps; delete one you no longer need first", MaxNetworkTopologies)
		}
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM network_topologies WHERE name = $1)`, name).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return InvalidField("name", "a network topology named %s already exists; choose another name", name)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO network_topologies (id, name, levels, created_by) VALUES ($1, $2, $3, $4)`,
			id, name, levels, by.Subject); err != nil {
			return err
		}
		var err error
		if created, err = networkTopology(ctx, tx, id); err != nil {
			return err
		}
		audit.HTTPStatus = 201
		audit.Changes["levels"] = Change{To: strings.Join(levels, ",")}
		return nil
	})
	return created, err
}

// DeleteNetworkTopology removes a topology. One that node pools refer to cannot be deleted
// (ErrConflict naming them): their topology-aware workloads would lose what they are placed by
// unnoticed.
func (s *Store) DeleteNetworkTopology(ctx context.Context, id uuid.UUID, by Actor) error {
	return s.changeConfig(ctx, "network_topologies", by.entry("delete", "network-topology", id.String(), ""), func(tx pgx.Tx, audit *AuditEntry) error {
		rows, err := tx.Query(ctx, `SELECT nt.*, '{}'::text[] AS node_pools FROM network_topologies nt WHERE nt.id = $1 FOR UPDATE`, id)
		t, err := scanOne[NetworkTopology](rows, err, "network topology "+id.String())
		if err != nil {
			return err
		}
		audit.EntityName = t.Name
		// The pools are read after the lock: a pool's change that refers to this topology
		// takes a share lock on its row (the foreign key) and so waits for this delete, or
		// this delete for it.
		var pools []string
		if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(name ORDER BY name), '{}') FROM node_pools WHERE network_topology_id = $1`, id).Scan(&pools); err != nil {
			return err
		}
		if len(pools) > 0 {
			return Conflict("network topology %s is the topology of node pools %s; give those pools another topology (or none) first", t.Name, listNames(pools))
		}
		_, err = tx.Exec(ctx, `DELETE FROM network_topologies WHERE id = $1`, id)
		return err
	})
}

// topologyName is Run:ai's NetworkTopologyName: a DNS-1123 label that starts with a letter.
var topologyName = regexp.MustCompile(`^[a-z]([a-z0-9-]*[a-z0-9])?$`)

// CheckTopologyName accepts Run:ai's network topology names.
func CheckTopologyName(name string) error {
	if name == "" {
		return InvalidField("name", "a network topology needs a name")
	}
	if len(name) > 63 || !topologyName.MatchString(name) {
		return InvalidField("name", "network topology name %q is not valid; use at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit", name)
	}
	return nil
}

// CheckTopologyLevels accepts an ordered list of 1 to MaxTopologyLevels node label keys,
// widest first, none twice.
func CheckTopologyLevels(levels []string) error {
	if len(levels) == 0 {
		return InvalidField("levels", "a network topology needs levels: node label keys from the widest to the narrowest, such as [topology.kubernetes.io/zone, kubernetes.io/hostname]")
	}
	if len(levels) > MaxTopologyLevels {
		return InvalidField("levels", "a network topology has at most %d levels; this one has %d", MaxTopologyLevels, len(levels))
	}
	seen := make(map[string]bool, len(levels))
	for i, key := range levels {
		if !IsLabelKey(key) || len(key) > 63 {
			return InvalidField("levels", "levels[%d] %q is not a node label key Run:ai accepts; use an optional DNS prefix and '/' and a name of letters, digits, '-', '_' or '.', at most 63 characters in all (such as kubernetes.io/hostname)", i, key)
		}
		if seen[key] {
			return InvalidField("levels", "levels[%d] %q is listed twice; each level is a different node label, widest first", i, key)
		}
		seen[key] = true
	}
	return nil
}

// IsLabelKey reports whether key is a valid Kubernetes label key.
func IsLabelKey(key string) bool {
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		prefix, name = "", key
	}
	return !(hasPrefix && (len(prefix) > 253 || !labelPrefix.MatchString(prefix))) && len(name) <= 63 && labelName.MatchString(name)
}
