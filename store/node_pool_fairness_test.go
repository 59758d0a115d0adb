package store_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

func TestS28_NodePoolFairnessIsOffUntilAnAdminSetsIt(t *testing.T) {
	t.Parallel()
	st, pool, _, _ := orgFixture(t)
	ctx := context.Background()
	ignoreStamp := cmpopts.IgnoreFields(store.NodePoolFairness{}, "UpdatedAt")

	got, err := st.NodePoolFairness(ctx, pool.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := store.NodePoolFairness{NodePoolID: pool.ID, WindowSeconds: 7 * 24 * 3600, HalfLifeSeconds: 24 * 3600, KValue: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a pool nobody set (-want +got):\n%s", diff)
	}
	if got.Scheduling().Enabled {
		t.Error("S28 is on in a pool nobody set")
	}

	changed, err := st.SetNodePoolFairness(ctx, pool.ID, store.NodePoolFairnessUpdate{Enabled: set(true), WindowSeconds: set(int64(600)), KValue: set(2.5)}, operator)
	if err != nil {
		t.Fatal(err)
	}
	want = store.NodePoolFairness{NodePoolID: pool.ID, Enabled: true, WindowSeconds: 600, HalfLifeSeconds: 24 * 3600, KValue: 2.5, UpdatedBy: operator.Subject}
	if diff := cmp.Diff(want, changed, ignoreStamp); diff != "" {
		t.Errorf("after the change (-want +got):\n%s", diff)
	}
	if changed.UpdatedAt.IsZero() {
		t.Error("the change has no time")
	}
	// a later change of one field keeps the others
	if _, err := st.SetNodePoolFairness(ctx, pool.ID, store.NodePoolFairnessUpdate{HalfLifeSeconds: set(int64(0))}, operator); err != nil {
		t.Fatal(err)
	}
	all, err := st.NodePoolFairnesses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want.HalfLifeSeconds = 0
	if diff := cmp.Diff(map[uuid.UUID]store.NodePoolFairness{pool.ID: want}, all, ignoreStamp); diff != "" {
		t.Errorf("the pools somebody set (-want +got):\n%s", diff)
	}
	wantSched := scheduler.TimeBasedFairness{Enabled: true, Window: 10 * time.Minute, KValue: 2.5}
	if diff := cmp.Diff(wantSched, all[pool.ID].Scheduling()); diff != "" {
		t.Errorf("as the scheduler reads it (-want +got):\n%s", diff)
	}

	entries, err := st.AuditEntries(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	first := entries[1]
	if first.Action != "update" || first.EntityType != "node-pool" || first.EntityID != pool.ID.String() || first.EntityName != pool.Name || first.Subject != operator.Subject {
		t.Errorf("audit row %+v", first)
	}
	wantChanges := map[string]any{
		"timeBasedFairness.enabled":       map[string]any{"from": false, "to": true},
		"timeBasedFairness.windowSeconds": map[string]any{"from": float64(7 * 24 * 3600), "to": float64(600)},
		"timeBasedFairness.kValue":        map[string]any{"from": float64(1), "to": 2.5},
	}
	if diff := cmp.Diff(wantChanges, first.Changes); diff != "" {
		t.Errorf("audited changes (-want +got):\n%s", diff)
	}

	// the setting goes with its pool
	spare, err := st.CreateNodePool(ctx, store.NodePoolUpdate{Name: set("spare"), LabelKey: set(store.NodePoolLabelKey)}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetNodePoolFairness(ctx, spare.ID, store.NodePoolFairnessUpdate{Enabled: set(true)}, operator); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteNodePool(ctx, spare.ID, operator); err != nil {
		t.Fatal(err)
	}
	if all, err := st.NodePoolFairnesses(ctx); err != nil || len(all) != 1 {
		t.Errorf("after the pool is deleted: %v, %v", all, err)
	}
}

func TestS28_NodePoolFairnessRefusalsNameTheField(t *testing.T) {
	t.Parallel()
	st, pool, _, _ := orgFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		u     store.NodePoolFairnessUpdate
		field string
	}{
		{store.NodePoolFairnessUpdate{WindowSeconds: set(int64(59))}, "windowSeconds"},
		{store.NodePoolFairnessUpdate{WindowSeconds: set(int64(91 * 24 * 3600))}, "windowSeconds"},
		{store.NodePoolFairnessUpdate{HalfLifeSeconds: set(int64(30))}, "halfLifeSeconds"},
		{store.NodePoolFairnessUpdate{HalfLifeSeconds: set(int64(-1))}, "halfLifeSeconds"},
		{store.NodePoolFairnessUpdate{KValue: set(-0.5)}, "kValue"},
		{store.NodePoolFairnessUpdate{KValue: set(math.NaN())}, "kValue"},
		{store.NodePoolFairnessUpdate{KValue: set(101.0)}, "kValue"},
		{store.NodePoolFairnessUpdate{Enabled: store.Optional[bool]{Set: true}}, "enabled"},
	} {
		_, err := st.SetNodePoolFairness(ctx, pool.ID, tc.u, operator)
		wantErr(t, err, store.ErrInvalid, tc.field)
		var se *store.Error
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("refusal %v names field %q, want %q", err, fieldOf(se), tc.field)
		}
	}
	// nothing half-written
	if all, err := st.NodePoolFairnesses(ctx); err != nil || len(all) != 0 {
		t.Errorf("after refusals: %v, %v", all, err)
	}
	_, err := st.SetNodePoolFairness(ctx, uuid.New(), store.NodePoolFairnessUpdate{Enabled: set(true)}, operator)
	wantErr(t, err, store.ErrNotFound, "node pool")
}

func fieldOf(e *store.Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}
