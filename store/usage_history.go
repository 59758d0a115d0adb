package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Usage history: the leader records what every node pool held, per project, at a fixed
// interval (RecordUsageSample); RollUpUsage sums closed hours and days; PruneUsage applies the
// retention; UsageSeries and UsageDays read it back. migrations/0020_usage_history.up.sql
// describes the tables.

// A sample the leader writes at each interval: what every node pool held at that moment.
type UsageSample struct {
	At       time.Time     // when it was taken; stored at At truncated to Interval (UTC)
	Interval time.Duration // the recording interval (e.g. 30 s)
	Pools    []PoolUsage
}

// PoolUsage is one node pool's part of a sample.
type PoolUsage struct {
	NodePool     string         // node pool name
	CapacityGPUs float64        // GPUs of the pool's ready nodes
	Projects     []ProjectUsage // only projects with any non-zero figure in this pool
}

// ProjectUsage is one project's figures in one node pool at the sample's moment.
type ProjectUsage struct {
	ProjectID, DepartmentID uuid.UUID
	NonPreemptible          float64 // GPUs allocated to non-preemptible (and semi's guaranteed part) work
	Preemptible             float64 // GPUs allocated to preemptible work inside deserved quota
	Borrowed                float64 // GPUs allocated beyond deserved quota
	Pending                 float64 // GPUs requested by the project's pending work
	Deserved                float64
	FairShare               float64 // deserved plus its S11 share of what is spare, given its demand
	Preemptions             int     // workloads of this project preempted (S16) since the previous sample
	Reclaims                int     // workloads of this project reclaimed (S17) since the previous sample
}

// MaxUsageBuckets bounds the buckets one query may ask for (UsageSeries).
const MaxUsageBuckets = 10_000

// RecordUsageSample writes one sample; a sample for an interval already written (a restart, a
// failover, two leaders for a moment) is not written again: recorded is false.
func (s *Store) RecordUsageSample(ctx context.Context, u UsageSample) (recorded bool, err error) {
	if err := u.validate(); err != nil {
		return false, err
	}
	at := u.At.UTC().Truncate(u.Interval)
	seconds := int32(u.Interval / time.Second)
	// One statement per pool, all sent at once: adds the pool's roster unless a sample had it
	// already, then the sample unless its interval was written already.
	batch := &pgx.Batch{}
	for _, p := range u.Pools {
		projects := slices.Clone(p.Projects)
		slices.SortFunc(projects, func(a, b ProjectUsage) int { return bytes.Compare(a.ProjectID[:], b.ProjectID[:]) })
		n := len(projects)
		projectIDs, departmentIDs, deserved := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]float32, n)
		nonPreemptible, preemptible, borrowed := make([]float32, n), make([]float32, n), make([]float32, n)
		pending, fairShare := make([]float32, n), make([]float32, n)
		preemptions, reclaims := make([]int32, n), make([]int32, n)
		h := sha256.New()
		for i, pr := range projects {
			projectIDs[i], departmentIDs[i], deserved[i] = pr.ProjectID, pr.DepartmentID, float32(pr.Deserved)
			h.Write(pr.ProjectID[:])
			h.Write(pr.DepartmentID[:])
			h.Write(binary.BigEndian.AppendUint32(nil, math.Float32bits(deserved[i])))
			nonPreemptible[i], preemptible[i], borrowed[i] = float32(pr.NonPreemptible), float32(pr.Preemptible), float32(pr.Borrowed)
			pending[i], fairShare[i] = float32(pr.Pending), float32(pr.FairShare)
			preemptions[i], reclaims[i] = int32(pr.Preemptions), int32(pr.Reclaims)
		}
		// A roster added at the same moment by another transaction that has not committed
		// (two leaders for a moment) is seen by neither subquery: roster_id is then null and
		// the statement fails, leaving the interval to the other transaction's sample.
		batch.Queue(`
			WITH added AS (
				INSERT INTO usage_rosters (digest, project_ids, department_ids, deserved) VALUES ($12, $13, $14, $15)
				ON CONFLICT (digest) DO NOTHING RETURNING id)
			INSERT INTO usage_samples (at, node_pool, interval_seconds, capacity_gpus, roster_id,
				non_preemptible, preemptible, borrowed, pending, fair_share, preemptions, reclaims)
			SELECT $1, $2, $3, $4, coalesce((SELECT id FROM added), (SELECT id FROM usage_rosters WHERE digest = $12)),
				$5, $6, $7, $8, $9, $10, $11
			ON CONFLICT (at, node_pool) DO NOTHING`,
			at, p.NodePool, seconds, float32(p.CapacityGPUs),
			nonPreemptible, preemptible, borrowed, pending, fairShare, preemptions, reclaims,
			h.Sum(nil), projectIDs, departmentIDs, deserved)
	}
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		results := tx.SendBatch(ctx, batch)
		for range u.Pools {
			tag, err := results.Exec()
			if err != nil {
				results.Close()
				return err
			}
			if tag.RowsAffected() > 0 {
				recorded = true
			}
		}
		return results.Close()
	})
	if err != nil {
		return false, err
	}
	return recorded, nil
}

