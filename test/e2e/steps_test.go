package e2e

import "testing"

// in is the env for one step of a scenario (a t.Run inside the test that made e): the same
// cluster, store and Arbiter, with failures and waits reported on the step's t, as a step may
// not end its parent test.
func (e *env) in(t *testing.T) *env {
	step := *e
	step.t = t
	return &step
}
