package migrations_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/migrations"
)

// migrator runs this directory's migrations on the database at dbURL one version at a time
// (the package runs them only all the way up or down).
func migrator(t *testing.T, dbURL string) *migrate.Migrate {
	t.Helper()
	src, err := iofs.New(os.DirFS("."), ".")
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, "pgx5"+strings.TrimPrefix(strings.TrimPrefix(dbURL, "postgresql"), "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestWorkloadRecordsWithoutProjectIDGetTheProjectThatHeldTheirName: records written before
// workloads carried their project's id are given the id of the project that has their name,
// unless that project was made after the workload was queued (a project given a deleted or
// renamed one's name later is not theirs); those stay without a project id.
func TestWorkloadRecordsWithoutProjectIDGetTheProjectThatHeldTheirName(t *testing.T) {
	t.Parallel()
	s := newSchemaAt(t, 13)
	m, ctx, conn := s.m, s.ctx, s.conn
	exec := func(sql string, args ...any) {
		t.Helper()
		s.exec(t, sql, args...)
	}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 9, 0, 0, 0, time.UTC) }
	exec(`INSERT INTO departments (id, name) VALUES ('00000000-0000-0000-0000-0000000000d1', 'research')`)
	exec(`INSERT INTO projects (id, name, department_id, created_at) VALUES
		('00000000-0000-0000-0000-0000000000a1', 'alpha', '00000000-0000-0000-0000-0000000000d1', $1),
		('00000000-0000-0000-0000-0000000000b2', 'beta', '00000000-0000-0000-0000-0000000000d1', $2)`, day(1), day(10))
	exec(`INSERT INTO workloads (uid, namespace, name, kind, project_id, project_name, phase, queued_at) VALUES
		('alphas', 'team-alpha', 'alphas', 'Job', NULL, 'alpha', 'Running', $1),
		('before-beta', 'team-beta', 'before-beta', 'Job', NULL, 'beta', 'Completed', $1),
		('betas', 'team-beta', 'betas', 'Job', NULL, 'beta', 'Pending', $2),
		('submitted', 'team-alpha', 'submitted', 'Job', '00000000-0000-0000-0000-0000000000c3', 'alpha', 'Pending', $2),
		('no-project', 'scratch', 'no-project', 'Job', NULL, '', 'Pending', $2)`, day(5), day(11))

	if err := m.Migrate(migrations.Latest()); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT uid, coalesce(project_id::text, '') FROM workloads ORDER BY uid`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var uid, project string
		if err := rows.Scan(&uid, &project); err != nil {
			t.Fatal(err)
		}
		got[uid] = project
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"alphas":      "00000000-0000-0000-0000-0000000000a1",
		"before-beta": "", // queued before the beta there is now was made
		"betas":       "00000000-0000-0000-0000-0000000000b2",
		"submitted":   "00000000-0000-0000-0000-0000000000c3", // an id it has is kept
		"no-project":  "",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("project ids after the migration (-want +got):\n%s", d)
	}
}
