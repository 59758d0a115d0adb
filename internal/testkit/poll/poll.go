// Package poll is the one way tests wait for something to become true: a condition checked
// every interval until a deadline, and a failure that says what was awaited, for how long,
// and what was last seen. Tests wait for conditions, never for fixed times.
package poll

import (
	"testing"
	"time"
)

// Interval is how often a condition is checked: often enough that a test waits little past
// the moment it holds, seldom enough not to load two cores shared with a control plane.
const Interval = 50 * time.Millisecond

// Until checks cond every Interval until it holds, and fails the test if it has not within
// timeout: "waited 30s until <what>".
func Until(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !Within(timeout, cond) {
		t.Fatalf("waited %s until %s; it did not happen", timeout, what)
	}
}

// UntilNil checks cond every Interval until it returns nil, and fails the test if it has not
// within timeout, with the last error cond gave (what was seen instead).
func UntilNil(t testing.TB, what string, timeout time.Duration, cond func() error) {
	t.Helper()
	var last error
	if !Within(timeout, func() bool { last = cond(); return last == nil }) {
		t.Fatalf("waited %s until %s; last seen: %v", timeout, what, last)
	}
}

// Within checks cond every Interval and reports whether it held within timeout, for a caller
// that decides itself what a timeout means (a benchmark's figure, a logged exception).
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Interval)
	}
	return true
}
