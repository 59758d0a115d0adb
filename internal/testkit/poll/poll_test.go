package poll

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestWithin_HoldsWhenTheConditionComesTrueAndNotPastTheDeadline(t *testing.T) {
	n := 0
	if !Within(time.Second, func() bool { n++; return n == 3 }) {
		t.Errorf("a condition true at the third check did not hold")
	}
	if Within(3*Interval, func() bool { return false }) {
		t.Errorf("a condition never true held")
	}
}

// fakeTB records a failure instead of ending the test.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestUntilNil_FailsWithWhatWasAwaitedAndLastSeen(t *testing.T) {
	f := &fakeTB{TB: t}
	UntilNil(f, "the Job runs", 2*Interval, func() error { return errors.New("Pending") })
	if !strings.Contains(f.failed, "until the Job runs") || !strings.Contains(f.failed, "last seen: Pending") {
		t.Errorf("the failure reads %q, want what was awaited and what was last seen", f.failed)
	}
	f = &fakeTB{TB: t}
	Until(f, "the Job runs", time.Second, func() bool { return true })
	if f.failed != "" {
		t.Errorf("a condition met at once failed the test: %s", f.failed)
	}
}
