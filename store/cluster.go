package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Run:ai's control-plane API names things an Arbiter installation has exactly one of, among
// them the cluster: its schemas require the cluster's id on node pools, departments, projects
// and workloads, its lists filter by it, and its scripts send it back. The id is kept in the
// installation row (migration 0019), the same for every replica and across restarts.
const ClusterName = "arbiter"

// DefaultClusterID is the cluster's id until an admin sets another (serve --cluster-id); the
// migration seeds the installation row with it.
var DefaultClusterID = SeedID("cluster", ClusterName)

// clusterIDColumn is the cluster's id as a list field's SQL expression, the same for every row.
const clusterIDColumn = "(SELECT cluster_id::text FROM installation)"

// ClusterID is the installation's one cluster's id.
func (s *Store) ClusterID(ctx context.Context) (uuid.UUID, error) {
	var id uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT cluster_id FROM installation`).Scan(&id)
	return id, classify(err)
}

// SetClusterID gives the installation's cluster the id, recording the change in the audit log
// when it is one.
func (s *Store) SetClusterID(ctx context.Context, id uuid.UUID, by Actor) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		var before uuid.UUID
		if err := tx.QueryRow(ctx, `SELECT cluster_id FROM installation FOR UPDATE`).Scan(&before); err != nil {
			return err
		}
		if before == id {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE installation SET cluster_id = $1, updated_at = now()`, id); err != nil {
			return err
		}
		e := by.entry("update", "cluster", id.String(), ClusterName)
		e.Changes["id"] = Change{From: before.String(), To: id.String()}
		return insertAudit(ctx, tx, e)
	})
}

// notMeasured are Run:ai's usage-average list fields of an organization unit: Arbiter keeps
// no usage history yet, so it can neither filter nor sort by them.
func notMeasured(fields map[string]string) map[string]string {
	for _, span := range []string{"24h", "7d", "30d"} {
		fields["avgGpuAllocation"+span] = "Arbiter keeps no GPU usage history yet"
		fields["avgGpuUtilization"+span] = "Arbiter does not measure GPU utilization"
		fields["avgGpuMemoryUtilization"+span] = "Arbiter does not measure GPU memory utilization"
	}
	return fields
}

// liveAllocation is why a unit's allocated GPUs cannot be filtered or sorted by: they are the
// scheduler's live figures (the unit's status), not stored.
const liveAllocation = "allocated GPUs are the scheduler's live figures (see the status), not stored"
