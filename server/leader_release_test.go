package server

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// memoryLease is a Lease lock in memory for replica a: Get reads its holder, Update writes it.
type memoryLease struct {
	holder  string
	updates int
}

func (m *memoryLease) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return &resourcelock.LeaderElectionRecord{HolderIdentity: m.holder, LeaseDurationSeconds: 4}, []byte(m.holder), nil
}
func (m *memoryLease) Create(context.Context, resourcelock.LeaderElectionRecord) error { return nil }
func (m *memoryLease) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	m.updates++
	m.holder = r.HolderIdentity
	return nil
}
func (m *memoryLease) RecordEvent(string) {}
func (m *memoryLease) Identity() string   { return "a" }
func (m *memoryLease) Describe() string   { return "memory/lease" }

// releaseAsClientGo is what client-go's LeaderElector.release does with ReleaseOnCancel: it
// reads the lease (for its resource version), then, if its own last observed record names
// it, writes an empty holder. After a renewal that failed without reading the lease (a
// replica frozen past its lease wakes to an expired renew deadline) that observed record is
// stale: the lease may be another replica's by then.
func releaseAsClientGo(lock resourcelock.Interface) error {
	rec, _, err := lock.Get(context.Background())
	if err != nil {
		return err
	}
	return lock.Update(context.Background(), resourcelock.LeaderElectionRecord{LeaderTransitions: rec.LeaderTransitions, LeaseDurationSeconds: 1})
}

// A replica that wakes from a freeze after another took the lease does not release the other's
// lease: client-go's release would (TestFailover_LeaderFrozen failed so in a full run: replica
// a, woken, emptied b's lease, took it again and bound while b still acted).
func TestReleaseLeavesAnotherReplicasLeaseAlone(t *testing.T) {
	taken := &memoryLease{holder: "b"}
	if err := releaseAsClientGo(&renewalClock{Interface: taken, base: time.Now()}); err == nil {
		t.Errorf("replica a released the lease replica b holds")
	}
	if taken.holder != "b" || taken.updates != 0 {
		t.Errorf("the lease is held by %q after %d updates, want b's untouched", taken.holder, taken.updates)
	}
	held := &memoryLease{holder: "a"}
	if err := releaseAsClientGo(&renewalClock{Interface: held, base: time.Now()}); err != nil || held.holder != "" {
		t.Errorf("replica a did not release its own lease: holder %q, err %v", held.holder, err)
	}
}
