package workloads

import (
	"context"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// ChangeChoices are what the caller may change on a workload, for a page's controls: each
// refusal is the sentence the change would be refused with, so a control is never offered that
// the change would refuse.
type ChangeChoices struct {
	Refused              error    // why neither priority nor preemptibility can change (nil: they can)
	PriorityLocked       string   // why the project's policy allows no priority change
	PreemptibilityLocked string   // why the project's policy allows no preemptibility change
	Priorities           []string // the names it may be set to: within the project's range, and its own
}

// ChangeChoicesFor returns what the caller may change on each record of a list, with prios the
// priority dictionary (in the order to offer them); each project is read once, by id.
func (s *Service) ChangeChoicesFor(ctx context.Context, who auth.Identity, prios []store.Priority) func(r store.WorkloadRecord) (ChangeChoices, error) {
	type project struct {
		scope auth.Scope
		p     *store.Project
	}
	projects := map[uuid.UUID]project{} // uuid.Nil for records of no project
	dict := store.SchedulingCatalog(prios, nil, nil)
	return func(r store.WorkloadRecord) (ChangeChoices, error) {
		key := uuid.Nil
		if r.ProjectID != nil {
			key = *r.ProjectID
		}
		pr, ok := projects[key]
		if !ok {
			scope, p, err := s.ProjectOf(ctx, r)
			if err != nil {
				return ChangeChoices{}, err
			}
			pr = project{scope, p}
			projects[key] = pr
		}
		var out ChangeChoices
		out.Refused = MayChange(who, r, pr.scope)
		policy := store.ProjectPolicy(pr.p)
		if refusal := scheduler.PriorityChangeRefusal("priority", policy); refusal != nil {
			out.PriorityLocked = refusal.Message
		}
		if refusal := scheduler.PreemptibilityChangeRefusal("preemptibility", policy); refusal != nil {
			out.PreemptibilityLocked = refusal.Message
		}
		var bounds scheduler.Policy // a workload of no project is bound by no range
		if pr.p != nil {
			bounds = pr.p.Policy.Scheduling()
		}
		for _, x := range prios {
			if dict.WithinRange(scheduler.Priority{Name: x.Name, Value: int32(x.Value)}, bounds) || x.Name == r.PriorityName {
				out.Priorities = append(out.Priorities, x.Name)
			}
		}
		return out, nil
	}
}
