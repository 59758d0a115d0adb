package store

import (
	"slices"

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
