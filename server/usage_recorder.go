package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// The usage history (docs/operations.md "Usage history") is written by the leader alone: each
// term runs a usage recorder that, at every multiple of the interval (UTC), turns the last
// cycle's plan into a sample of every node pool (store.RecordUsageSample). A standby has no
// term, so it records nothing. A sample's key is its interval, so a restarted or new leader
// that samples an interval already written adds nothing; a failover loses the intervals during
// which no replica leads (with the default lease timings, at most one 30 s interval). The
// recorder also rolls up closed hours and days and prunes what is past its retention, every
// usageUpkeepEvery, each run bounded.

// DefaultUsageInterval is how often the leader records the usage history.
const DefaultUsageInterval = 30 * time.Second

const (
	// usageEventsLag: a sample counts the preemptions and reclaims of the interval that ended
	// this long before it, so that the events the workload recorder writes a moment after they
	// happen are there when counted. Consecutive samples' windows still meet end to start.
	usageEventsLag = 10 * time.Second
	// usageStaleAfter: a plan older than this (a scheduler whose cycles stopped) is not
	// recorded as the present.
	usageStaleAfter = 2 * time.Minute
	// usageSampleTimeout bounds one sample's database work (besides each call's own bound).
	usageSampleTimeout = 20 * time.Second
	// usageUpkeepEvery is how often the roll-up and the pruning run; each run sums at most
	// usageRollUpPeriods hours and days and removes at most usagePruneRows rows of each table,
	// within usageUpkeepTimeout.
	usageUpkeepEvery   = 5 * time.Minute
	usageRollUpPeriods = 24
	usagePruneRows     = 20000
	usageUpkeepTimeout = time.Minute
	// usageRefsEvery is how long the projects' ids are used before they are read again (at
	// once when a plan names a project not among them).
	usageRefsEvery = time.Minute
)

// validUsageInterval accepts whole seconds that divide an hour, so that samples never straddle
// the hours they are rolled up into.
func validUsageInterval(d time.Duration) error {
	if d < time.Second || d%time.Second != 0 || time.Hour%d != 0 {
		return fmt.Errorf("--usage-interval %s: use whole seconds that divide an hour, such as 30s, 1m or 5m", d)
	}
	return nil
}

// usageRecorder records the usage history during one term.
type usageRecorder struct {
	st        *store.Store
	last      func() *kube.Result // the last cycle
	acting    func() bool         // whether this replica may act now (leads, lease fresh)
	interval  time.Duration
	retention store.UsageRetention
	log       *slog.Logger

	refs       map[string]store.ProjectRef // by project name
	refsAt     time.Time
	lastUpkeep time.Time
	// tried counts the samples this recorder set out to write (acting, with a fresh plan).
	tried atomic.Int64
}

// recordUsage runs a usage recorder until the term ends.
func recordUsage(term context.Context, c Config, st *store.Store, sched *kube.Scheduler, acting func() bool, log *slog.Logger) {
	r := &usageRecorder{st: st, last: sched.Last, acting: acting, interval: c.UsageInterval,
		retention: c.usageRetention(), log: log}
	if r.interval == 0 {
		r.interval = DefaultUsageInterval
	}
	r.run(term)
}

