package views

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLedgerShowsOnlyCausesThatRead: the ledger's table gives GPU-hours to a tenth, so a cause
// of a shortfall under 0.05 GPU-hours (which would read "0.0: preempted by …") is left out.
func TestLedgerShowsOnlyCausesThatRead(t *testing.T) {
	all := []LedgerShortfall{{Cause: "PoolFull", GPUHours: 0.02}, {Cause: "PreemptedBy", GPUHours: 0.05}, {Cause: "OwnLimit", GPUHours: 1.4}}
	want := []string{"PreemptedBy", "OwnLimit"}
	var got []string
	for _, s := range shownShortfalls(all) {
		got = append(got, s.Cause)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("causes shown (-want +got):\n%s", d)
	}
}
