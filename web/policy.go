package web

import (
	"context"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// The project policy's answers (S7, S8, S9) come from the core (scheduler/policy_checks.go),
// asked on the same Catalog the scheduler resolves workloads with: what a workload of a type
// gets in a project, and whether a priority or preemptibility a person asks for is allowed.
// The handlers only read the configuration for it and turn its refusals into answers.

// policyCatalog is the core's Catalog of the configuration: the dictionary, and with types the
// categories and workload types too (what the defaults need; the checks of a priority need
// only the dictionary).
func policyCatalog(ctx context.Context, props WorkloadPropertiesStore, types bool) (*scheduler.Catalog, error) {
	prios, err := props.Priorities(ctx, listquery.Query{})
	if err != nil || !types {
		return store.SchedulingCatalog(prios, nil, nil), err
	}
	cats, err := props.Categories(ctx, listquery.Query{})
	if err != nil {
		return nil, err
	}
	all, err := props.WorkloadTypes(ctx, listquery.Query{}, false)
	if err != nil {
		return nil, err
	}
	return store.SchedulingCatalog(prios, cats, all), nil
}

// policyRefusal is the core's refusal as the API's answer: a 400 naming the field, with the
// core's sentence.
func policyRefusal(r *scheduler.PolicyRefusal) error {
	if r == nil {
		return nil
	}
	return badField(r.Field, "%s", r.Message)
}

func storePriority(p scheduler.Priority) store.Priority {
	return store.Priority{Name: p.Name, Value: int(p.Value)}
}

// checkWorkloadPriority is the core's CheckPriority of a requested priority name (req) for a
// workload of the project (nil: none), on the dictionary: policyGives is the priority the
// policy gives the workload without asking. field is the request's name for it ("priority" in
// a PATCH, "spec.priorityClass" in a submission).
func (h *workloads) checkWorkloadPriority(ctx context.Context, field string, req optional[string], project *store.Project, policyGives string) (store.Priority, error) {
	dict, err := policyCatalog(ctx, h.priorities, false)
	if err != nil {
		return store.Priority{}, err
	}
	asked := req.Value
	if req.Null {
		asked = ""
	}
	p, refusal := dict.CheckPriority(field, asked, store.ProjectPolicy(project), policyGives)
	return storePriority(p), policyRefusal(refusal)
}

// policyDefaults is what a workload of the type gets in the project (nil: none chosen yet)
// without asking for a priority or a preemptibility, as the scheduler resolves it (S7 steps
// 4-7 and the clamp, S8 steps 3-5).
func policyDefaults(ctx context.Context, props WorkloadPropertiesStore, p *store.Project, t store.WorkloadType) (store.Priority, string, error) {
	catalog, err := policyCatalog(ctx, props, true)
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
