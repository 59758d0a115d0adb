package store

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Pre-summed usage: the history's totals per department and per node pool, for charts that
// stack departments or set projects against their pool's total. The roll-ups keep them as rows
// of their own (a department's or a pool's row per period is the sum of its projects' rows), so
// such a chart reads a row per department or pool and period, not one per project; only the
// part of the period not yet rolled up is summed from the raw samples. The parts and buckets
// are those UsageSeries reads for the same period and step, so the figures agree with its.

// UsageTotalsQuery is a period, a bucket width and the pools and departments to read.
type UsageTotalsQuery struct {
	From, To      time.Time // [From, To)
	Step          time.Duration
	NodePools     []string    // empty: every pool
	DepartmentIDs []uuid.UUID // empty: every department
}

// DepartmentUsagePoint is a department's figures in a pool over a bucket: the sums of its
// projects' averages (GPUs) and counts, each project in the department its rows name.
type DepartmentUsagePoint struct {
	At                                                                  time.Time
	NodePool                                                            string
	DepartmentID                                                        uuid.UUID
	NonPreemptible, Preemptible, Borrowed, Pending, Deserved, FairShare float64
	Preemptions, Reclaims                                               int
	RecordedSeconds                                                     float64
}

// PoolUsagePoint is a node pool's average capacity over a bucket and what all its projects
// held together (GPUs), split as the projects' figures are.
type PoolUsagePoint struct {
	At                                    time.Time
	NodePool                              string
	CapacityGPUs                          float64
	NonPreemptible, Preemptible, Borrowed float64
	RecordedSeconds                       float64
}

// ProjectAllocation is what a project held in a pool over a period, in GPU-hours.
type ProjectAllocation struct {
	NodePool          string
	ProjectID         uuid.UUID
	AllocatedGPUHours float64
}

// MaxTopProjects bounds how many projects per pool TopProjectsByAllocation answers.
const MaxTopProjects = 100

var departmentTables = map[time.Duration]string{time.Hour: "usage_department_hours", 24 * time.Hour: "usage_department_days"}

func (q UsageTotalsQuery) usageQuery() UsageQuery {
	return UsageQuery{From: q.From, To: q.To, Step: q.Step, NodePools: q.NodePools, ProjectIDs: q.DepartmentIDs}
}

// usageTotalsParts validates the query as UsageSeries does and splits its period where the
// roll-ups end.
func (s *Store) usageTotalsParts(ctx context.Context, q UsageQuery) ([]usagePart, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	interval, marks, err := s.usageState(ctx)
	if err != nil {
		return nil, err
	}
	if q.Step < interval {
		return nil, InvalidField("step", "the step %s is shorter than the recording interval %s; choose a step of at least %s", q.Step, interval, interval)
	}
	return usageParts(q, marks), nil
}

// DepartmentUsageSeries averages the departments' and the pools' totals into buckets of q.Step
// from q.From, as UsageSeries does a project's. Points are ordered by time, node pool and
// department id; pool points by time and node pool (every pool the query names, whichever
// departments it names). A project counts in the department each row names: a project that
// moved counts in its later department for the whole hour (day) of the move where the period
// is read from roll-ups, and in the one each sample names where from raw samples, where
// UsageSeries puts a project's whole bucket in its latest department.
func (s *Store) DepartmentUsageSeries(ctx context.Context, q UsageTotalsQuery) ([]DepartmentUsagePoint, []PoolUsagePoint, error) {
	uq := q.usageQuery()
	parts, err := s.usageTotalsParts(ctx, uq)
	if err != nil {
		return nil, nil, err
	}
	sums := &usageSums{projects: map[usageBucketKey]*usageSum{}, pools: map[usagePoolKey]*usageSum{}}
	var reads usageReads
	for _, part := range parts {
		reads.departments(sums, part, uq)
		reads.poolTotals(sums, part, uq)
	}
	if err := s.runUsageReads(ctx, &reads); err != nil {
		return nil, nil, err
	}
	departments := make([]DepartmentUsagePoint, 0, len(sums.projects))
	for _, p := range sums.points(uq) {
		departments = append(departments, DepartmentUsagePoint{At: p.At, NodePool: p.NodePool, DepartmentID: p.ProjectID,
			NonPreemptible: p.NonPreemptible, Preemptible: p.Preemptible, Borrowed: p.Borrowed,
			Pending: p.Pending, Deserved: p.Deserved, FairShare: p.FairShare,
			Preemptions: p.Preemptions, Reclaims: p.Reclaims, RecordedSeconds: p.RecordedSeconds})
	}
	return departments, sums.poolTotals(q.From, q.Step), nil
}

