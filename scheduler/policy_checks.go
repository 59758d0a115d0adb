package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// A project's policy decides twice: when the scheduler resolves a workload's labels (S7, S8:
// resolve.go ignores or clamps what the policy forbids) and when a person asks for a priority
// or a preemptibility (a PATCH, the Workloads page's inline and bulk changes, a submission and
// their dry runs). The second is here, on the same Catalog and with the same rules, so that
// what the API accepts is what the scheduler then takes, and a refusal is a value the API
// turns into its answer.

// RefusalKind says which rule of the policy a refusal applies.
type RefusalKind string

const (
	// RefusedUnknownPriority: the name asked for is empty or not in the dictionary.
	RefusedUnknownPriority RefusalKind = "UnknownPriority"
	// RefusedPriorityChange: the project does not allow changing priority.
	RefusedPriorityChange RefusalKind = "PriorityChangeNotAllowed"
	// RefusedPriorityRange: the priority is outside the project's minPriority..maxPriority.
	RefusedPriorityRange RefusalKind = "PriorityOutOfRange"
	// RefusedPreemptibilityChange: the project does not allow changing preemptibility.
	RefusedPreemptibilityChange RefusalKind = "PreemptibilityChangeNotAllowed"
)

// PolicyRefusal is why a priority or preemptibility a person asked for is refused: the rule,
// the request's field it concerns (as the caller names it) and a sentence saying what to do.
type PolicyRefusal struct {
	Kind    RefusalKind
	Field   string
	Message string
}

func (r *PolicyRefusal) Error() string { return r.Message }

// ProjectPolicy is a project's policy with the project's name, which the refusals' sentences
// give. A nil *ProjectPolicy is a workload without a project: no policy bounds it.
type ProjectPolicy struct {
	Name   string
	Policy Policy
}

// PolicyDefaults is what a workload of the type (by name and API group, as the scheduler finds
// it) gets in a project with the policy when it asks for nothing: S7 steps 4-7 with the clamp,
// and S8 steps 3-5 from that priority. The Submit page's defaults, a submission's recorded
// values and the API's effective values are these.
func (c *Catalog) PolicyDefaults(typ, group string, policy Policy) (Priority, Preemptibility) {
	t, cat := c.typeAndCategory(&Workload{Type: typ, Group: group})
	p := c.policyPriority(policy, t, cat)
	pre, _ := c.defaultPreemptibility(t, cat, p)
	return p, pre
}

// DefaultPreemptibility is what a workload of the type at priority p gets without a
// preemptibility label (S8 steps 3-5): what removing its label gives it.
func (c *Catalog) DefaultPreemptibility(typ, group string, p Priority) Preemptibility {
	t, cat := c.typeAndCategory(&Workload{Type: typ, Group: group})
	pre, _ := c.defaultPreemptibility(t, cat, p)
	return pre
}

// Priorities is the dictionary by value, lowest first (ties by name).
func (c *Catalog) Priorities() []Priority {
	out := make([]Priority, 0, len(c.priorities))
	for _, p := range c.priorities {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Priority) int { return cmp.Or(cmp.Compare(a.Value, b.Value), strings.Compare(a.Name, b.Name)) })
	return out
}

// priorityBounds are the policy's minPriority and maxPriority as dictionary entries; a bound
// that names no entry bounds nothing (as the clamp reads it).
func (c *Catalog) priorityBounds(policy Policy) (lo Priority, hasLo bool, hi Priority, hasHi bool) {
	lo, hasLo = c.priorities[policy.MinPriority]
	hi, hasHi = c.priorities[policy.MaxPriority]
	return lo, hasLo, hi, hasHi
}

// WithinRange reports whether p is within the policy's minPriority..maxPriority.
func (c *Catalog) WithinRange(p Priority, policy Policy) bool {
	lo, hasLo, hi, hasHi := c.priorityBounds(policy)
	return !(hasLo && p.Value < lo.Value) && !(hasHi && p.Value > hi.Value)
}

