package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// usageRollupLock is the advisory lock each roll-up step takes, so that two replicas rolling up
// at once (a failover mid-run) take turns and the second finds the step done.
const usageRollupLock int64 = 0x7573616765 // "usage"

// UsageRollUp says what one roll-up run summed.
type UsageRollUp struct {
	Hours, Days int
}

// RollUpUsage sums closed hours of raw samples into hourly rows, and closed days of hourly rows
// into daily rows, at most maxPeriods of each per run (the rest waits for the next run). An
// hour is closed once grace has passed after its end (a sample taken just before the hour's end
// may be written a little after it); a day once all its hours are rolled up. Each period is
// summed in one transaction that deletes and rewrites its rows and moves the roll-up's mark past
// it, so running twice, or on two replicas at once, gives the same rows.
func (s *Store) RollUpUsage(ctx context.Context, now time.Time, grace time.Duration, maxPeriods int) (UsageRollUp, error) {
	var done UsageRollUp
	for done.Hours < maxPeriods {
		rolled, err := s.rollUpNext(ctx, usageHours, func(start time.Time, _ map[time.Duration]time.Time) bool {
			return !start.Add(time.Hour + grace).After(now)
		})
		if err != nil {
			return done, err
		}
		if !rolled {
			break
		}
		done.Hours++
	}
	for done.Days < maxPeriods {
		rolled, err := s.rollUpNext(ctx, usageDays, func(start time.Time, marks map[time.Duration]time.Time) bool {
			hours, ok := marks[time.Hour]
			return ok && !start.Add(24*time.Hour).After(hours)
		})
		if err != nil || !rolled {
			return done, err
		}
		done.Days++
	}
	return done, nil
}

// rollUpNext rolls up the level's next period that holds rows, if it is closed; it reports
// whether it rolled one up. Periods with no rows are passed over by moving the mark.
func (s *Store) rollUpNext(ctx context.Context, level usageLevel, closed func(start time.Time, marks map[time.Duration]time.Time) bool) (bool, error) {
	name, source := "hour", "usage_samples"
	if level == usageDays {
		name, source = "day", "usage_pool_hours"
	}
	rolled := false
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, usageRollupLock); err != nil {
			return err
		}
		marks, err := rollupMarks(ctx, tx)
		if err != nil {
			return err
		}
		mark, marked := marks[level.period]
		var next *time.Time
		var from *time.Time
		if marked {
			from = &mark
		}
		if err := tx.QueryRow(ctx, `SELECT min(at) FROM `+source+` WHERE at >= coalesce($1::timestamptz, '-infinity')`, from).Scan(&next); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		start := next.UTC().Truncate(level.period)
		if !closed(start, marks) {
			if !marked || start.After(mark) {
				// Nothing lies between the mark and this period: the roll-up covers that span.
				return setRollupMark(ctx, tx, name, start)
			}
			return nil
		}
		if level == usageDays {
			err = rollUpDay(ctx, tx, start)
		} else {
			err = rollUpHour(ctx, tx, start)
		}
		if err != nil {
			return err
		}
		rolled = true
		return setRollupMark(ctx, tx, name, start.Add(level.period))
	})
	return rolled, err
}

func rollupMarks(ctx context.Context, tx pgx.Tx) (map[time.Duration]time.Time, error) {
	marks := map[time.Duration]time.Time{}
	rows, err := tx.Query(ctx, `SELECT level, rolled_up_to FROM usage_rollups`)
	if err != nil {
		return nil, err
	}
	var level string
	var to time.Time
	_, err = pgx.ForEachRow(rows, []any{&level, &to}, func() error {
		if level == "day" {
			marks[24*time.Hour] = to
		} else {
			marks[time.Hour] = to
		}
		return nil
	})
	return marks, err
}

