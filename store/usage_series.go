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
// serve the part before the daily roll-up's end when the step is a whole number of days and
// the period starts at 00:00 UTC; hourly rows serve the part before the hourly roll-up's end
// when the step is a whole number of hours and the period starts on the hour; raw samples serve
// the rest. Each part is summed per bucket in PostgreSQL (GPU-seconds and counts) and the parts
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

// usageSums sums every part of the query's period per bucket.
func (s *Store) usageSums(ctx context.Context, q UsageQuery) (*usageSums, error) {
	marks, err := s.usageRollupMarks(ctx)
	if err != nil {
		return nil, err
	}
	sums := &usageSums{projects: map[usageBucketKey]*usageSum{}, pools: map[usagePoolKey]*usageSum{}}
	from := q.From
	for _, level := range []usageLevel{usageDays, usageHours} {
		mark, ok := marks[level.period]
		if !ok || q.Step%level.period != 0 || !q.From.UTC().Truncate(level.period).Equal(q.From) || !from.Before(mark) {
			continue
		}
		to := minTime(q.To, mark)
		if err := s.addRolledUp(ctx, sums, level, q, from, to); err != nil {
			return nil, err
		}
		from = to
	}
	if from.Before(q.To) {
		if err := s.addRaw(ctx, sums, q, from, q.To); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// usageRollupMarks maps each roll-up's period to the time before which it has summed all.
func (s *Store) usageRollupMarks(ctx context.Context) (map[time.Duration]time.Time, error) {
	rows, err := s.pool.Query(ctx, `SELECT level, rolled_up_to FROM usage_rollups`)
	if err != nil {
		return nil, classify(err)
	}
	marks := map[time.Duration]time.Time{}
	var level string
	var to time.Time
	_, err = pgx.ForEachRow(rows, []any{&level, &to}, func() error {
		if level == "day" {
			marks[usageDays.period] = to
		} else {
			marks[usageHours.period] = to
		}
		return nil
	})
	return marks, classify(err)
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

// addRolledUp adds the rows of one roll-up level in [from, to).
func (s *Store) addRolledUp(ctx context.Context, sums *usageSums, level usageLevel, q UsageQuery, from, to time.Time) error {
	filter, filterArgs := usageFilter(q, "node_pool", "project_id")
	projects := `
		SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool, project_id,
			(array_agg(department_id ORDER BY at DESC))[1], max(at),
			sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
			sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8),
			sum(deserved_gpu_seconds::float8), sum(fair_share_gpu_seconds::float8),
			sum(preemptions)::bigint, sum(reclaims)::bigint
		FROM ` + level.projectTable + `
		WHERE at >= $1 AND at < $2` + filter + `
		GROUP BY 1, 2, 3`
	poolFilter, poolArgs := usageFilter(q, "node_pool", "")
	pools := `
		SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool,
			sum(recorded_seconds::float8), sum(capacity_gpu_seconds::float8)
		FROM ` + level.poolTable + `
		WHERE at >= $1 AND at < $2` + poolFilter + `
		GROUP BY 1, 2`
	return s.addUsageRows(ctx, sums, projects, filterArgs, pools, poolArgs, q, from, to)
}

// addRaw adds the raw samples in [from, to), one entry of the roster's arrays per project.
func (s *Store) addRaw(ctx context.Context, sums *usageSums, q UsageQuery, from, to time.Time) error {
	poolFilter, poolArgs := usageFilter(q, "s.node_pool", "")
	// the pools' condition is $5 in both statements, the projects' $6 when there are pools
	projectFilter, projectArgs := usageFilter(UsageQuery{ProjectIDs: q.ProjectIDs}, "", "u.project_id")
	if len(poolArgs) > 0 && len(projectArgs) > 0 {
		projectFilter = strings.Replace(projectFilter, "$5", "$6", 1)
	}
	projects := `
		SELECT floor(extract(epoch FROM at - $4) / $3)::bigint, node_pool, project_id,
			(array_agg(department_id ORDER BY at DESC))[1], max(at),
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
		GROUP BY 1, 2, 3`
	pools := `
		SELECT floor(extract(epoch FROM s.at - $4) / $3)::bigint, s.node_pool,
			sum(s.interval_seconds::float8), sum(s.capacity_gpus::float8 * s.interval_seconds)
		FROM usage_samples s
		WHERE s.at >= $1 AND s.at < $2` + poolFilter + `
		GROUP BY 1, 2`
	return s.addUsageRows(ctx, sums, projects, append(poolArgs, projectArgs...), pools, poolArgs, q, from, to)
}

// addUsageRows runs the statements summing projects and pools per bucket, each with its
// filter's arguments after the four every statement has.
func (s *Store) addUsageRows(ctx context.Context, sums *usageSums, projectsSQL string, projectArgs []any, poolsSQL string, poolArgs []any, q UsageQuery, from, to time.Time) error {
	base := []any{from, to, q.Step.Seconds(), q.From}
	rows, err := s.pool.Query(ctx, projectsSQL, append(slices.Clone(base), projectArgs...)...)
	if err != nil {
		return classify(err)
	}
	var k usageBucketKey
	var r usageSum
	_, err = pgx.ForEachRow(rows, []any{&k.bucket, &k.nodePool, &k.projectID, &r.departmentID, &r.departmentAt,
		&r.nonPreemptible, &r.preemptible, &r.borrowed, &r.pending, &r.deserved, &r.fairShare, &r.preemptions, &r.reclaims}, func() error {
		sum := sums.projects[k]
		if sum == nil {
			sum = &usageSum{}
			sums.projects[k] = sum
		}
		sum.add(r)
		return nil
	})
	if err != nil {
		return classify(err)
	}
	rows, err = s.pool.Query(ctx, poolsSQL, append(base, poolArgs...)...)
	if err != nil {
		return classify(err)
	}
	var pk usagePoolKey
	var pr usageSum
	_, err = pgx.ForEachRow(rows, []any{&pk.bucket, &pk.nodePool, &pr.recordedSeconds, &pr.capacity}, func() error {
		sum := sums.pools[pk]
		if sum == nil {
			sum = &usageSum{}
			sums.pools[pk] = sum
		}
		sum.add(pr)
		return nil
	})
	return classify(err)
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
