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

// Reading the usage history: a query's period is split where the roll-ups end. Daily rows
// serve the part before the daily roll-up's end when the step is a day or more; hourly rows
// serve the part before the hourly roll-up's end when the step is an hour or more; raw samples
// serve the rest. A row counts in the bucket in which it starts, so where a step is not a whole
// number of the rows' periods, or the period does not start on one, a bucket's edges are as
// exact as the rows' period (an hour, a day); totals are exact. Each part is summed per bucket in PostgreSQL (GPU-seconds and counts) and the parts
// are added up here.

// usageLevel is one level of the history: the tables a part of a period is read from.
type usageLevel struct {
	period       time.Duration // the span of one row
	projectTable string
	poolTable    string
}

var (
	usageHours = usageLevel{period: time.Hour, projectTable: "usage_project_hours", poolTable: "usage_pool_hours"}
	usageDays  = usageLevel{period: 24 * time.Hour, projectTable: "usage_project_days", poolTable: "usage_pool_days"}
)

type usageBucketKey struct {
	bucket    int64
	nodePool  string
	projectID uuid.UUID
}

type usagePoolKey struct {
	bucket   int64
	nodePool string
}

// usageSum is what a bucket holds before averaging: GPU-seconds and counts.
type usageSum struct {
	departmentID    uuid.UUID
	departmentAt    time.Time // the latest row's time: the department it names wins
	nonPreemptible  float64
	preemptible     float64
	borrowed        float64
	pending         float64
	deserved        float64
	fairShare       float64
	preemptions     int64
	reclaims        int64
	recordedSeconds float64 // pools only
	capacity        float64 // pools only: GPU-seconds
}

type usageSums struct {
	projects map[usageBucketKey]*usageSum
	pools    map[usagePoolKey]*usageSum
}

// usageSums sums every part of the query's period per bucket, reading each level's rows with
// the marks as they were when the query began. The statements go in one batch: one round trip.
func (s *Store) usageSums(ctx context.Context, q UsageQuery, marks map[time.Duration]time.Time) (*usageSums, error) {
	sums := &usageSums{projects: map[usageBucketKey]*usageSum{}, pools: map[usagePoolKey]*usageSum{}}
	var reads usageReads
	for _, part := range usageParts(q, marks) {
		if part.level != nil {
			reads.rolledUp(sums, *part.level, q, part.from, part.to)
		} else {
			reads.raw(sums, q, part.from, part.to)
		}
	}
	if err := s.runUsageReads(ctx, &reads); err != nil {
		return nil, err
	}
	return sums, nil
}

// runUsageReads sends the reads' statements in one batch, one round trip, under the store's
// deadline, and reads each one's rows.
func (s *Store) runUsageReads(ctx context.Context, reads *usageReads) error {
	ctx, cancel := context.WithTimeout(ctx, s.pool.timeout)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Release()
	results := conn.SendBatch(ctx, &reads.batch)
	for _, read := range reads.reads {
		rows, err := results.Query()
		if err == nil {
			err = read(rows)
		}
		if err != nil {
			results.Close()
			return classify(err)
		}
	}
	return classify(results.Close())
}

// usagePart is a part of a query's period and the level it is read from (nil: raw samples).
type usagePart struct {
	level    *usageLevel
	from, to time.Time
}

// usageParts splits the query's period where the roll-ups end, as the marks were when the
// query began.
func usageParts(q UsageQuery, marks map[time.Duration]time.Time) []usagePart {
	var parts []usagePart
	from := q.From
	for _, level := range []*usageLevel{&usageDays, &usageHours} {
		mark, ok := marks[level.period]
		if !ok || q.Step < level.period || !from.Before(mark) {
			continue
		}
		to := minTime(q.To, mark)
		parts = append(parts, usagePart{level, from, to})
		from = to
	}
	if from.Before(q.To) {
		parts = append(parts, usagePart{nil, from, q.To})
	}
	return parts
}

// usageState is the recording interval of the latest sample (1 s when there is none yet, so
// that any step passes) and each roll-up's mark: the time before which it has summed all.
func (s *Store) usageState(ctx context.Context) (time.Duration, map[time.Duration]time.Time, error) {
	var seconds *int32
	var hours, days *time.Time
	err := s.pool.QueryRow(ctx, `SELECT (SELECT interval_seconds FROM usage_samples ORDER BY at DESC LIMIT 1),
		(SELECT rolled_up_to FROM usage_rollups WHERE level = 'hour'), (SELECT rolled_up_to FROM usage_rollups WHERE level = 'day')`).
		Scan(&seconds, &hours, &days)
	if err != nil {
		return 0, nil, classify(err)
	}
	interval, marks := time.Second, map[time.Duration]time.Time{}
	if seconds != nil {
		interval = time.Duration(*seconds) * time.Second
	}
	if hours != nil {
		marks[usageHours.period] = *hours
	}
	if days != nil {
		marks[usageDays.period] = *days
	}
	return interval, marks, nil
}

