package fairness

import (
	"strconv"
	"time"
)

// Wait is a stretch of time one workload waited to run, and why as far as the records say:
// Reason is the scheduler's waiting reason for a wait still going on, "Preempted" or
// "Reclaimed" (By naming the project that took its GPUs) for a wait after an eviction, and
// "" for a wait that ended before (a workload that starts forgets why it waited).
type Wait struct {
	Workload string
	From, To time.Time
	GPUs     float64
	Gang     int
	Reason   string
	By       string
}

// Waits are the workloads' waits up to end: from being queued to the first admission, and
// from each eviction to the next admission; a workload that finishes stops waiting.
func Waits(workloads []Workload, end time.Time) []Wait {
	var out []Wait
	for _, w := range workloads {
		stop := end
		if !w.FinishedAt.IsZero() && w.FinishedAt.Before(stop) {
			stop = w.FinishedAt
		}
		open := &Wait{Workload: w.Name, From: w.QueuedAt, GPUs: w.GPUs, Gang: w.Gang}
		admitted := false
		close := func(at time.Time) {
			if open == nil {
				return
			}
			if at.After(stop) {
				at = stop
			}
			if at.After(open.From) {
				open.To = at
				out = append(out, *open)
			}
			open = nil
		}
		for _, e := range w.Events {
			switch e.Kind {
			case "Admitted":
				admitted = true
				close(e.At)
			case "Preempted", "Reclaimed":
				close(e.At)
				open = &Wait{Workload: w.Name, From: e.At, GPUs: w.GPUs, Gang: w.Gang, Reason: e.Kind, By: e.By}
			}
		}
		if open != nil && open.Reason == "" && !admitted {
			open.Reason = w.Reason // never admitted: it waits now, for this reason
		}
		close(stop)
	}
	return out
}

// Words says a shortfall's cause in plain words.
func (s Shortfall) Words() string {
	by := s.By
	if by == "" {
		by = "another project"
	}
	switch s.Cause {
	case OwnLimit:
		return "waited on its own GPU limit"
	case ReclaimedBy:
		return "reclaimed by " + by + " (within its deserved quota)"
	case PreemptedBy:
		return "preempted by higher-priority work of " + by
	case PoolFullOfNonPreemptible:
		return "the node pool was full of non-preemptible work"
	case GangDidNotFit:
		return "its gang did not fit on the nodes with free GPUs"
	case PoolFull:
		return "waited for GPUs others held"
	case Unexplained:
		return "pending with no recorded wait"
	}
	return "cause " + strconv.Quote(string(s.Cause))
}
