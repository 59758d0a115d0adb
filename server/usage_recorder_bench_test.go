package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// BenchmarkUsageSampleOf_1000Projects10Pools is the leader's work per interval besides the
// database: turning the last cycle's plan of 1,000 projects in 10 node pools, with some
// preemptions, into a sample.
func BenchmarkUsageSampleOf_1000Projects10Pools(b *testing.B) {
	plan := &scheduler.Plan{}
	refs := map[string]store.ProjectRef{}
	var events []store.PoolPreemptions
	for p := range 10 {
		plan.NodePools = append(plan.NodePools, scheduler.NodePoolStatus{Name: fmt.Sprint("pool-", p), ReadyGPUs: 4096})
	}
	for i := range 1000 {
		name := fmt.Sprint("project-", i)
		refs[name] = store.ProjectRef{ID: uuid.New(), Name: name, DepartmentID: uuid.New()}
		for p := range 10 {
			plan.Projects = append(plan.Projects, scheduler.QueueStatus{Name: name, NodePool: fmt.Sprint("pool-", p),
				Deserved: int64(1 + i%4), Limit: scheduler.NoLimit, Allocated: int64(i % 7), AllocatedNonPreemptible: int64(i % 2),
				Borrowed: int64(max(0, i%7-1-i%4)), Requested: int64(i % 5), FairShare: float64(i%4) + 0.5})
		}
		if i%10 == 0 {
			events = append(events, store.PoolPreemptions{ProjectID: refs[name].ID, NodePool: "pool-3", Preemptions: 1})
		}
	}
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		u := usageSampleOf(at, 30*time.Second, plan, refs, events)
		if len(u.Pools) != 10 || len(u.Pools[0].Projects) != 1000 {
			b.Fatalf("%d pools, %d projects in the first", len(u.Pools), len(u.Pools[0].Projects))
		}
	}
}
