package store

import (
	"cmp"
	"context"
	"slices"
	"time"
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
	Reason string
	Count  int
}

// countWorkloadsSQL counts in one statement (one scan of the unfinished records, grouped by
// phase and by phase and reason; one of the recent events): $1 every workload, else those of
// the projects named in $2; events since $3.
const countWorkloadsSQL = `
	SELECT CASE WHEN grouping(w.reason) = 1 THEN 'phase' ELSE 'reason' END AS what, w.phase AS key,
	       coalesce(w.reason, '') AS reason, count(*)::int AS count
	FROM workloads w
	WHERE w.finished_at IS NULL AND ($1 OR w.project_name = ANY($2))
	GROUP BY GROUPING SETS ((w.phase), (w.phase, w.reason))
	UNION ALL
	SELECT 'event', e.kind, '', count(*)::int
	FROM workload_events e
	WHERE e.kind IN ('Preempted', 'Reclaimed') AND e.at >= $3
	  AND ($1 OR e.workload_uid IN (SELECT uid FROM workloads WHERE project_name = ANY($2)))
	GROUP BY e.kind`

// CountWorkloads counts the unfinished workloads in scope by phase and pending ones by reason,
// and the Preempted and Reclaimed events of workloads in scope since since.
func (s *Store) CountWorkloads(ctx context.Context, scope WorkloadScope, since time.Time) (WorkloadCounts, error) {
	projects := scope.Projects
	if projects == nil {
		projects = []string{}
	}
	type row struct {
		What   string `db:"what"`
		Key    string `db:"key"`
		Reason string `db:"reason"`
		Count  int    `db:"count"`
	}
	rows, err := s.pool.Query(ctx, countWorkloadsSQL, scope.All, projects, since)
	list, err := scanAll[row](rows, err)
	out := WorkloadCounts{Phases: map[string]int{}, Events: map[string]int{}, PendingReasons: []ReasonCount{}}
	if err != nil {
		return out, err
	}
	for _, r := range list {
		switch {
		case r.What == "phase":
			out.Phases[r.Key] = r.Count
		case r.What == "event":
			out.Events[r.Key] = r.Count
		case r.Key == "Pending":
			out.PendingReasons = append(out.PendingReasons, ReasonCount{Reason: r.Reason, Count: r.Count})
		}
	}
	slices.SortFunc(out.PendingReasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return out, nil
}