// run samples at every multiple of the interval until ctx ends, with the upkeep in between.
func (r *usageRecorder) run(ctx context.Context) {
	for {
		now := time.Now()
		tick := now.Truncate(r.interval).Add(r.interval)
		timer := time.NewTimer(tick.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		sampleCtx, cancel := context.WithTimeout(ctx, usageSampleTimeout)
		_, err := r.sample(sampleCtx, tick)
		cancel()
		if err != nil && ctx.Err() == nil {
			r.log.Warn("usage sample not recorded; the history misses this interval", "at", tick, "err", err)
		}
		if time.Since(r.lastUpkeep) >= usageUpkeepEvery {
			r.upkeep(ctx, time.Now())
		}
	}
}

// sample records the interval starting at at from the last cycle's plan, if this replica acts
// and the plan is fresh; recorded is false when it did not, or when that interval was written
// already.
func (r *usageRecorder) sample(ctx context.Context, at time.Time) (recorded bool, err error) {
	if !r.acting() {
		return false, nil
	}
	res := r.last()
	if res == nil || res.Plan == nil {
		return false, nil
	}
	if at.Sub(res.At) > usageStaleAfter {
		r.log.Warn("the last scheduling cycle is too old to record as the present; no usage sample", "cycle_at", res.At, "at", at)
		return false, nil
	}
	r.tried.Add(1)
	refs, err := r.projectRefs(ctx, res.Plan, at)
	if err != nil {
		return false, err
	}
	events, err := r.st.PreemptionsBetween(ctx, at.Add(-r.interval-usageEventsLag), at.Add(-usageEventsLag))
	if err != nil {
		return false, err
	}
	if !r.acting() { // the lease may have gone while reading
		return false, nil
	}
	return r.st.RecordUsageSample(ctx, usageSampleOf(at, r.interval, res.Plan, refs, events))
}

// projectRefs are the projects' ids by name, read again when old or when the plan names a
// project not among them.
func (r *usageRecorder) projectRefs(ctx context.Context, plan *scheduler.Plan, now time.Time) (map[string]store.ProjectRef, error) {
	fresh := r.refs != nil && now.Sub(r.refsAt) < usageRefsEvery
	for i := 0; fresh && i < len(plan.Projects); i++ {
		_, fresh = r.refs[plan.Projects[i].Name]
	}
	if fresh {
		return r.refs, nil
	}
	list, err := r.st.ProjectRefs(ctx)
	if err != nil {
		return nil, err
	}
	r.refs = make(map[string]store.ProjectRef, len(list))
	for _, p := range list {
		r.refs[p.Name] = p
	}
	r.refsAt = now
	return r.refs, nil
}

// upkeep rolls up closed hours and days and prunes what is past its retention.
func (r *usageRecorder) upkeep(ctx context.Context, now time.Time) {
	if !r.acting() {
		return
	}
	r.lastUpkeep = now
	ctx, cancel := context.WithTimeout(ctx, usageUpkeepTimeout)
	defer cancel()
	rolled, err := r.st.RollUpUsage(ctx, now, 2*r.interval, usageRollUpPeriods)
	if err != nil {
		r.log.Warn("usage history not rolled up; trying again later", "err", err)
		return
	}
	pruned, err := r.st.PruneUsage(ctx, now, r.retention, usagePruneRows)
	if err != nil {
		r.log.Warn("usage history not pruned; trying again later", "err", err)
		return
	}
	r.log.Debug("usage history kept", "hours_rolled_up", rolled.Hours, "days_rolled_up", rolled.Days,
		"samples_pruned", pruned.Samples, "hours_pruned", pruned.Hours, "days_pruned", pruned.Days)
}

type projectPool struct {
	project  uuid.UUID
	nodePool string
}

// usageSampleOf is the sample of one moment made from a cycle's plan: per node pool its ready
// GPUs, and per project with any non-zero figure there its GPUs allocated (non-preemptible,
// preemptible inside deserved quota, borrowed), requested by pending work, deserved, its fair
// share, and its preemptions and reclaims (events; those of a workload whose record names no
// pool of the plan count in the project's first pool). Projects the organization does not know
// by name (deleted since the cycle) are left out.
func usageSampleOf(at time.Time, interval time.Duration, plan *scheduler.Plan, refs map[string]store.ProjectRef, events []store.PoolPreemptions) store.UsageSample {
	u := store.UsageSample{At: at, Interval: interval, Pools: make([]store.PoolUsage, len(plan.NodePools))}
	poolIndex := make(map[string]int, len(plan.NodePools))
	for i, p := range plan.NodePools {
		u.Pools[i] = store.PoolUsage{NodePool: p.Name, CapacityGPUs: float64(p.ReadyGPUs)}
		poolIndex[p.Name] = i
	}
	counts := make(map[projectPool]store.PoolPreemptions, len(events))
	for _, e := range events {
		k := projectPool{e.ProjectID, e.NodePool}
		c := counts[k]
		c.Preemptions += e.Preemptions
		c.Reclaims += e.Reclaims
		counts[k] = c
	}
	// events of a workload in no pool of the plan go to its project's first pool
	if len(counts) > 0 {
		firstPool := map[uuid.UUID]string{}
		for i := range plan.Projects {
			if ref, ok := refs[plan.Projects[i].Name]; ok {
				if _, seen := firstPool[ref.ID]; !seen {
					firstPool[ref.ID] = plan.Projects[i].NodePool
				}
			}
		}
		for k, c := range counts {
			if _, ok := poolIndex[k.nodePool]; ok {
				continue
			}
			delete(counts, k)
			if pool, ok := firstPool[k.project]; ok {
				to := counts[projectPool{k.project, pool}]
				to.Preemptions += c.Preemptions
				to.Reclaims += c.Reclaims
				counts[projectPool{k.project, pool}] = to
			}
		}
	}
	for i := range plan.Projects {
		s := &plan.Projects[i]
		ref, ok := refs[s.Name]
		pool, known := poolIndex[s.NodePool]
		if !ok || !known {
			continue
		}
		c := counts[projectPool{ref.ID, s.NodePool}]
		p := store.ProjectUsage{ProjectID: ref.ID, DepartmentID: ref.DepartmentID,
			NonPreemptible: float64(s.AllocatedNonPreemptible),
			Preemptible:    float64(max(0, s.Allocated-s.AllocatedNonPreemptible-s.Borrowed)),
			Borrowed:       float64(s.Borrowed),
			Pending:        float64(s.Requested),
			Deserved:       float64(s.Deserved),
			FairShare:      s.FairShare,
			Preemptions:    c.Preemptions,
			Reclaims:       c.Reclaims,
		}
		if p.NonPreemptible == 0 && p.Preemptible == 0 && p.Borrowed == 0 && p.Pending == 0 && p.Deserved == 0 &&
			p.FairShare == 0 && p.Preemptions == 0 && p.Reclaims == 0 {
			continue
		}
		u.Pools[pool].Projects = append(u.Pools[pool].Projects, p)
	}
	return u
}
