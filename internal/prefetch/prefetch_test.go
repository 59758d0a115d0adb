package prefetch

import "testing"

// A prefetch is only a hint: asking for memory that is not there must not fault, so that a
// loop may ask ahead past what it will read.
func TestOfNeverFaults(t *testing.T) {
	Of[int64](nil)
	var x struct{ a, b int64 }
	Of(&x)
	Of(&x.b)
}
