package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The audit log is partitioned by month of its timestamp, in UTC (migration 0014): partition
// audit_log_YYYY_MM holds that month's rows, audit_log_default any row whose month has no
// partition yet. Rows are never updated or deleted; months past the retention are dropped
// whole (docs/operations.md "Audit log retention").
const (
	auditPartitionPrefix = "audit_log_"
	auditDefaultPart     = "audit_log_default"
	// AuditMonthsAhead is how many months after the current one have their partition made
	// ahead of time, so that rows land in the default partition only if the upkeep has not
	// run for that long.
	AuditMonthsAhead = 2
	// auditUpkeepLockTimeout bounds the wait for the locks a partition change takes: writers
	// of the audit log queue behind a waiting DDL statement, so it must not wait long.
	auditUpkeepLockTimeout = 2 * time.Second
)

// DefaultAuditRetention is how long the audit log keeps a row at least: 400 days. A month's
// partition is dropped once the whole month is older than the retention.
const DefaultAuditRetention = 400 * 24 * time.Hour

// auditUpkeepLock serialises upkeeps (a new leader's and an old one's still running).
const auditUpkeepLock int64 = 0x417564697450 // "AuditP"

func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func auditPartitionName(month time.Time) string {
	return auditPartitionPrefix + month.Format("2006_01")
}

// KeepAuditPartitions is the audit log's upkeep as of now: rows that landed in the default
// partition move into partitions of their own months, this month's partition and the next
// AuditMonthsAhead months' exist, and the partitions of months that ended more than retention
// before now are dropped. It runs in one transaction; running it again changes nothing.
func (s *Store) KeepAuditPartitions(ctx context.Context, now time.Time, retention time.Duration) error {
	if retention <= 0 {
		return fmt.Errorf("audit retention %v: must be positive", retention)
	}
	return s.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, auditUpkeepLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = '%dms'`, auditUpkeepLockTimeout.Milliseconds())); err != nil {
			return err
		}
		existing, err := auditMonthPartitions(ctx, tx)
		if err != nil {
			return err
		}
		if err := rehomeDefaultAuditRows(ctx, tx, existing); err != nil {
			return err
		}
		for i := 0; i <= AuditMonthsAhead; i++ {
			if err := createAuditPartition(ctx, tx, existing, monthStart(now).AddDate(0, i, 0)); err != nil {
				return err
			}
		}
		cutoff := now.Add(-retention)
		for month, name := range existing {
			if !month.AddDate(0, 1, 0).After(cutoff) {
				if _, err := tx.Exec(ctx, `DROP TABLE `+pgx.Identifier{name}.Sanitize()); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// auditMonthPartitions maps the first instant of each month that has a partition to its name.
func auditMonthPartitions(ctx context.Context, tx pgx.Tx) (map[time.Time]string, error) {
	rows, err := tx.Query(ctx, `
		SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'audit_log'::regclass`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := map[time.Time]string{}
	for _, name := range names {
		month, err := time.Parse("2006_01", strings.TrimPrefix(name, auditPartitionPrefix))
		if err == nil && strings.HasPrefix(name, auditPartitionPrefix) {
			out[month] = name
		}
	}
	return out, nil
}

// createAuditPartition makes month's partition unless it exists, and notes it in existing.
func createAuditPartition(ctx context.Context, tx pgx.Tx, existing map[time.Time]string, month time.Time) error {
	if _, ok := existing[month]; ok {
		return nil
	}
	name := auditPartitionName(month)
	const layout = "2006-01-02 15:04:05Z07:00"
	_, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s PARTITION OF audit_log FOR VALUES FROM ('%s') TO ('%s')`,
		pgx.Identifier{name}.Sanitize(), month.Format(layout), month.AddDate(0, 1, 0).Format(layout)))
	if err != nil {
		return err
	}
	existing[month] = name
	return nil
}

// rehomeDefaultAuditRows moves the rows of the default partition into partitions of their
// months. A month's partition cannot be made while the default holds rows of that month, so
// the default is detached first, its rows inserted again through the parent (ids kept) and
// the default, emptied, attached back: the rows move, none is changed or lost.
func rehomeDefaultAuditRows(ctx context.Context, tx pgx.Tx, existing map[time.Time]string) error {
	rows, err := tx.Query(ctx, `SELECT DISTINCT date_trunc('month', at, 'UTC') FROM `+auditDefaultPart)
	if err != nil {
		return err
	}
	months, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil || len(months) == 0 {
		return err
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE audit_log DETACH PARTITION `+auditDefaultPart); err != nil {
		return err
	}
	for _, month := range months {
		if err := createAuditPartition(ctx, tx, existing, month.UTC()); err != nil {
			return err
		}
	}
	for _, statement := range []string{
		`INSERT INTO audit_log SELECT * FROM ` + auditDefaultPart,
		`TRUNCATE ` + auditDefaultPart,
		`ALTER TABLE audit_log ATTACH PARTITION ` + auditDefaultPart + ` DEFAULT`,
	} {
		if _, err := tx.Exec(ctx, statement); err != nil {
			return err
		}
	}
	return nil
}
