package server

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// TestS28_ANewLeaderSeedsPastUseFromTheHistory: the usage history recorded alpha holding the
// whole pool for the first half of the last hour and beta for the second; a new leader's
// account reads as the account of the leader that watched it all.
func TestS28_ANewLeaderSeedsPastUseFromTheHistory(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	const interval = 30 * time.Second
	now := time.Now().UTC().Truncate(interval)
	start := now.Add(-time.Hour)
	alpha, beta := uuid.New(), uuid.New()
	projects := []scheduler.Project{{Name: "alpha", ID: alpha.String()}, {Name: "beta", ID: beta.String()}}
	for _, halfLife := range []time.Duration{0, 15 * time.Minute} {
		pools := []scheduler.NodePool{{Name: "a100", TimeBasedFairness: scheduler.TimeBasedFairness{Enabled: true, Window: time.Hour, HalfLife: halfLife, KValue: 1}}}
		watched := scheduler.NewUsageDecay(pools)
		for at := start; at.Before(now); at = at.Add(interval) {
			holder, name := alpha, "alpha"
			if at.Sub(start) >= 30*time.Minute {
				holder, name = beta, "beta"
			}
			plan := &scheduler.Plan{NodePools: []scheduler.NodePoolStatus{{Name: "a100", GPUs: 8, ReadyGPUs: 8}},
				Projects: []scheduler.QueueStatus{{Name: name, NodePool: "a100", Allocated: 8}}}
			watched.Observe(at, plan, pools)
			if halfLife != 0 {
				continue // recorded once
			}
			sample := store.UsageSample{At: at, Interval: interval, Pools: []store.PoolUsage{{NodePool: "a100", CapacityGPUs: 8,
				Projects: []store.ProjectUsage{{ProjectID: holder, DepartmentID: uuid.New(), Preemptible: 8}}}}}
			if _, err := st.RecordUsageSample(ctx, sample); err != nil {
				t.Fatal(err)
			}
		}
		seeded, err := usageFromHistory(ctx, st, pools, projects, now, interval)
		if err != nil {
			t.Fatal(err)
		}
		want, got := watched.Value(now, pools), seeded.Value(now, pools)
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 0.02)); diff != "" {
			t.Errorf("half-life %s: past use seeded from the history (-watched +seeded):\n%s", halfLife, diff)
		}
		if halfLife == 0 && (got["a100"]["alpha"] < 0.45 || got["a100"]["beta"] < 0.45) {
			t.Errorf("without decay each project used half the pool over the hour: %v", got)
		}
	}
}