// usageReads are the statements of one query and what reads each one's rows.
type usageReads struct {
	batch pgx.Batch
	reads []func(pgx.Rows) error
}

// usageFilter is the conditions on node pools and projects a query asks for, as parameters
// after the four every statement has ($1 from, $2 to, $3 step in seconds, $4 the query's
// start). A condition is left out, not made always true, when the query names no pool or no
// project, so that a project's rows are found through the index that starts with its id.
func usageFilter(q UsageQuery, poolColumn, projectColumn string) (string, []any) {
	sql, args := "", []any{}
	if len(q.NodePools) > 0 && poolColumn != "" {
		args = append(args, q.NodePools)
		sql += fmt.Sprintf(" AND %s = ANY($%d::text[])", poolColumn, 4+len(args))
	}
	if len(q.ProjectIDs) > 0 && projectColumn != "" {
		args = append(args, q.ProjectIDs)
		sql += fmt.Sprintf(" AND %s = ANY($%d::uuid[])", projectColumn, 4+len(args))
	}
	return sql, args
}

// rolledUp reads the rows of one roll-up level in [from, to).
func (r *usageReads) rolledUp(sums *usageSums, level usageLevel, q UsageQuery, from, to time.Time) {
	filter, filterArgs := usageFilter(q, "node_pool", "project_id")
	projects := `
		SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool, project_id,
			department_id, max(at),
			sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
			sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8),
			sum(deserved_gpu_seconds::float8), sum(fair_share_gpu_seconds::float8),
			sum(preemptions)::bigint, sum(reclaims)::bigint
		FROM ` + level.projectTable + `
		WHERE at >= $1 AND at < $2` + filter + `
		GROUP BY 1, 2, 3, 4`
	poolFilter, poolArgs := usageFilter(q, "node_pool", "")
	pools := `
		SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool,
			sum(recorded_seconds::float8), sum(capacity_gpu_seconds::float8)
		FROM ` + level.poolTable + `
		WHERE at >= $1 AND at < $2` + poolFilter + `
		GROUP BY 1, 2`
	r.add(sums, projects, filterArgs, pools, poolArgs, q, from, to)
}

// raw reads the raw samples in [from, to), one entry of the roster's arrays per project.
func (r *usageReads) raw(sums *usageSums, q UsageQuery, from, to time.Time) {
	poolFilter, poolArgs := usageFilter(q, "s.node_pool", "")
	// the pools' condition is $5 in both statements, the projects' $6 when there are pools
	projectFilter, projectArgs := usageFilter(UsageQuery{ProjectIDs: q.ProjectIDs}, "", "u.project_id")
	if len(poolArgs) > 0 && len(projectArgs) > 0 {
		projectFilter = strings.Replace(projectFilter, "$5", "$6", 1)
	}
	projects := `
		SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool, project_id,
			department_id, max(at),
			sum(u.non_preemptible::float8 * seconds), sum(u.preemptible::float8 * seconds),
			sum(u.borrowed::float8 * seconds), sum(u.pending::float8 * seconds),
			sum(u.deserved::float8 * seconds), sum(u.fair_share::float8 * seconds),
			sum(u.preemptions)::bigint, sum(u.reclaims)::bigint
		FROM (SELECT s.at, s.node_pool, s.interval_seconds AS seconds, r.project_ids, r.department_ids, r.deserved,
				s.non_preemptible, s.preemptible, s.borrowed, s.pending, s.fair_share, s.preemptions, s.reclaims
			FROM usage_samples s JOIN usage_rosters r ON r.id = s.roster_id
			WHERE s.at >= $1 AND s.at < $2` + poolFilter + `) s,
			unnest(s.project_ids, s.department_ids, s.deserved, s.non_preemptible, s.preemptible, s.borrowed,
				s.pending, s.fair_share, s.preemptions, s.reclaims)
				AS u(project_id, department_id, deserved, non_preemptible, preemptible, borrowed, pending, fair_share, preemptions, reclaims)
		WHERE true` + projectFilter + `
		GROUP BY 1, 2, 3, 4`
	pools := `
		SELECT floor(extract(epoch FROM s.at - $4) / $3)::bigint, s.node_pool,
			sum(s.interval_seconds::float8), sum(s.capacity_gpus::float8 * s.interval_seconds)
		FROM usage_samples s
		WHERE s.at >= $1 AND s.at < $2` + poolFilter + `
		GROUP BY 1, 2`
	r.add(sums, projects, append(slices.Clone(poolArgs), projectArgs...), pools, poolArgs, q, from, to)
}

