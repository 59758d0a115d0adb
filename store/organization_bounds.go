package store

// The bounds on the numbers of departments, projects and their quotas (docs/security.md
// "Bounds on organization numbers"). Each is checked here, where every writer of these
// numbers passes (the API, the pages, creation and change alike); the decoders only refuse
// what does not fit the column. The bounds are far above any sensible setting and low enough
// that no single unit can hold the cluster's guarantees for long or jump every sibling by an
// arbitrary margin.
const (
	// MaxMinRuntimeSeconds bounds a project's minRuntimeSeconds: a week. It protects the
	// project's own work from its own preemption (S16) only.
	MaxMinRuntimeSeconds = 7 * 24 * 3600
	// MaxReclaimMinRuntimeSeconds bounds a project's reclaimMinRuntimeSeconds: a day. It
	// keeps borrowed GPUs from the projects they are guaranteed to (S17, S27), so it is short.
	MaxReclaimMinRuntimeSeconds = 24 * 3600
	// MaxPreemptionDelaySeconds bounds a project's preemptionDelaySeconds: a day.
	MaxPreemptionDelaySeconds = 24 * 3600
	// MaxPriorityOffset bounds a department's or project's priorityOffset both ways. The
	// seeded dictionary runs from 25 (very-low) to 150 (very-high): an offset of 1,000 already
	// puts a unit's least important work above any sibling's most important (see
	// PriorityWarning); more only hides mistakes.
	MaxPriorityOffset = 1000
	// MaxQuotaGPUs bounds deserved GPUs and limits in one node pool: 100,000 GPUs, more than
	// any cluster Arbiter schedules.
	MaxQuotaGPUs = 100_000
	// MaxOverQuotaWeight bounds an over-quota weight (default 2): 1,000 to 1 is as uneven a
	// share of idle GPUs as anyone means.
	MaxOverQuotaWeight = 1000
)

// checkAtMost refuses a value of field above max, naming the bound.
func checkAtMost(field string, value, max int, unit string) error {
	if value > max {
		return InvalidField(field, "%s is %d; it may be at most %d%s", field, value, max, unit)
	}
	return nil
}

// checkPolicyBounds checks a policy's durations against their bounds.
func checkPolicyBounds(p Policy) error {
	for _, b := range []struct {
		field      string
		value, max int
		unit       string
	}{
		{"minRuntimeSeconds", p.MinRuntimeSeconds, MaxMinRuntimeSeconds, " (a week)"},
		{"reclaimMinRuntimeSeconds", p.ReclaimMinRuntimeSeconds, MaxReclaimMinRuntimeSeconds, " (a day)"},
		{"preemptionDelaySeconds", p.PreemptionDelaySeconds, MaxPreemptionDelaySeconds, " (a day)"},
	} {
		if err := checkAtMost(b.field, b.value, b.max, b.unit); err != nil {
			return err
		}
	}
	return nil
}
