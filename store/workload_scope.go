package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
)

// WorkloadScope narrows workloads to those a caller may see: every workload (All), or those
// of Projects. A workload belongs to its project by id (workloads.project_id, written by the
// recorder and by a submission): a renamed project keeps its workloads, and a project made
// later with a deleted or renamed one's old name inherits none of them. A workload recorded
// with no project id (one of no project) is in no scope but All.
type WorkloadScope struct {
	All bool
	// Projects are the projects the caller may read, as they are now (their current names).
	Projects []ProjectRef
}

// ProjectIDs are the ids of the scope's projects, never nil.
func (s WorkloadScope) ProjectIDs() []uuid.UUID {
	ids := make([]uuid.UUID, 0, len(s.Projects))
	for _, p := range s.Projects {
		ids = append(ids, p.ID)
	}
	return ids
}

// Includes says whether the scope holds the workloads of the project with id (nil: no
// project, which only All holds).
func (s WorkloadScope) Includes(id *uuid.UUID) bool {
	return s.All || id != nil && slices.ContainsFunc(s.Projects, func(p ProjectRef) bool { return p.ID == *id })
}

// IncludesNamed says whether the scope holds the project that has this name now. Only for
// what names projects as they are now (the scheduler's last cycle, the project menus); a
// record is matched by its project id (Includes), never by the name it recorded.
func (s WorkloadScope) IncludesNamed(name string) bool {
	return s.All || name != "" && slices.ContainsFunc(s.Projects, func(p ProjectRef) bool { return p.Name == name })
}

// Names are the current names of the scope's projects.
func (s WorkloadScope) Names() []string {
	names := make([]string, 0, len(s.Projects))
	for _, p := range s.Projects {
		names = append(names, p.Name)
	}
	return names
}

// visibleWhere is the WHERE clause of the workloads a query and a scope show: the query's
// filters, unfinished ones unless includeFinished, only the scope's projects (by id).
func visibleWhere(q listquery.Query, includeFinished bool, scope WorkloadScope, args *listquery.Args) string {
	where := q.Where(WorkloadSpec, args)
	if !includeFinished {
		where += " AND w.finished_at IS NULL"
	}
	if !scope.All {
		where += " AND w.project_id = ANY(" + args.Add(scope.ProjectIDs()) + ")"
	}
	return where
}

// VisibleWorkloads lists workload records, limited to scope; finished ones (history) only when
// includeFinished.
func (s *Store) VisibleWorkloads(ctx context.Context, q listquery.Query, includeFinished bool, scope WorkloadScope) ([]WorkloadRecord, *int, error) {
	var args listquery.Args
	where := visibleWhere(q, includeFinished, scope, &args)
	sql := `SELECT ` + workloadColumns + ` FROM workloads w WHERE ` + where + ` ORDER BY ` + q.OrderBy(WorkloadSpec) + ` ` + q.Page(&args)
	rows, err := s.pool.Query(ctx, sql, args...)
	list, err := scanAll[WorkloadRecord](rows, err)
	if err != nil {
		return nil, nil, err
	}
	list, next := listquery.Next(q, list)
	return list, next, nil
}

// CountVisibleWorkloads counts the workload records VisibleWorkloads lists, every page of
// them: the same WHERE clause (visibleWhere), counted.
func (s *Store) CountVisibleWorkloads(ctx context.Context, q listquery.Query, includeFinished bool, scope WorkloadScope) (int, error) {
	var args listquery.Args
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM workloads w WHERE `+visibleWhere(q, includeFinished, scope, &args), args...).Scan(&n)
	return n, err
}

// WorkloadCursor is where a keyset walk of the workloads stopped: the sort key and the uid of
// the last row read.
type WorkloadCursor struct {
	Key any
	UID string
}

type keyedWorkload struct {
	WorkloadRecord
	SortKey any `db:"sort_key"`
}

// VisibleWorkloadsAfter is one page (at most limit rows) of VisibleWorkloads in the order of
// q, read by key instead of by offset: the rows after the cursor (nil: from the start), and
// the cursor of the page's last row (nil when the page is the last). Rows with an equal sort
// key are ordered by uid, so no row is read twice or skipped across pages, and a page costs
// the same at the end of the list as at its start. q's offset and limit are ignored.
func (s *Store) VisibleWorkloadsAfter(ctx context.Context, q listquery.Query, includeFinished bool, scope WorkloadScope, after *WorkloadCursor, limit int) ([]WorkloadRecord, *WorkloadCursor, error) {
	var args listquery.Args
	where := visibleWhere(q, includeFinished, scope, &args)
	if _, ok := WorkloadSpec.Fields[q.SortBy]; !ok {
		q.SortBy = WorkloadSpec.DefaultSort
	}
	f := WorkloadSpec.Fields[q.SortBy]
	key, cmpOp := f.Column, ">"
	if q.Desc {
		cmpOp = "<"
	}
	if after != nil {
		// The order is key (NULLS LAST), then uid, in q's direction.
		id := args.Add(after.UID)
		if after.Key == nil {
			where += fmt.Sprintf(" AND (%s IS NULL AND w.uid %s %s)", key, cmpOp, id)
		} else if k := args.Add(after.Key); strings.Contains(key, "nullif(") {
			where += fmt.Sprintf(" AND (%[1]s %[2]s %[3]s OR (%[1]s = %[3]s AND w.uid %[2]s %[4]s) OR %[1]s IS NULL)", key, cmpOp, k, id)
		} else { // a key that is never NULL: a row comparison, which an index on (key, uid) serves
			where += fmt.Sprintf(" AND (%s, w.uid) %s (%s, %s)", key, cmpOp, k, id)
		}
	}
	sql := `SELECT ` + workloadColumns + `, ` + key + ` AS sort_key FROM workloads w WHERE ` + where + ` ORDER BY ` + q.OrderBy(WorkloadSpec) + ` LIMIT ` + args.Add(limit+1)
	rows, err := s.pool.Query(ctx, sql, args...)
	list, err := scanAll[keyedWorkload](rows, err)
	if err != nil {
		return nil, nil, err
	}
	var next *WorkloadCursor
	if len(list) > limit {
		list = list[:limit]
		last := list[limit-1]
		next = &WorkloadCursor{Key: last.SortKey, UID: last.UID}
	}
	out := make([]WorkloadRecord, len(list))
	for i, r := range list {
		out[i] = r.WorkloadRecord
	}
	return out, next, nil
}
