package kube

import (
	"context"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// TestWaitSyncedWaitsForEveryList: the start's wait returns once every informer and handler
// it is given has its first list, whichever comes last, and not before; and reports false
// when the process stops while one never does.
func TestWaitSyncedWaitsForEveryList(t *testing.T) {
	looks := 0
	after := func(n int) cache.InformerSynced {
		return func() bool { return looks >= n }
	}
	counting := func() bool { looks++; return true }
	if !waitSynced(t.Context(), counting, after(3), after(7), after(5)) {
		t.Fatal("waitSynced reported false though every list came in")
	}
	if looks != 7 {
		t.Errorf("waitSynced returned after %d looks, want 7: the slowest list's", looks)
	}

	ctx, cancel := context.WithCancel(t.Context())
	never := func() bool { cancel(); return false }
	if waitSynced(ctx, after(0), never) {
		t.Error("waitSynced reported true though one list never came in")
	}
}
