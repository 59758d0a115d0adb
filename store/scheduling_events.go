package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// SchedulingKinds are the workload events the Event history shows beside the audit log:
// what the scheduler or people did to running work.
var SchedulingKinds = []string{"Preempted", "Reclaimed", "Suspended", "Resumed", "PriorityChanged", "PreemptibilityChanged"}

// SchedulingEvent is a workload event with the names of its workload and its preemptor.
type SchedulingEvent struct {
	ID            int64     `db:"id"`
	WorkloadUID   string    `db:"workload_uid"`
	At            time.Time `db:"at"`
	Kind          string    `db:"kind"`
	Reason        string    `db:"reason"`
	Message       string    `db:"message"`
	Actor         string    `db:"actor"`
	PreemptorUID  string    `db:"preemptor_uid"`
	Borrowed      *int      `db:"borrowed_gpus"`
	Namespace     string    `db:"namespace"`
	Name          string    `db:"name"`
	ProjectName   string    `db:"project_name"`
	PreemptorName string    `db:"preemptor_name"`    // namespace/name; "" when not recorded
	PreemptorProj string    `db:"preemptor_project"` // the preemptor's project, as it recorded it
	// PreemptorProjectID is the preemptor's project (whether the caller may open the
	// preemptor); nil when it has none or is not recorded.
	PreemptorProjectID *uuid.UUID `db:"preemptor_project_id"`
}

// SchedulingEventFilter narrows the scheduling events: one kind (else all SchedulingKinds),
// one project, a workload by UID or by a part of its name; Scope limits them to the workloads
// a caller may see. Newest first, Limit at a time from Offset.
type SchedulingEventFilter struct {
	Kind, Project, Workload string
	Scope                   WorkloadScope
	Limit, Offset           int
}

// SchedulingEvents lists scheduling events newest first; more says another page follows.
func (s *Store) SchedulingEvents(ctx context.Context, f SchedulingEventFilter) (events []SchedulingEvent, more bool, err error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	kinds := SchedulingKinds
	if f.Kind != "" {
		kinds = []string{f.Kind}
	}
	where := []string{"e.kind = ANY(" + arg(kinds) + ")"}
	if f.Project != "" {
		// the project that has the name now, by id: a renamed project's events from before
		// the rename are its own, and a deleted project's are no one's to filter by
		where = append(where, "w.project_id IN (SELECT id FROM projects WHERE name = "+arg(f.Project)+")")
	}
	if f.Workload != "" {
		p := arg(f.Workload)
		where = append(where, "(e.workload_uid = "+p+" OR w.name ILIKE '%' || "+escapeLike(p)+" || '%')")
	}
	if !f.Scope.All {
		where = append(where, "w.project_id = ANY("+arg(f.Scope.ProjectIDs())+")")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	sql := `SELECT e.id, e.workload_uid, e.at, e.kind, e.reason, e.message, e.actor, e.preemptor_uid, e.borrowed_gpus,
	               w.namespace, w.name, w.project_name,
	               coalesce(p.namespace || '/' || p.name, '') AS preemptor_name, coalesce(p.project_name, '') AS preemptor_project,
	               p.project_id AS preemptor_project_id
	        FROM workload_events e
	        JOIN workloads w ON w.uid = e.workload_uid
	        LEFT JOIN workloads p ON p.uid = nullif(e.preemptor_uid, '')
	        WHERE ` + strings.Join(where, " AND ") + `
	        ORDER BY e.at DESC, e.id DESC LIMIT ` + arg(limit+1) + ` OFFSET ` + arg(max(0, f.Offset))
	rows, err := s.pool.Query(ctx, sql, args...)
	events, err = scanAll[SchedulingEvent](rows, err)
	if err != nil {
		return nil, false, err
	}
	if len(events) > limit {
		return events[:limit], true, nil
	}
	return events, false, nil
}

// escapeLike makes a query parameter match literally inside ILIKE: % and _ and \ escaped.
func escapeLike(param string) string {
	return `replace(replace(replace(` + param + `, '\', '\\'), '%', '\%'), '_', '\_')`
}