// departments queues the statement summing the departments per bucket over one part.
func (r *usageReads) departments(sums *usageSums, part usagePart, q UsageQuery) {
	var sql string
	var args []any
	if part.level != nil {
		filter, filterArgs := usageFilter(q, "node_pool", "department_id")
		sql = `
			SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool, department_id, department_id, max(at),
				sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
				sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8),
				sum(deserved_gpu_seconds::float8), sum(fair_share_gpu_seconds::float8),
				sum(preemptions)::bigint, sum(reclaims)::bigint
			FROM ` + departmentTables[part.level.period] + `
			WHERE at >= $1 AND at < $2` + filter + `
			GROUP BY 1, 2, 3`
		args = filterArgs
	} else {
		poolFilter, poolArgs := usageFilter(q, "s.node_pool", "")
		deptFilter, deptArgs := usageFilter(UsageQuery{ProjectIDs: q.ProjectIDs}, "", "u.department_id")
		if len(poolArgs) > 0 && len(deptArgs) > 0 {
			deptFilter = strings.Replace(deptFilter, "$5", "$6", 1)
		}
		sql = `
			SELECT floor(extract(epoch FROM s.at - $4) / $3)::bigint, s.node_pool, u.department_id, u.department_id, max(s.at),
				sum(u.non_preemptible::float8 * s.interval_seconds), sum(u.preemptible::float8 * s.interval_seconds),
				sum(u.borrowed::float8 * s.interval_seconds), sum(u.pending::float8 * s.interval_seconds),
				sum(u.deserved::float8 * s.interval_seconds), sum(u.fair_share::float8 * s.interval_seconds),
				sum(u.preemptions)::bigint, sum(u.reclaims)::bigint
			FROM usage_samples s JOIN usage_rosters r ON r.id = s.roster_id,
				unnest(r.department_ids, r.deserved, s.non_preemptible, s.preemptible, s.borrowed,
					s.pending, s.fair_share, s.preemptions, s.reclaims)
					AS u(department_id, deserved, non_preemptible, preemptible, borrowed, pending, fair_share, preemptions, reclaims)
			WHERE s.at >= $1 AND s.at < $2` + poolFilter + deptFilter + `
			GROUP BY 1, 2, 3`
		args = append(poolArgs, deptArgs...)
	}
	r.queueUnitSums(sums, sql, append([]any{part.from, part.to, q.Step.Seconds(), q.From}, args...))
}

// poolTotals queues the statement summing the pools per bucket over one part: recorded time,
// capacity and what their projects held.
func (r *usageReads) poolTotals(sums *usageSums, part usagePart, q UsageQuery) {
	var sql string
	var args []any
	if part.level != nil {
		filter, filterArgs := usageFilter(q, "node_pool", "")
		sql = `
			SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool,
				sum(recorded_seconds::float8), sum(capacity_gpu_seconds::float8),
				sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8), sum(borrowed_gpu_seconds::float8)
			FROM ` + part.level.poolTable + `
			WHERE at >= $1 AND at < $2` + filter + `
			GROUP BY 1, 2`
		args = filterArgs
	} else {
		filter, filterArgs := usageFilter(q, "s.node_pool", "")
		sql = `
			SELECT floor(extract(epoch FROM s.at - $4) / $3)::bigint, s.node_pool,
				sum(s.interval_seconds::float8), sum(s.capacity_gpus::float8 * s.interval_seconds),
				sum((SELECT sum(x::float8) FROM unnest(s.non_preemptible) x) * s.interval_seconds),
				sum((SELECT sum(x::float8) FROM unnest(s.preemptible) x) * s.interval_seconds),
				sum((SELECT sum(x::float8) FROM unnest(s.borrowed) x) * s.interval_seconds)
			FROM usage_samples s
			WHERE s.at >= $1 AND s.at < $2` + filter + `
			GROUP BY 1, 2`
		args = filterArgs
	}
	r.batch.Queue(sql, append([]any{part.from, part.to, q.Step.Seconds(), q.From}, args...)...)
	r.reads = append(r.reads, func(rows pgx.Rows) error {
		var k usagePoolKey
		var row usageSum
		var nonPreemptible, preemptible, borrowed *float64 // a sample of no project sums to null
		_, err := pgx.ForEachRow(rows, []any{&k.bucket, &k.nodePool, &row.recordedSeconds, &row.capacity,
			&nonPreemptible, &preemptible, &borrowed}, func() error {
			row.nonPreemptible, row.preemptible, row.borrowed = orZero(nonPreemptible), orZero(preemptible), orZero(borrowed)
			sum := sums.pools[k]
			if sum == nil {
				sum = &usageSum{}
				sums.pools[k] = sum
			}
			sum.add(row)
			return nil
		})
		return err
	})
}

