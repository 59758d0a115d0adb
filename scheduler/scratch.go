package scheduler

import "sync"

// scratch is the memory of a cycle's large working arrays, handed from one cycle to the next.
// At tens of thousands of workloads a cycle's own state is tens of megabytes; allocated afresh
// each cycle, writing it cost more than the work done in it (the kernel supplies and zeroes
// new pages, and the collector runs more often), and it is the same size every cycle. Nothing
// here outlives its cycle: the plan's own lists are always new.
type scratch struct {
	wls          []wlState
	pods         []podState
	pend         []pendState
	binds        []placedPod
	runningOrder []rankItem
	started      []rankItem
	listed       []heldBy
	ranked       []int32 // the projects' ranked lists, carved out of one array
	queues       []int32 // the projects' queues, likewise
	queueKeys    []queueKey
	held         []int64
	seen         []uint64
	// loading's (loadWorkloads)
	podAt, podNode, gangs []int32
	in                    []loadIn
}

// scratches holds the memory of finished cycles. A sync.Pool is bounded by the collector
// (what sits unused through two collections is freed) and gives concurrent cycles (the
// scheduler's, a dry run, the start estimate) a set each.
var scratches = sync.Pool{New: func() any { return new(scratch) }}

// reuse gives s emptied with room for n, allocating only when it has less.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// release returns the cycle's arrays for the next cycle. Those holding pointers into the
// snapshot are cleared, so that a kept array does not keep an old snapshot alive.
func (c *cycle) release() {
	s := c.scratch
	if s == nil {
		return
	}
	clear(c.wls)
	clear(c.pods)
	clear(c.pend)
	s.wls, s.pods, s.pend = c.wls[:0], c.pods[:0], c.pend[:0]
	s.binds, s.runningOrder = c.binds[:0], c.runningOrder[:0]
	c.scratch = nil
	scratches.Put(s)
}
