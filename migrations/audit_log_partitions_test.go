package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/migrations"
)

// auditRow is what a migration of the audit log must keep of each row.
type auditRow struct {
	ID      int64
	At      time.Time
	Subject string
	Action  string
}

func auditRowsOf(t *testing.T, conn *pgx.Conn) []auditRow {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT id, at, subject, action FROM audit_log ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[auditRow])
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// relkindOf is how PostgreSQL keeps the audit log: 'p' partitioned, 'r' a plain table.
func relkindOf(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var kind string
	if err := conn.QueryRow(context.Background(), `SELECT relkind::text FROM pg_class WHERE oid = 'audit_log'::regclass`).Scan(&kind); err != nil {
		t.Fatal(err)
	}
	return kind
}

// TestAuditLogPartitioning_UpAndDownKeepEveryRow: the migration that partitions the audit log
// by month keeps every row (old months included) with its id, its down step brings the rows
// back into a plain table, and up again partitions them again; new rows carry on the ids.
func TestAuditLogPartitioning_UpAndDownKeepEveryRow(t *testing.T) {
	t.Parallel()
	const partitioned = 14
	dbURL := testdb.NewURL(t)
	if err := migrations.To(dbURL, partitioned-1); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		INSERT INTO audit_log (at, subject, subject_type, action, entity_type, result) VALUES
			(now() - interval '500 days', 'alice', 'user', 'create', 'project', 'success'),
			(now() - interval '40 days', 'bob', 'user', 'update', 'project', 'success'),
			(now(), 'carol', 'user', 'delete', 'project', 'success')`); err != nil {
		t.Fatal(err)
	}
	before := auditRowsOf(t, conn)

	if err := migrations.To(dbURL, partitioned); err != nil {
		t.Fatal(err)
	}
	if kind := relkindOf(t, conn); kind != "p" {
		t.Errorf("after up the audit log is of kind %q, want p (partitioned)", kind)
	}
	if d := cmp.Diff(before, auditRowsOf(t, conn)); d != "" {
		t.Errorf("up changed the rows (-before +after):\n%s", d)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO audit_log (subject, subject_type, action, entity_type, result) VALUES ('dave', 'user', 'create', 'project', 'success')`); err != nil {
		t.Fatal(err)
	}
	withNew := auditRowsOf(t, conn)
	if last := withNew[len(withNew)-1]; last.Subject != "dave" || last.ID <= before[len(before)-1].ID {
		t.Errorf("the row inserted after up = %+v; want dave's, with an id after %d", last, before[len(before)-1].ID)
	}

	if err := migrations.To(dbURL, partitioned-1); err != nil {
		t.Fatal(err)
	}
	if kind := relkindOf(t, conn); kind != "r" {
		t.Errorf("after down the audit log is of kind %q, want r (a plain table)", kind)
	}
	if d := cmp.Diff(withNew, auditRowsOf(t, conn)); d != "" {
		t.Errorf("down changed the rows (-before +after):\n%s", d)
	}
	if err := migrations.To(dbURL, partitioned); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(withNew, auditRowsOf(t, conn)); d != "" {
		t.Errorf("up again changed the rows (-before +after):\n%s", d)
	}
}