// CheckPriority is the policy's answer to a person asking for the priority named asked (S7,
// S9): the dictionary entry, or why it is refused. The project must allow changing priority
// and the priority must be within its range; gives is the priority the policy gives the
// workload when it asks for none (PolicyDefaults for a new workload; for one the scheduler
// has resolved, its recorded priority). Asking for that changes nothing today, so a project
// that forbids changes accepts it (and the label keeps it if the default changes later).
// field is the request's name for the priority.
func (c *Catalog) CheckPriority(field, asked string, project *ProjectPolicy, gives string) (Priority, *PolicyRefusal) {
	if asked == "" {
		return Priority{}, c.unknownPriority(field, field+" must name a priority")
	}
	p, ok := c.priorities[asked]
	if !ok {
		return p, c.unknownPriority(field, field+" "+strconv.Quote(asked)+" is not in the priority dictionary")
	}
	if project == nil || (p.Name == gives && project.Policy.ForbidPriorityChange) {
		return p, nil
	}
	if r := PriorityChangeRefusal(field, project); r != nil {
		return p, r
	}
	lo, hasLo, hi, hasHi := c.priorityBounds(project.Policy)
	if c.WithinRange(p, project.Policy) {
		return p, nil
	}
	r := &PolicyRefusal{Kind: RefusedPriorityRange, Field: field}
	asIs := "priority " + p.Name + " (" + value(p) + ")"
	switch {
	case hasLo && hasHi:
		r.Message = asIs + " is outside project " + project.Name + "'s allowed range " + lo.Name + " (" + value(lo) + ") to " +
			hi.Name + " (" + value(hi) + "); pick a priority within it"
	case hasLo:
		r.Message = asIs + " is below project " + project.Name + "'s minPriority " + lo.Name + " (" + value(lo) + "); pick " + lo.Name + " or higher"
	default:
		r.Message = asIs + " is above project " + project.Name + "'s maxPriority " + hi.Name + " (" + value(hi) + "); pick " + hi.Name + " or lower"
	}
	return p, r
}

func value(p Priority) string { return strconv.FormatInt(int64(p.Value), 10) }

// unknownPriority refuses a name that is not in the dictionary, listing those that are.
func (c *Catalog) unknownPriority(field, said string) *PolicyRefusal {
	names := make([]string, 0, len(c.priorities))
	for _, p := range c.Priorities() {
		names = append(names, p.Name)
	}
	return &PolicyRefusal{Kind: RefusedUnknownPriority, Field: field, Message: said + "; use one of: " + strings.Join(names, ", ")}
}

// PriorityChangeRefusal says why the project's policy allows no change of priority (nil: it
// allows one, within its range).
func PriorityChangeRefusal(field string, project *ProjectPolicy) *PolicyRefusal {
	if project == nil || !project.Policy.ForbidPriorityChange {
		return nil
	}
	return &PolicyRefusal{Kind: RefusedPriorityChange, Field: field, Message: "project " + project.Name +
		" does not allow changing priority (its policy's allowPriorityChange is false); ask a research manager of the project"}
}

// PreemptibilityChangeRefusal says why the project's policy allows no change of
// preemptibility (nil: it allows one).
func PreemptibilityChangeRefusal(field string, project *ProjectPolicy) *PolicyRefusal {
	return CheckPreemptibility(field, "", project, "")
}

// CheckPreemptibility is the policy's answer to a person asking for a preemptibility (S8, S9;
// "" asks for the workload type's default, which is a change too): nil when accepted. A
// project that forbids changes still accepts gives, the one its workloads get without asking,
// as asking for it changes nothing today.
func CheckPreemptibility(field string, asked Preemptibility, project *ProjectPolicy, gives Preemptibility) *PolicyRefusal {
	if project == nil || !project.Policy.ForbidPreemptibilityChange || (asked != "" && asked == gives) {
		return nil
	}
	return &PolicyRefusal{Kind: RefusedPreemptibilityChange, Field: field, Message: "project " + project.Name +
		" does not allow changing preemptibility (its policy's allowPreemptibilityChange is false); its workloads keep their type's default"}
}
