package workloads

import (
	"sync"

	"github.com/arbiterhq/arbiter/store"
)

// A dry run (the submission routes' ?dryRun=true, the Submit page's panel, the dry run made
// just before a submission from that page) runs a whole scheduling cycle over the replica's
// snapshot, and a start estimate when the workload would wait: far more than any other
// request. DryRunLimits bounds how many run at once in this replica, in all and per caller, so
// that a few people typing, or a script, cannot take the replica's CPU from everyone else. A
// dry run past either bound is refused at once (429 with Retry-After), never queued
// (docs/api.md "Dry runs").
type DryRunLimits struct {
	perReplica, perCaller int

	mu      sync.Mutex
	running int
	// byCaller counts the slots each caller holds; a caller is here only while it holds one,
	// so it has at most perReplica entries.
	byCaller map[string]int
}

const (
	// DefaultDryRunsPerReplica and DefaultDryRunsPerCaller are the bounds when none is
	// configured (--dry-runs-per-replica, --dry-runs-per-caller): a replica's two cores run
	// eight cycles at once without starving its own scheduling loop for long, and two per
	// caller let one person's panel and one API call overlap.
	DefaultDryRunsPerReplica = 8
	DefaultDryRunsPerCaller  = 2
	// dryRunRetryAfter is the Retry-After of a refused dry run, in seconds: a dry run takes
	// well under a second at the sizes Arbiter is measured at (docs/operations.md).
	dryRunRetryAfter = 1
)

// NewDryRunLimits bounds dry runs to perReplica at once in the replica and perCaller at once
// per caller; a bound under 1 is taken as 1.
func NewDryRunLimits(perReplica, perCaller int) *DryRunLimits {
	return &DryRunLimits{perReplica: max(perReplica, 1), perCaller: max(perCaller, 1), byCaller: map[string]int{}}
}

// Bounds are the dry runs the replica runs at once, in all and per caller.
func (l *DryRunLimits) Bounds() (perReplica, perCaller int) { return l.perReplica, l.perCaller }

// Acquire takes a slot for caller (who asks: SubmitterOf its identity), or refuses (store.ErrBusy,
// with RetryAfter) saying which bound it hit. release gives the slot back; call it once.
func (l *DryRunLimits) Acquire(caller string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.byCaller[caller]; n >= l.perCaller {
		return nil, store.Busy(dryRunRetryAfter,
			"you already have %d dry runs running, the most one caller may run at once; wait for them to answer and try again in %d second",
			n, dryRunRetryAfter)
	}
	if l.running >= l.perReplica {
		return nil, store.Busy(dryRunRetryAfter,
			"this server already runs %d dry runs, the most it runs at once; try again in %d second", l.running, dryRunRetryAfter)
	}
	l.running++
	l.byCaller[caller]++
	var once sync.Once
	return func() { once.Do(func() { l.release(caller) }) }, nil
}

func (l *DryRunLimits) release(caller string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	if l.byCaller[caller]--; l.byCaller[caller] <= 0 {
		delete(l.byCaller, caller)
	}
}