func orZero(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// TopProjectsByAllocation answers, per node pool, the n projects (at most MaxTopProjects) that
// held the most GPU-hours over [q.From, q.To), most first (ties by project id), read in one
// statement from the rows UsageSeries reads for the same period and step. Of the departments
// only the named ones' projects count, when the query names any.
func (s *Store) TopProjectsByAllocation(ctx context.Context, q UsageTotalsQuery, n int) ([]ProjectAllocation, error) {
	if n < 1 || n > MaxTopProjects {
		return nil, InvalidField("n", "%d projects per pool is not between 1 and %d", n, MaxTopProjects)
	}
	uq := q.usageQuery()
	parts, err := s.usageTotalsParts(ctx, uq)
	if err != nil {
		return nil, err
	}
	// $1 n, $2 the pools or null, $3 the departments or null; then each part's ends.
	args := []any{n, nilIfEmpty(q.NodePools), nilIfEmpty(q.DepartmentIDs)}
	var selects []string
	for _, part := range parts {
		args = append(args, part.from, part.to)
		from, to := len(args)-1, len(args)
		if part.level != nil {
			selects = append(selects, fmt.Sprintf(`
				SELECT node_pool, project_id,
					non_preemptible_gpu_seconds::float8 + preemptible_gpu_seconds::float8 + borrowed_gpu_seconds::float8 AS gpu_seconds
				FROM %s WHERE at >= $%d AND at < $%d
					AND ($2::text[] IS NULL OR node_pool = ANY($2)) AND ($3::uuid[] IS NULL OR department_id = ANY($3))`,
				part.level.projectTable, from, to))
		} else {
			selects = append(selects, fmt.Sprintf(`
				SELECT s.node_pool, u.project_id,
					(u.non_preemptible::float8 + u.preemptible::float8 + u.borrowed::float8) * s.interval_seconds AS gpu_seconds
				FROM usage_samples s JOIN usage_rosters r ON r.id = s.roster_id,
					unnest(r.project_ids, r.department_ids, s.non_preemptible, s.preemptible, s.borrowed)
						AS u(project_id, department_id, non_preemptible, preemptible, borrowed)
				WHERE s.at >= $%d AND s.at < $%d
					AND ($2::text[] IS NULL OR s.node_pool = ANY($2)) AND ($3::uuid[] IS NULL OR u.department_id = ANY($3))`,
				from, to))
		}
	}
	sql := `
		SELECT node_pool, project_id, gpu_seconds / 3600 FROM (
			SELECT node_pool, project_id, gpu_seconds,
				row_number() OVER (PARTITION BY node_pool ORDER BY gpu_seconds DESC, project_id) AS rank
			FROM (SELECT node_pool, project_id, sum(gpu_seconds) AS gpu_seconds
				FROM (` + strings.Join(selects, " UNION ALL ") + `) rows GROUP BY 1, 2) totals) ranked
		WHERE rank <= $1`
	ctx, cancel := context.WithTimeout(ctx, s.pool.timeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, classify(err)
	}
	var out []ProjectAllocation
	var a ProjectAllocation
	if _, err := pgx.ForEachRow(rows, []any{&a.NodePool, &a.ProjectID, &a.AllocatedGPUHours}, func() error {
		out = append(out, a)
		return nil
	}); err != nil {
		return nil, classify(err)
	}
	slices.SortFunc(out, func(a, b ProjectAllocation) int {
		return cmp.Or(cmp.Compare(a.NodePool, b.NodePool), cmp.Compare(b.AllocatedGPUHours, a.AllocatedGPUHours),
			bytes.Compare(a.ProjectID[:], b.ProjectID[:]))
	})
	return out, nil
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// PoolUsageSeries averages the pools' totals alone into buckets of q.Step from q.From, as
// DepartmentUsageSeries answers them (its DepartmentIDs are not read).
func (s *Store) PoolUsageSeries(ctx context.Context, q UsageTotalsQuery) ([]PoolUsagePoint, error) {
	uq := q.usageQuery()
	uq.ProjectIDs = nil
	parts, err := s.usageTotalsParts(ctx, uq)
	if err != nil {
		return nil, err
	}
	sums := &usageSums{pools: map[usagePoolKey]*usageSum{}}
	var reads usageReads
	for _, part := range parts {
		reads.poolTotals(sums, part, uq)
	}
	if err := s.runUsageReads(ctx, &reads); err != nil {
		return nil, err
	}
	return sums.poolTotals(q.From, q.Step), nil
}

// poolTotals averages the pools' sums over their recorded time, in order.
func (s *usageSums) poolTotals(from time.Time, step time.Duration) []PoolUsagePoint {
	pools := make([]PoolUsagePoint, 0, len(s.pools))
	for k, sum := range s.pools {
		if secs := sum.recordedSeconds; secs > 0 {
			pools = append(pools, PoolUsagePoint{At: from.Add(time.Duration(k.bucket) * step).UTC(), NodePool: k.nodePool,
				CapacityGPUs: sum.capacity / secs, NonPreemptible: sum.nonPreemptible / secs,
				Preemptible: sum.preemptible / secs, Borrowed: sum.borrowed / secs, RecordedSeconds: secs})
		}
	}
	slices.SortFunc(pools, func(a, b PoolUsagePoint) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.NodePool, b.NodePool))
	})
	return pools
}
