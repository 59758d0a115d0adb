package listquery

import "testing"

// Filter.Holds is the SQL condition's meaning over text in memory.
func TestFilterHoldsAsTheConditionDoes(t *testing.T) {
	cases := []struct {
		op        Op
		value, in string
		want      bool
	}{
		{Eq, "a100", "a100", true}, {Eq, "a100", "A100", false},
		{NotEq, "a100", "h100", true},
		{LessEq, "b", "a", true}, {GreaterEq, "b", "a", false},
		{Contains, "GPU", "kwok-gpu-1", true}, {NotContains, "gpu", "kwok-GPU-1", false},
		{StartsWith, "KWOK", "kwok-a100", true}, {EndsWith, "-1", "kwok-a100-1", true}, {EndsWith, "-2", "kwok-a100-1", false},
	}
	for _, c := range cases {
		if got := (Filter{Op: c.op, Value: c.value}).Holds(c.in); got != c.want {
			t.Errorf("%q %s %q: %v, want %v", c.in, c.op, c.value, got, c.want)
		}
	}
}
