package scheduler

import "github.com/arbiterhq/arbiter/internal/prefetch"

// Loops over workloads in an order of their own (a queue, the ranking, the binds) read each
// workload's state and then what it points to: the snapshot's workload, its pods, its pending
// state. At tens of thousands of workloads each read is a cache miss, and the second waits for
// the first. These loops ask for both ahead (package prefetch): the state farAhead steps
// before they reach it, and what the state points to nearAhead steps before, once the state
// has had time to arrive. Admission, whose next step is not known ahead, asks as it advances
// each project's queue (advance).
const (
	farAhead  = 16
	nearAhead = 8
)

// ahead is called at step i of a loop over s: far asks for what step i+farAhead reads first,
// near for what step i+nearAhead reads through it.
func ahead[T any](s []T, i int, far, near func(*T)) {
	if i+farAhead < len(s) {
		far(&s[i+farAhead])
	}
	if i+nearAhead < len(s) {
		near(&s[i+nearAhead])
	}
}

// state asks for a workload's state.
func (c *cycle) state(wi int32) { prefetch.Of(&c.wls[wi]) }

// pointedTo asks for what a workload's state points to (its state must have arrived): the
// snapshot's workload, its first pod's state and, if it has one, its pending state.
func (c *cycle) pointedTo(wi int32) {
	ws := &c.wls[wi]
	prefetch.Of(ws.w)
	if ws.pods > 0 {
		prefetch.Of(&c.pods[ws.firstPod])
	}
	if ws.pend >= 0 {
		prefetch.Of(&c.pend[ws.pend])
	}
}
