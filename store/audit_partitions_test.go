package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// monthPartition is the name of the audit log's partition of t's month (UTC).
func monthPartition(t time.Time) string { return "audit_log_" + t.UTC().Format("2006_01") }

// auditPartitions lists the audit log's partitions by name, sorted.
func auditPartitions(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'audit_log'::regclass ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// auditSubjects lists the subjects of the audit log's rows, sorted.
func auditSubjects(t *testing.T, pool *pgxpool.Pool, from string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT subject FROM `+from+` ORDER BY subject`)
	if err != nil {
		t.Fatal(err)
	}
	subjects, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return subjects
}

// TestAuditRetentionDropsWholeMonthsPastTheRetention: rows of months with no partition yet
// land in the default partition (an insert never fails); the upkeep moves them into
// partitions of their months, creates the coming months' partitions, and drops the months
// that ended longer than the retention ago whole, keeping every newer row.
func TestAuditRetentionDropsWholeMonthsPastTheRetention(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.New(pool)
	ctx := context.Background()
	now := time.Now()
	const retention = 400 * 24 * time.Hour
	ages := map[string]time.Duration{
		"expired":   500 * 24 * time.Hour, // its month ended more than 400 days ago
		"kept-old":  380 * 24 * time.Hour,
		"kept-last": 40 * 24 * time.Hour,
		"kept-now":  0,
	}
	for subject, age := range ages {
		if _, err := pool.Exec(ctx, `INSERT INTO audit_log (at, subject, subject_type, action, entity_type, result)
			VALUES ($1, $2, 'user', 'update', 'project', 'success')`, now.Add(-age), subject); err != nil {
			t.Fatalf("insert of a row %v old: %v", age, err)
		}
	}
	future := now.AddDate(3, 0, 0)
	if _, err := pool.Exec(ctx, `INSERT INTO audit_log (at, subject, subject_type, action, entity_type, result)
		VALUES ($1, 'kept-future', 'user', 'update', 'project', 'success')`, future); err != nil {
		t.Fatalf("insert of a row in a month with no partition: %v", err)
	}

	for range 2 { // the upkeep can run again and again: the second run finds nothing to do
		if err := st.KeepAuditPartitions(ctx, now, retention); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"kept-future", "kept-last", "kept-now", "kept-old"}, auditSubjects(t, pool, "audit_log")); d != "" {
			t.Errorf("rows after the upkeep (-want +got):\n%s", d)
		}
		if left := auditSubjects(t, pool, "audit_log_default"); len(left) > 0 {
			t.Errorf("rows left in the default partition: %v", left)
		}
		parts := auditPartitions(t, pool)
		for _, want := range []time.Time{now.Add(-ages["kept-old"]), now.Add(-ages["kept-last"]), now, now.AddDate(0, 1, 0), future} {
			if !slices.Contains(parts, monthPartition(want)) {
				t.Errorf("no partition %s among %v", monthPartition(want), parts)
			}
		}
		if old := monthPartition(now.Add(-ages["expired"])); slices.Contains(parts, old) {
			t.Errorf("the expired month's partition %s is still there: %v", old, parts)
		}
	}
}

// TestAuditLogStaysAppendOnly: UPDATE, DELETE and TRUNCATE of the partitioned audit log are
// refused, and so are UPDATE and DELETE addressed to one of its partitions, a month's or the
// default one.
func TestAuditLogStaysAppendOnly(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.New(pool)
	ctx := context.Background()
	row := func(subject string) store.AuditEntry {
		return store.AuditEntry{Subject: subject, SubjectType: "user", Action: "update", EntityType: "project", Result: "success", HTTPStatus: 200}
	}
	// alice's row lands in the default partition and the upkeep moves it into this month's;
	// bob's goes there straight; carol's, five years ahead, stays in the default one.
	if err := st.RecordAudit(ctx, row("alice")); err != nil {
		t.Fatal(err)
	}
	if err := st.KeepAuditPartitions(ctx, time.Now(), store.DefaultAuditRetention); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordAudit(ctx, row("bob")); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO audit_log (at, subject, subject_type, action, entity_type, result)
		VALUES (now() + interval '5 years', 'carol', 'user', 'update', 'project', 'success')`); err != nil {
		t.Fatal(err)
	}
	this := monthPartition(time.Now())
	for _, statement := range []string{
		`UPDATE audit_log SET subject = 'mallory'`,
		`DELETE FROM audit_log`,
		`TRUNCATE audit_log`,
		`UPDATE ` + this + ` SET subject = 'mallory'`,
		`DELETE FROM ` + this,
		`UPDATE audit_log_default SET subject = 'mallory'`,
		`DELETE FROM audit_log_default`,
	} {
		_, err := pool.Exec(ctx, statement)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only refusal", statement, err)
		}
	}
	if d := cmp.Diff([]string{"alice", "bob", "carol"}, auditSubjects(t, pool, "audit_log")); d != "" {
		t.Errorf("rows after the refused statements (-want +got):\n%s", d)
	}
}
