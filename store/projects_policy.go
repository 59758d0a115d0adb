package store

import (
	"context"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// applyPolicyUpdate returns the policy after u, checked against the priority dictionary.
func applyPolicyUpdate(ctx context.Context, tx pgx.Tx, p Policy, u PolicyUpdate) (Policy, error) {
	prios, err := dictionary(ctx, tx)
	if err != nil {
		return p, err
	}
	if u.DefaultPriorityID.Set {
		p.DefaultPriorityID, p.DefaultPriorityName = u.DefaultPriorityID.Value, nil
		if id := u.DefaultPriorityID.Value; id != nil {
			i := slices.IndexFunc(prios, func(x Priority) bool { return x.ID == *id })
			if i < 0 {
				return p, InvalidField("defaultPriorityId", "defaultPriorityId %s is not in the priority dictionary; list the priorities with GET /api/v1/workload-priorities", id)
			}
			p.DefaultPriorityName = &prios[i].Name
		}
	}
	setOr(&p.AllowPriorityChange, u.AllowPriorityChange, true)
	setOr(&p.AllowPreemptibilityChange, u.AllowPreemptibilityChange, true)
	for _, bound := range []struct {
		field string
		dst   **string
		u     Optional[string]
	}{{"minPriority", &p.MinPriority, u.MinPriority}, {"maxPriority", &p.MaxPriority, u.MaxPriority}} {
		if !bound.u.Set {
			continue
		}
		*bound.dst = bound.u.Value
		if v := bound.u.Value; v != nil && !slices.ContainsFunc(prios, func(x Priority) bool { return x.Name == *v }) {
			return p, InvalidField(bound.field, "%s %q is not in the priority dictionary; use one of: %s (or null for no bound)", bound.field, *v, priorityNames(prios))
		}
	}
	setOr(&p.PreemptionOrder, u.PreemptionOrder, PreemptOldest)
	setOr(&p.PreemptionMode, u.PreemptionMode, ModeTerminate)
	setOr(&p.MinRuntimeSeconds, u.MinRuntimeSeconds, 0)
	setOr(&p.Queueing, u.Queueing, QueueBestEffort)
	setOr(&p.PriorityPolicy, u.PriorityPolicy, PriorityFence)
	setOr(&p.PriorityOffset, u.PriorityOffset, 0)
	setOr(&p.ReclaimMinRuntimeSeconds, u.ReclaimMinRuntimeSeconds, 0)
	setOr(&p.PreemptionDelaySeconds, u.PreemptionDelaySeconds, 0)
	return p, checkPolicy(p, prios)
}

func setOr[T any](dst *T, o Optional[T], def T) {
	if !o.Set {
		return
	}
	*dst = def
	if o.Value != nil {
		*dst = *o.Value
	}
}

func checkPolicy(p Policy, prios []Priority) error {
	value := func(name *string) (int, bool) {
		if name == nil {
			return 0, false
		}
		i := slices.IndexFunc(prios, func(x Priority) bool { return x.Name == *name })
		return prios[i].Value, true
	}
	lo, hasLo := value(p.MinPriority)
	hi, hasHi := value(p.MaxPriority)
	def, hasDef := value(p.DefaultPriorityName)
	switch {
	case hasLo && hasHi && lo > hi:
		return InvalidField("minPriority", "minPriority %s (%d) is above maxPriority %s (%d); the allowed range would be empty", *p.MinPriority, lo, *p.MaxPriority, hi)
	case hasDef && hasLo && def < lo:
		return InvalidField("defaultPriorityId", "the default priority %s (%d) is below minPriority %s (%d); raise it or lower the bound", *p.DefaultPriorityName, def, *p.MinPriority, lo)
	case hasDef && hasHi && def > hi:
		return InvalidField("defaultPriorityId", "the default priority %s (%d) is above maxPriority %s (%d); lower it or raise the bound", *p.DefaultPriorityName, def, *p.MaxPriority, hi)
	case p.PreemptionOrder != PreemptOldest && p.PreemptionOrder != PreemptNewest:
		return InvalidField("preemptionOrder", "preemptionOrder %q is not valid; use %q (the earliest started is preempted first) or %q", p.PreemptionOrder, PreemptOldest, PreemptNewest)
	case p.PreemptionMode != ModeTerminate && p.PreemptionMode != ModeSuspend:
		return InvalidField("preemptionMode", "preemptionMode %q is not valid; use %q or %q", p.PreemptionMode, ModeTerminate, ModeSuspend)
	case p.MinRuntimeSeconds < 0:
		return InvalidField("minRuntimeSeconds", "minRuntimeSeconds is %d; it must be 0 or more", p.MinRuntimeSeconds)
	case p.Queueing != QueueBestEffort && p.Queueing != QueueStrict:
		return InvalidField("queueing", "queueing %q is not valid; use %q or %q", p.Queueing, QueueBestEffort, QueueStrict)
	case p.ReclaimMinRuntimeSeconds < 0:
		return InvalidField("reclaimMinRuntimeSeconds", "reclaimMinRuntimeSeconds is %d; it must be 0 or more", p.ReclaimMinRuntimeSeconds)
	case p.PreemptionDelaySeconds < 0:
		return InvalidField("preemptionDelaySeconds", "preemptionDelaySeconds is %d; it must be 0 or more", p.PreemptionDelaySeconds)
	}
	if err := checkPolicyBounds(p); err != nil {
		return err
	}
	return checkPriorityPolicy(p.PriorityPolicy, p.PriorityOffset)
}

// checkPriorityPolicy checks S25's fields of a department or project.
func checkPriorityPolicy(policy string, offset int) error {
	switch {
	case policy != PriorityFence && policy != PriorityOpen:
		return InvalidField("priorityPolicy", "priorityPolicy %q is not valid; use %q (priority counts only inside it, the default) or %q (its highest pending priority counts among its siblings)", policy, PriorityFence, PriorityOpen)
	case offset < -MaxPriorityOffset || offset > MaxPriorityOffset:
		return InvalidField("priorityOffset", "priorityOffset is %d; it must be a whole number from %d to %d", offset, -MaxPriorityOffset, MaxPriorityOffset)
	}
	return nil
}

func dictionary(ctx context.Context, db querier) ([]Priority, error) {
	rows, err := db.Query(ctx, `SELECT p.* FROM workload_priorities p ORDER BY p.value`)
	return scanAll[Priority](rows, err)
}

func priorityNames(prios []Priority) string {
	names := make([]string, len(prios))
	for i, p := range prios {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
