package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// WorkloadCounts is what the Overview counts over the workload records a caller may see:
// unfinished workloads by phase, pending ones by reason, and scheduling events by kind since a
// moment.
type WorkloadCounts struct {
	Phases         map[string]int // unfinished records by phase
	PendingReasons []ReasonCount  // pending records by reason, the most common first
	Events         map[string]int // Preempted and Reclaimed events since the moment asked for
}

// ReasonCount is how many pending workloads wait for one reason.
type ReasonCount struct {
	Reason string `db:"reason"`
	Count  int    `db:"count"`
}

// CountWorkloads counts the unfinished workloads in scope by phase and pending ones by reason,
// and the Preempted and Reclaimed events of workloads in scope since since.
func (s *Store) CountWorkloads(ctx context.Context, scope WorkloadScope, since time.Time) (WorkloadCounts, error) {
	all := scope.All
	projects := scope.Projects
	if projects == nil {
		projects = []string{}
	}
	const inScope = `($1 OR w.project_name = ANY($2))`
	out := WorkloadCounts{Phases: map[string]int{}, Events: map[string]int{}}
	rows, err := s.pool.Query(ctx, `SELECT w.phase AS key, count(*)::int AS count FROM workloads w
		WHERE w.finished_at IS NULL AND `+inScope+` GROUP BY w.phase`, all, projects)
	if err := collectCounts(out.Phases, rows, err); err != nil {
		return out, err
	}
	rows, err = s.pool.Query(ctx, `SELECT w.reason, count(*)::int AS count FROM workloads w
		WHERE w.finished_at IS NULL AND w.phase = 'Pending' AND `+inScope+`
		GROUP BY w.reason ORDER BY count(*) DESC, w.reason`, all, projects)
	if out.PendingReasons, err = scanAll[ReasonCount](rows, err); err != nil {
		return out, err
	}
	rows, err = s.pool.Query(ctx, `SELECT e.kind AS key, count(*)::int AS count FROM workload_events e
		JOIN workloads w ON w.uid = e.workload_uid
		WHERE e.kind IN ('Preempted', 'Reclaimed') AND e.at >= $3 AND `+inScope+` GROUP BY e.kind`, all, projects, since)
	return out, collectCounts(out.Events, rows, err)
}

// collectCounts reads rows of (key, count) into into.
func collectCounts(into map[string]int, rows pgx.Rows, err error) error {
	type keyCount struct {
		Key   string `db:"key"`
		Count int    `db:"count"`
	}
	list, err := scanAll[keyCount](rows, err)
	for _, k := range list {
		into[k.Key] = k.Count
	}
	return err
}