func (u UsageSample) validate() error {
	if u.At.IsZero() {
		return InvalidField("at", "a usage sample needs the time it was taken")
	}
	if u.Interval < time.Second || u.Interval%time.Second != 0 {
		return InvalidField("interval", "the recording interval must be a whole number of seconds, at least 1 s; got %s", u.Interval)
	}
	pools := map[string]bool{}
	for _, p := range u.Pools {
		if p.NodePool == "" {
			return InvalidField("nodePool", "every pool of a usage sample needs its node pool's name")
		}
		if pools[p.NodePool] {
			return InvalidField("nodePool", "node pool %q appears twice in one usage sample", p.NodePool)
		}
		pools[p.NodePool] = true
		if !usageFigure(p.CapacityGPUs) {
			return InvalidField("capacityGpus", "node pool %q has capacity %v; a capacity is a finite number of GPUs, 0 or more", p.NodePool, p.CapacityGPUs)
		}
		projects := map[uuid.UUID]bool{}
		for _, pr := range p.Projects {
			if projects[pr.ProjectID] {
				return InvalidField("projectId", "project %s appears twice in node pool %q of one usage sample", pr.ProjectID, p.NodePool)
			}
			projects[pr.ProjectID] = true
			for _, f := range []float64{pr.NonPreemptible, pr.Preemptible, pr.Borrowed, pr.Pending, pr.Deserved, pr.FairShare} {
				if !usageFigure(f) {
					return InvalidField("projects", "project %s in node pool %q has a figure of %v; GPU figures are finite numbers, 0 or more", pr.ProjectID, p.NodePool, f)
				}
			}
			if pr.Preemptions < 0 || pr.Reclaims < 0 || pr.Preemptions > math.MaxInt32 || pr.Reclaims > math.MaxInt32 {
				return InvalidField("projects", "project %s in node pool %q has a negative or too large count of preemptions or reclaims", pr.ProjectID, p.NodePool)
			}
		}
	}
	return nil
}

