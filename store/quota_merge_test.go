package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/store"
)

// A PATCH of a unit's resources replaces the quotas of the pools it names (by id or by name),
// keeps the others as they are (no limit stays no limit) and adds new pools after them.
func TestMergeQuotas_PatchReplacesNamedPoolsKeepsTheRest(t *testing.T) {
	a100, h100, l4 := uuid.New(), uuid.New(), uuid.New()
	ten := 10
	current := []store.Quota{
		{NodePoolID: a100, NodePoolName: "a100", Deserved: 4, Limit: 8, OverQuotaWeight: 2},
		{NodePoolID: h100, NodePoolName: "h100", Deserved: 2, Limit: store.NoLimit, OverQuotaWeight: 1},
	}
	got := store.MergeQuotas(current, []store.QuotaInput{
		{NodePoolName: "a100", Deserved: 6, Limit: &ten},
		{NodePoolID: &l4, Deserved: 1},
	})
	one, two, eight := 1, 2, 8
	want := []store.QuotaInput{
		{NodePoolName: "a100", Deserved: 6, Limit: &ten},
		{NodePoolID: &h100, Deserved: 2, OverQuotaWeight: &one},
		{NodePoolID: &l4, Deserved: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
	// Nothing named: everything kept, limits as they were.
	kept := store.MergeQuotas(current[:1], nil)
	if d := cmp.Diff([]store.QuotaInput{{NodePoolID: &a100, Deserved: 4, Limit: &eight, OverQuotaWeight: &two}}, kept); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
}
