package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// PoolPreemptions counts one project's workloads preempted (S16, Preempted events) and
// reclaimed (S17, Reclaimed events) in one node pool (the pool the workload record names; ""
// when it names none).
type PoolPreemptions struct {
	ProjectID   uuid.UUID `db:"project_id"`
	NodePool    string    `db:"node_pool"`
	Preemptions int       `db:"preemptions"`
	Reclaims    int       `db:"reclaims"`
}

// PreemptionsBetween counts the Preempted and Reclaimed events of [from, to) per project and
// node pool, for the usage history's samples. Events of workloads without a project id are
// left out. The partial index on the events' time serves it; the result has at most a row per
// project and pool.
func (s *Store) PreemptionsBetween(ctx context.Context, from, to time.Time) ([]PoolPreemptions, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT w.project_id, w.node_pool,
			count(*) FILTER (WHERE e.kind = 'Preempted')::int AS preemptions,
			count(*) FILTER (WHERE e.kind = 'Reclaimed')::int AS reclaims
		FROM workload_events e JOIN workloads w ON w.uid = e.workload_uid
		WHERE e.kind IN ('Preempted', 'Reclaimed') AND e.at >= $1 AND e.at < $2 AND w.project_id IS NOT NULL
		GROUP BY w.project_id, w.node_pool`, from, to)
	return scanAll[PoolPreemptions](rows, err)
}