func usageFigure(f float64) bool { return f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

type UsageQuery struct {
	From, To time.Time // [From, To)
	// Step is the bucket width; the store reads raw, hourly or daily rows as the period's age
	// and Step allow, and averages into buckets of Step.
	Step       time.Duration
	NodePools  []string    // empty: every pool
	ProjectIDs []uuid.UUID // empty: every project
}

// A bucket's figures are averages over the bucket's time that was recorded (GPUs), except the
// counts, which are sums. Buckets with no recorded time are absent.
type UsagePoint struct {
	At                                                                  time.Time // bucket start
	NodePool                                                            string
	ProjectID, DepartmentID                                             uuid.UUID
	NonPreemptible, Preemptible, Borrowed, Pending, Deserved, FairShare float64
	Preemptions, Reclaims                                               int
	RecordedSeconds                                                     float64 // how much of the bucket was recorded
}

// PoolCapacityPoint is a node pool's average capacity over a bucket's recorded time.
type PoolCapacityPoint struct {
	At              time.Time
	NodePool        string
	GPUs            float64
	RecordedSeconds float64
}

// UsageSeries averages the history into buckets of q.Step from q.From. A project's figures in a
// bucket are averaged over its pool's recorded time in the bucket (a project absent from a
// sample held nothing then), so RecordedSeconds is the pool's. Rows are assigned to the bucket
// in which they start. Points are ordered by time, node pool and project id.
func (s *Store) UsageSeries(ctx context.Context, q UsageQuery) ([]UsagePoint, []PoolCapacityPoint, error) {
	if err := q.validate(); err != nil {
		return nil, nil, err
	}
	interval, marks, err := s.usageState(ctx)
	if err != nil {
		return nil, nil, err
	}
	if q.Step < interval {
		return nil, nil, InvalidField("step", "the step %s is shorter than the recording interval %s; choose a step of at least %s", q.Step, interval, interval)
	}
	sums, err := s.usageSums(ctx, q, marks)
	if err != nil {
		return nil, nil, err
	}
	return sums.points(q), sums.capacity(q), nil
}

func (q UsageQuery) validate() error {
	if q.From.IsZero() || q.To.IsZero() {
		return InvalidField("from", "a usage query needs both ends of its period")
	}
	if !q.To.After(q.From) {
		return InvalidField("to", "the period ends (%s) at or before it starts (%s); the end must come after the start", q.To.UTC().Format(time.RFC3339), q.From.UTC().Format(time.RFC3339))
	}
	if q.Step <= 0 {
		return InvalidField("step", "the step must be a positive duration")
	}
	if buckets := (q.To.Sub(q.From) + q.Step - 1) / q.Step; buckets > MaxUsageBuckets {
		return InvalidField("step", "the period holds %d steps of %s, more than %d; choose a longer step or a shorter period", buckets, q.Step, MaxUsageBuckets)
	}
	return nil
}

// GPU-hours per UTC day, per project and pool (consumption reports, the fairness ledger).
type UsageDay struct {
	Day                     time.Time // 00:00 UTC
	NodePool                string
	ProjectID, DepartmentID uuid.UUID
	AllocatedGPUHours, NonPreemptibleGPUHours, BorrowedGPUHours, PendingGPUHours,
	DeservedGPUHours, FairShareGPUHours float64
	Preemptions, Reclaims int
}

// UsageDays sums the history into GPU-hours per UTC day of [from, to) (from is taken back to
// its day's 00:00 UTC), per node pool and project; empty pools or projects: all of them. A day
// not yet rolled up (today) is summed from the hourly and raw rows.
func (s *Store) UsageDays(ctx context.Context, from, to time.Time, pools []string, projects []uuid.UUID) ([]UsageDay, error) {
	q := UsageQuery{From: from.UTC().Truncate(24 * time.Hour), To: to, Step: 24 * time.Hour, NodePools: pools, ProjectIDs: projects}
	if err := q.validate(); err != nil {
		return nil, err
	}
	_, marks, err := s.usageState(ctx)
	if err != nil {
		return nil, err
	}
	sums, err := s.usageSums(ctx, q, marks)
	if err != nil {
		return nil, err
	}
	points := sums.points(q)
	days := make([]UsageDay, len(points))
	for i, p := range points {
		hours := p.RecordedSeconds / 3600
		days[i] = UsageDay{
			Day: p.At, NodePool: p.NodePool, ProjectID: p.ProjectID, DepartmentID: p.DepartmentID,
			AllocatedGPUHours:      (p.NonPreemptible + p.Preemptible + p.Borrowed) * hours,
			NonPreemptibleGPUHours: p.NonPreemptible * hours,
			BorrowedGPUHours:       p.Borrowed * hours,
			PendingGPUHours:        p.Pending * hours,
			DeservedGPUHours:       p.Deserved * hours,
			FairShareGPUHours:      p.FairShare * hours,
			Preemptions:            p.Preemptions,
			Reclaims:               p.Reclaims,
		}
	}
	return days, nil
}