// queueUnitSums queues a statement answering a row per bucket, node pool and unit (a project,
// or a department in a project's place) and what adds its rows to sums.projects.
func (r *usageReads) queueUnitSums(sums *usageSums, sql string, args []any) {
	r.batch.Queue(sql, args...)
	r.reads = append(r.reads, func(rows pgx.Rows) error {
		var k usageBucketKey
		var row usageSum
		_, err := pgx.ForEachRow(rows, []any{&k.bucket, &k.nodePool, &k.projectID, &row.departmentID, &row.departmentAt,
			&row.nonPreemptible, &row.preemptible, &row.borrowed, &row.pending, &row.deserved, &row.fairShare, &row.preemptions, &row.reclaims}, func() error {
			sum := sums.projects[k]
			if sum == nil {
				sum = &usageSum{}
				sums.projects[k] = sum
			}
			sum.add(row)
			return nil
		})
		return err
	})
}

// add queues the statements summing projects and pools per bucket, each with its filter's
// arguments after the four every statement has, and what adds their rows to sums.
func (r *usageReads) add(sums *usageSums, projectsSQL string, projectArgs []any, poolsSQL string, poolArgs []any, q UsageQuery, from, to time.Time) {
	base := []any{from, to, q.Step.Seconds(), q.From}
	r.queueUnitSums(sums, projectsSQL, append(slices.Clone(base), projectArgs...))
	r.batch.Queue(poolsSQL, append(base, poolArgs...)...)
	r.reads = append(r.reads, func(rows pgx.Rows) error {
		var k usagePoolKey
		var row usageSum
		_, err := pgx.ForEachRow(rows, []any{&k.bucket, &k.nodePool, &row.recordedSeconds, &row.capacity}, func() error {
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

func (u *usageSum) add(r usageSum) {
	if r.departmentAt.After(u.departmentAt) || u.departmentAt.IsZero() {
		u.departmentID, u.departmentAt = r.departmentID, r.departmentAt
	}
	u.nonPreemptible += r.nonPreemptible
	u.preemptible += r.preemptible
	u.borrowed += r.borrowed
	u.pending += r.pending
	u.deserved += r.deserved
	u.fairShare += r.fairShare
	u.preemptions += r.preemptions
	u.reclaims += r.reclaims
	u.recordedSeconds += r.recordedSeconds
	u.capacity += r.capacity
}

// points averages the project sums over their pools' recorded time, in order.
func (s *usageSums) points(q UsageQuery) []UsagePoint {
	out := make([]UsagePoint, 0, len(s.projects))
	for k, sum := range s.projects {
		pool := s.pools[usagePoolKey{bucket: k.bucket, nodePool: k.nodePool}]
		if pool == nil || pool.recordedSeconds <= 0 {
			continue // cannot happen: a sample's projects come with its pool
		}
		secs := pool.recordedSeconds
		out = append(out, UsagePoint{
			At: q.From.Add(time.Duration(k.bucket) * q.Step).UTC(), NodePool: k.nodePool,
			ProjectID: k.projectID, DepartmentID: sum.departmentID,
			NonPreemptible: sum.nonPreemptible / secs, Preemptible: sum.preemptible / secs,
			Borrowed: sum.borrowed / secs, Pending: sum.pending / secs,
			Deserved: sum.deserved / secs, FairShare: sum.fairShare / secs,
			Preemptions: int(sum.preemptions), Reclaims: int(sum.reclaims),
			RecordedSeconds: secs,
		})
	}
	slices.SortFunc(out, func(a, b UsagePoint) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.NodePool, b.NodePool), bytes.Compare(a.ProjectID[:], b.ProjectID[:]))
	})
	return out
}

// capacity averages the pools' capacity over their recorded time, in order.
func (s *usageSums) capacity(q UsageQuery) []PoolCapacityPoint {
	out := make([]PoolCapacityPoint, 0, len(s.pools))
	for k, sum := range s.pools {
		if sum.recordedSeconds <= 0 {
			continue
		}
		out = append(out, PoolCapacityPoint{
			At: q.From.Add(time.Duration(k.bucket) * q.Step).UTC(), NodePool: k.nodePool,
			GPUs: sum.capacity / sum.recordedSeconds, RecordedSeconds: sum.recordedSeconds,
		})
	}
	slices.SortFunc(out, func(a, b PoolCapacityPoint) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.NodePool, b.NodePool))
	})
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
