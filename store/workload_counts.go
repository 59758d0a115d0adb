package store

import (
	"context"
	"time"
)

// WorkloadCounts is what the Overview counts over the workload records a caller may see:
// unfinished workloads by phase, waiting ones by phase, reason and project, and scheduling
// events by kind since a moment. The Overview's figures are made from it by a pure function
// (web.overviewFigures), so this only groups and counts.
type WorkloadCounts struct {
	Phases  map[string]int // unfinished records by phase
	Waiting []WaitingCount // waiting records (WaitingSQL) by phase, reason and project
	Events  map[string]int // Preempted and Reclaimed events since the moment asked for
}

// WaitingCount is how many waiting workloads of one project wait in one phase for one reason
// ("" when the scheduler has given none yet).
type WaitingCount struct {
	Phase, Reason, Project string
	Count                  int
}

// countWorkloadsSQL counts in one statement (one scan of the unfinished records, grouped by
// phase and by phase, reason, project and whether they wait; one of the recent events): $1
// every workload, else those of the projects whose ids are $2; events since $3.
const countWorkloadsSQL = `
	SELECT CASE WHEN grouping(w.reason) = 1 THEN 'phase' ELSE 'waiting' END AS what, w.phase AS key,
	       coalesce(w.reason, '') AS reason, coalesce(w.project_name, '') AS project,
	       coalesce(` + WaitingSQL + `, false) AS waiting, count(*)::int AS count
	FROM workloads w
	WHERE w.finished_at IS NULL AND ($1 OR w.project_id = ANY($2))
	GROUP BY GROUPING SETS ((w.phase), (w.phase, w.reason, w.project_name, ` + WaitingSQL + `))
	UNION ALL
	SELECT 'event', e.kind, '', '', false, count(*)::int
	FROM workload_events e
	WHERE e.kind IN ('Preempted', 'Reclaimed') AND e.at >= $3
	  AND ($1 OR e.workload_uid IN (SELECT uid FROM workloads WHERE project_id = ANY($2)))
	GROUP BY e.kind`

// CountWorkloads counts the unfinished workloads in scope by phase and the waiting ones by
// phase, reason and project, and the Preempted and Reclaimed events of workloads in scope
// since since.
func (s *Store) CountWorkloads(ctx context.Context, scope WorkloadScope, since time.Time) (WorkloadCounts, error) {
	projects := scope.ProjectIDs()
	type row struct {
		What    string `db:"what"`
		Key     string `db:"key"`
		Reason  string `db:"reason"`
		Project string `db:"project"`
		Waiting bool   `db:"waiting"`
		Count   int    `db:"count"`
	}
	rows, err := s.pool.Query(ctx, countWorkloadsSQL, scope.All, projects, since)
	list, err := scanAll[row](rows, err)
	out := WorkloadCounts{Phases: map[string]int{}, Events: map[string]int{}, Waiting: []WaitingCount{}}
	if err != nil {
		return out, err
	}
	for _, r := range list {
		switch {
		case r.What == "phase":
			out.Phases[r.Key] = r.Count
		case r.What == "event":
			out.Events[r.Key] = r.Count
		case r.Waiting:
			out.Waiting = append(out.Waiting, WaitingCount{Phase: r.Key, Reason: r.Reason, Project: r.Project, Count: r.Count})
		}
	}
	return out, nil
}
