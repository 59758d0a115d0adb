package workloads

import (
	"cmp"
	"context"
	"slices"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// The project policy's answers (S7, S8, S9) come from the core (scheduler/policy_checks.go),
// asked on the same Catalog the scheduler resolves workloads with: what a workload of a type
// gets in a project, and whether a priority or preemptibility a person asks for is allowed.
// The service only reads the configuration for it and turns its refusals into errors.

// Catalog is the core's Catalog of the configuration: the dictionary, and with types the
// categories and workload types too (what the defaults need; the checks of a priority need
// only the dictionary).
func (s *Service) Catalog(ctx context.Context, types bool) (*scheduler.Catalog, error) {
	prios, err := s.config.Priorities(ctx, listquery.Query{})
	if err != nil || !types {
		return store.SchedulingCatalog(prios, nil, nil), err
	}
	cats, err := s.config.Categories(ctx, listquery.Query{})
	if err != nil {
		return nil, err
	}
	all, err := s.config.WorkloadTypes(ctx, listquery.Query{}, false)
	if err != nil {
		return nil, err
	}
	return store.SchedulingCatalog(prios, cats, all), nil
}

// policyRefusal is the core's refusal as an error: invalid, naming the field, with the core's
// sentence.
func policyRefusal(r *scheduler.PolicyRefusal) error {
	if r == nil {
		return nil
	}
	return store.InvalidField(r.Field, "%s", r.Message)
}

func storePriority(p scheduler.Priority) store.Priority {
	return store.Priority{Name: p.Name, Value: int(p.Value)}
}

// PolicyDefaults is what a workload of the type gets in the project (nil: none chosen yet)
// without asking for a priority or a preemptibility, as the scheduler resolves it (S7 steps
// 4-7 and the clamp, S8 steps 3-5).
func (s *Service) PolicyDefaults(ctx context.Context, p *store.Project, t store.WorkloadType) (store.Priority, string, error) {
	catalog, err := s.Catalog(ctx, true)
	if err != nil {
		return store.Priority{}, "", err
	}
	var policy scheduler.Policy
	if p != nil {
		policy = p.Policy.Scheduling()
	}
	prio, preemptibility := catalog.PolicyDefaults(t.Name, t.Group, policy)
	return storePriority(prio), string(preemptibility), nil
}

// PrioritiesByValue is the priority dictionary, lowest value first (what a page offers).
func (s *Service) PrioritiesByValue(ctx context.Context) ([]store.Priority, error) {
	prios, err := s.config.Priorities(ctx, listquery.Query{SortBy: "value"})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(prios, func(a, b store.Priority) int { return cmp.Compare(a.Value, b.Value) })
	return prios, nil
}