func setRollupMark(ctx context.Context, tx pgx.Tx, level string, to time.Time) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO usage_rollups (level, rolled_up_to) VALUES ($1, $2)
		ON CONFLICT (level) DO UPDATE SET rolled_up_to = greatest(usage_rollups.rolled_up_to, EXCLUDED.rolled_up_to)`, level, to)
	return err
}

// rollUpHour rewrites the hourly rows of the hour starting at start from the raw samples.
func rollUpHour(ctx context.Context, tx pgx.Tx, start time.Time) error {
	end := start.Add(time.Hour)
	for _, sql := range []string{
		`DELETE FROM usage_pool_hours WHERE at >= $1 AND at < $2`,
		`DELETE FROM usage_project_hours WHERE at >= $1 AND at < $2`,
		`DELETE FROM usage_department_hours WHERE at >= $1 AND at < $2`,
		`INSERT INTO usage_project_hours (at, node_pool, project_id, department_id,
				non_preemptible_gpu_seconds, preemptible_gpu_seconds, borrowed_gpu_seconds,
				pending_gpu_seconds, deserved_gpu_seconds, fair_share_gpu_seconds, preemptions, reclaims)
			SELECT $1, s.node_pool, u.project_id, (array_agg(u.department_id ORDER BY s.at DESC))[1],
				sum(u.non_preemptible::float8 * s.interval_seconds), sum(u.preemptible::float8 * s.interval_seconds),
				sum(u.borrowed::float8 * s.interval_seconds), sum(u.pending::float8 * s.interval_seconds),
				sum(u.deserved::float8 * s.interval_seconds), sum(u.fair_share::float8 * s.interval_seconds),
				sum(u.preemptions), sum(u.reclaims)
			FROM usage_samples s JOIN usage_rosters r ON r.id = s.roster_id,
				unnest(r.project_ids, r.department_ids, r.deserved, s.non_preemptible, s.preemptible, s.borrowed,
					s.pending, s.fair_share, s.preemptions, s.reclaims)
					AS u(project_id, department_id, deserved, non_preemptible, preemptible, borrowed, pending, fair_share, preemptions, reclaims)
			WHERE s.at >= $1 AND s.at < $2
			GROUP BY s.node_pool, u.project_id`,
		`INSERT INTO usage_pool_hours (at, node_pool, recorded_seconds, capacity_gpu_seconds,
				non_preemptible_gpu_seconds, preemptible_gpu_seconds, borrowed_gpu_seconds)
			SELECT $1, s.node_pool, s.recorded, s.capacity,
				coalesce(p.non_preemptible, 0), coalesce(p.preemptible, 0), coalesce(p.borrowed, 0)
			FROM (SELECT node_pool, sum(interval_seconds) AS recorded, sum(capacity_gpus::float8 * interval_seconds) AS capacity
				FROM usage_samples WHERE at >= $1 AND at < $2 GROUP BY node_pool) s
			LEFT JOIN (` + poolAllocationSums("usage_project_hours") + `) p ON p.node_pool = s.node_pool`,
		departmentSums("usage_department_hours", "usage_project_hours"),
	} {
		if _, err := tx.Exec(ctx, sql, start, end); err != nil {
			return err
		}
	}
	return nil
}

// rollUpDay rewrites the daily rows of the day starting at start from the hourly rows.
func rollUpDay(ctx context.Context, tx pgx.Tx, start time.Time) error {
	end := start.Add(24 * time.Hour)
	for _, sql := range []string{
		`DELETE FROM usage_pool_days WHERE at >= $1 AND at < $2`,
		`DELETE FROM usage_project_days WHERE at >= $1 AND at < $2`,
		`DELETE FROM usage_department_days WHERE at >= $1 AND at < $2`,
		`INSERT INTO usage_project_days (at, node_pool, project_id, department_id,
				non_preemptible_gpu_seconds, preemptible_gpu_seconds, borrowed_gpu_seconds,
				pending_gpu_seconds, deserved_gpu_seconds, fair_share_gpu_seconds, preemptions, reclaims)
			SELECT $1, node_pool, project_id, (array_agg(department_id ORDER BY at DESC))[1],
				sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
				sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8),
				sum(deserved_gpu_seconds::float8), sum(fair_share_gpu_seconds::float8),
				sum(preemptions), sum(reclaims)
			FROM usage_project_hours WHERE at >= $1 AND at < $2
			GROUP BY node_pool, project_id`,
		`INSERT INTO usage_pool_days (at, node_pool, recorded_seconds, capacity_gpu_seconds,
				non_preemptible_gpu_seconds, preemptible_gpu_seconds, borrowed_gpu_seconds)
			SELECT $1, s.node_pool, s.recorded, s.capacity,
				coalesce(p.non_preemptible, 0), coalesce(p.preemptible, 0), coalesce(p.borrowed, 0)
			FROM (SELECT node_pool, sum(recorded_seconds::float8) AS recorded, sum(capacity_gpu_seconds::float8) AS capacity
				FROM usage_pool_hours WHERE at >= $1 AND at < $2 GROUP BY node_pool) s
			LEFT JOIN (` + poolAllocationSums("usage_project_days") + `) p ON p.node_pool = s.node_pool`,
		departmentSums("usage_department_days", "usage_project_days"),
	} {
		if _, err := tx.Exec(ctx, sql, start, end); err != nil {
			return err
		}
	}
	return nil
}

// poolAllocationSums sums the allocation of the project rows of the period just written, per
// pool: the pool rows hold the sums of their projects' rows, not a second reading of the samples.
func poolAllocationSums(projectTable string) string {
	return `SELECT node_pool, sum(non_preemptible_gpu_seconds::float8) AS non_preemptible,
			sum(preemptible_gpu_seconds::float8) AS preemptible, sum(borrowed_gpu_seconds::float8) AS borrowed
		FROM ` + projectTable + ` WHERE at >= $1 AND at < $2 GROUP BY node_pool`
}

// departmentSums writes the department rows of the period from the project rows just written,
// each project counted in the department its row names.
func departmentSums(departmentTable, projectTable string) string {
	return `INSERT INTO ` + departmentTable + ` (department_id, at, node_pool,
			non_preemptible_gpu_seconds, preemptible_gpu_seconds, borrowed_gpu_seconds,
			pending_gpu_seconds, deserved_gpu_seconds, fair_share_gpu_seconds, preemptions, reclaims)
		SELECT department_id, $1, node_pool,
			sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
			sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8),
			sum(deserved_gpu_seconds::float8), sum(fair_share_gpu_seconds::float8),
			sum(preemptions), sum(reclaims)
		FROM ` + projectTable + ` WHERE at >= $1 AND at < $2
		GROUP BY department_id, node_pool`
}

// UsageRetention is how long each level of the usage history is kept; 0 keeps it forever.
type UsageRetention struct {
	Raw, Hourly, Daily time.Duration
}

// DefaultUsageRetention keeps raw samples 48 hours, hourly rows 90 days and daily rows forever.
var DefaultUsageRetention = UsageRetention{Raw: 48 * time.Hour, Hourly: 90 * 24 * time.Hour}

// UsagePruned counts the rows one pruning run removed.
type UsagePruned struct {
	Samples, Rosters, Hours, Days int64
}

// PruneUsage removes rows older than their level's retention, at most maxRows of each table per
// run (the rest goes on the next run). Rows not yet rolled up into the next level are kept
// whatever their age, so that pruning never loses history the roll-up has not summed.
func (s *Store) PruneUsage(ctx context.Context, now time.Time, keep UsageRetention, maxRows int) (UsagePruned, error) {
	var pruned UsagePruned
	_, marks, err := s.usageState(ctx)
	if err != nil {
		return pruned, err
	}
	cutoff := func(retention, level time.Duration) (time.Time, bool) {
		mark, ok := marks[level]
		if retention <= 0 || !ok {
			return time.Time{}, false
		}
		return minTime(now.Add(-retention), mark), true
	}
	type deletion struct {
		count *int64
		sql   string
		args  []any
	}
	var ignored int64
	var deletions []deletion
	if before, ok := cutoff(keep.Raw, time.Hour); ok {
		deletions = append(deletions,
			deletion{&pruned.Samples, `DELETE FROM usage_samples WHERE (at, node_pool) IN
				(SELECT at, node_pool FROM usage_samples WHERE at < $1 ORDER BY at LIMIT $2)`, []any{before, maxRows}},
			deletion{&pruned.Rosters, `DELETE FROM usage_rosters WHERE id IN (SELECT r.id FROM usage_rosters r
				WHERE NOT EXISTS (SELECT FROM usage_samples s WHERE s.roster_id = r.id) LIMIT $1)`, []any{maxRows}})
	}
	if before, ok := cutoff(keep.Hourly, 24*time.Hour); ok {
		deletions = append(deletions,
			deletion{&pruned.Hours, `DELETE FROM usage_project_hours WHERE ctid = ANY(ARRAY(
				SELECT ctid FROM usage_project_hours WHERE at < $1 LIMIT $2))`, []any{before, maxRows}},
			// A pool's and a department's hour go with the last of its projects' rows of that
			// hour or before: while they remain, they are those rows' sums.
			deletion{&ignored, `DELETE FROM usage_pool_hours WHERE at < $1
				AND at < (SELECT coalesce(min(at), 'infinity') FROM usage_project_hours)`, []any{before}},
			deletion{&ignored, `DELETE FROM usage_department_hours WHERE at < $1
				AND at < (SELECT coalesce(min(at), 'infinity') FROM usage_project_hours)`, []any{before}})
	}
	if keep.Daily > 0 {
		before := now.Add(-keep.Daily)
		deletions = append(deletions,
			deletion{&pruned.Days, `DELETE FROM usage_project_days WHERE ctid = ANY(ARRAY(
				SELECT ctid FROM usage_project_days WHERE at < $1 LIMIT $2))`, []any{before, maxRows}},
			deletion{&ignored, `DELETE FROM usage_pool_days WHERE at < $1
				AND at < (SELECT coalesce(min(at), 'infinity') FROM usage_project_days)`, []any{before}},
			deletion{&ignored, `DELETE FROM usage_department_days WHERE at < $1
				AND at < (SELECT coalesce(min(at), 'infinity') FROM usage_project_days)`, []any{before}})
	}
	for _, d := range deletions {
		tag, err := s.pool.Exec(ctx, d.sql, d.args...)
		if err != nil {
			return pruned, classify(err)
		}
		*d.count += tag.RowsAffected()
	}
	return pruned, nil
}
